"""Level rewards through the generic audit: judged steps in the user's items, no judge, no
shipped benchmark; the range gate uses the level mapping's ceiling."""

from __future__ import annotations

import json

import pytest

from rewardkit.audit.data import read_golden, read_items, read_spike_pairs
from rewardkit.audit.level_items import LevelItemReward, recipe_a, recipe_b
from rewardkit.audit.userreward import UserReward, load_reward
from rewardkit.audit.validate_reward import validate_reward
from rewardkit.levels import LevelMapping


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def data(tmp_path):
    items = [{"id": f"t{k}", "levels": [3] * (4 + k % 5) + [k % 4] * (k % 3)} for k in range(20)]
    items.append({"id": "masked", "levels": [-1, -1]})
    clean = [3] * 12
    pairs = [
        {
            "id": f"p{k}",
            "clean": {"levels": clean},
            "corrupted": {"levels": [*clean, 0]},
            "min_drop": 0.30,
        }
        for k in range(3)
    ]
    r = recipe_b()
    golden = [
        {"id": "g1", "levels": clean, "expected": r({"levels": clean})},
        {"id": "g2", "levels": [*clean, 0], "expected": r({"levels": [*clean, 0]})},
        {"id": "g3", "levels": [-1], "expected": None},
    ]
    # the frozen values against the seed's formula (recipe B: mean · γ after an L0)
    assert golden[0]["expected"] == pytest.approx(0.85)
    assert golden[1]["expected"] == pytest.approx(0.85 * 12 / 13 * 0.30)
    return {
        "items": read_items(_write(tmp_path / "steps.jsonl", items)),
        "pairs": read_spike_pairs(_write(tmp_path / "spike.jsonl", pairs)),
        "golden": read_golden(_write(tmp_path / "golden.jsonl", golden)),
    }


def test_recipe_b_passes_range_determinism_spike_in_golden(data):
    v = validate_reward(load_reward("rewardkit.audit.level_items:recipe_b"), **data)
    status = {g.name: g.status for g in v.gates}
    assert status == {
        "range": "pass",
        "determinism": "pass",
        "spike_in": "pass",
        "ablations": "not run",
        "golden": "pass",
    }
    assert v.gate("range").evidence["declared_range"] == (0.0, 0.85)
    assert v.gate("range").evidence["n_none"] == 1  # the all −1 item cannot be scored


def test_recipe_a_fails_the_spike_in_anchor(data):
    # no hard penalty: one L0 among 13 steps drops 0.85/13 = 0.065 < 0.30 (seed 000 §5)
    g = validate_reward(load_reward("rewardkit.audit.level_items:recipe_a"), **data)
    assert g.gate("spike_in").status == "fail" and "drop +0.06538" in g.gate("spike_in").summary
    assert recipe_a().range == (0.0, 0.85)


def test_the_ceiling_is_the_mappings_option(data):
    high = LevelMapping({0: 0.0, 1: 0.3, 2: 0.6, 3: 0.95}, ceiling=0.95)
    ok = UserReward(LevelItemReward(mapping=high), spec=None)
    assert validate_reward(ok, items=data["items"]).gate("range").status == "pass"

    class Misdeclared(LevelItemReward):  # claims the seed's ceiling, maps above it
        @property
        def range(self):
            return (0.0, 0.85)

    bad = UserReward(Misdeclared(mapping=high), spec=None)
    g = validate_reward(bad, items=data["items"]).gate("range")
    assert g.status == "fail" and "reward 0.95 outside the declared range [0, 0.85]" in g.summary


def test_items_without_levels_name_the_field(tmp_path):
    items = read_items(_write(tmp_path / "bad.jsonl", [{"id": "x", "levels": "33"}]))
    g = validate_reward(UserReward(recipe_b()), items=items).gate("range")
    assert "bad.jsonl, line 1 (id 'x'): the reward raised InputError: field 'levels'" in g.summary
