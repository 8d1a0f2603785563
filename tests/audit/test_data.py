"""Item, reward, golden and spike-in files: every error names file, line and field."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardkit.audit.data import (
    join,
    read_golden,
    read_items,
    read_rewards,
    read_spike_pairs,
)
from rewardkit.errors import InputError


def _write(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


@pytest.mark.parametrize(
    ("line", "match"),
    [
        ({"gold": 1}, "line 2, field 'id': missing"),
        ({"id": "", "gold": 1}, "line 2, field 'id': expected a non-empty string"),
        ({"id": True, "gold": 1}, "line 2, field 'id'"),
        ({"id": "a", "gold": 1}, "line 2, field 'id': duplicate id 'a' \\(first on line 1\\)"),
        ({"id": "b", "gold": "yes"}, "line 2, field 'gold': expected a finite number"),
        ({"id": "b"}, "line 2, field 'gold': missing"),
        ({"id": "b", "gold": True}, "line 2, field 'gold': gold mixes bool labels and numbers"),
        ({"id": "b", "gold": 1, "stratum": [1]}, "line 2, field 'stratum'"),
        ({"id": "b", "gold": 1, "group": {}}, "line 2, field 'group'"),
        ("{not json", "line 2: not valid JSON"),
    ],
)
def test_item_errors_name_file_line_field(tmp_path, line, match):
    f = _write(tmp_path / "gold.jsonl", [{"id": "a", "gold": 1.0}, line])
    with pytest.raises(InputError, match=f"gold.jsonl, {match}"):
        read_items(f, require_gold=True)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.booleans(), st.floats(-5, 5, allow_nan=False)),
            st.one_of(st.none(), st.text(min_size=1, max_size=4)),
            st.dictionaries(st.text("xyz", min_size=1, max_size=3), st.integers(), max_size=3),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_items_round_trip(tmp_path_factory, rows):
    kinds = {type(g) for g, _, _ in rows}
    if len(kinds) > 1:
        rows = [(float(g), s, f) for g, s, f in rows]
    recs = [
        {**f, "id": f"i{k}", "gold": g, **({"stratum": s} if s is not None else {})}
        for k, (g, s, f) in enumerate(rows)
    ]
    p = _write(tmp_path_factory.mktemp("d") / "i.jsonl", recs)
    items = read_items(p, require_gold=True)
    for it, rec in zip(items, recs):
        assert it.id == rec["id"] and it.gold == rec["gold"] and it.stratum == rec.get("stratum")
        assert "gold" not in it.reward_input()
        assert it.reward_input() == {k: v for k, v in rec.items() if k != "gold"}


def test_reward_records_plain_columns_and_adapter_logs(tmp_path):
    f = _write(
        tmp_path / "r.jsonl",
        [
            {"id": "a", "reward": 0.5, "exact": 1.0},
            {"id": "b", "reward": None, "components": {"exact": None}},
            {
                "id": "p:h",
                "reward": 1.0,
                "prompt_id": "p",
                "completion_hash": "h",
                "components": {"exact": 1.0},
                "gates": {"g": True},
                "masks": {"total": False},
            },
            {
                "id": "p:h",
                "reward": 1.0,
                "prompt_id": "p",
                "completion_hash": "h",
                "components": {"exact": 1.0},
                "gates": {"g": True},
                "masks": {"total": False},
            },
        ],
    )
    recs, repeats = read_rewards(f)
    assert [(r.id, r.reward, dict(r.components)) for r in recs] == [
        ("a", 0.5, {"exact": 1.0}),
        ("b", None, {"exact": None}),
        ("p:h", 1.0, {"exact": 1.0}),
    ]
    assert repeats == 1


@pytest.mark.parametrize(
    ("rows", "match"),
    [
        ([{"id": "a"}], "line 1, field 'reward': missing"),
        ([{"id": "a", "reward": "1"}], "line 1, field 'reward': expected a finite number"),
        ([{"id": "a", "reward": 1, "components": [1]}], "line 1, field 'components'"),
        ([{"id": "a", "reward": 1, "components": {"x": "1"}}], "field 'components.x'"),
        (
            [{"id": "a", "reward": 1}, {"id": "a", "reward": 0}],
            "line 2, field 'reward': id 'a' repeats line 1 with different values",
        ),
    ],
)
def test_reward_errors(tmp_path, rows, match):
    with pytest.raises(InputError, match=match):
        read_rewards(_write(tmp_path / "r.jsonl", rows))


def test_golden_and_spike_in_errors(tmp_path):
    g = _write(tmp_path / "g.jsonl", [{"id": "a", "x": 1}])
    with pytest.raises(InputError, match=r"g.jsonl, line 1, field 'expected': missing"):
        read_golden(g)
    g = _write(tmp_path / "g.jsonl", [{"id": "a", "expected": 1, "expected_components": 3}])
    with pytest.raises(InputError, match="field 'expected_components'"):
        read_golden(g)
    s = _write(tmp_path / "s.jsonl", [{"id": "a", "clean": {"x": 1}}])
    with pytest.raises(InputError, match=r"s.jsonl, line 1, field 'corrupted': missing"):
        read_spike_pairs(s)
    s = _write(tmp_path / "s.jsonl", [{"id": "a", "clean": {}, "corrupted": {}, "min_drop": -1}])
    with pytest.raises(InputError, match="field 'min_drop': expected a number >= 0"):
        read_spike_pairs(s)


def test_golden_hides_expected_from_the_reward(tmp_path):
    g = read_golden(_write(tmp_path / "g.jsonl", [{"id": "a", "x": 1, "expected": 0.5}]))
    assert g[0].item.reward_input() == {"id": "a", "x": 1} and g[0].expected == 0.5


def test_join_counts_and_no_overlap(tmp_path):
    items = read_items(_write(tmp_path / "i.jsonl", [{"id": k, "gold": 1} for k in "abc"]))
    recs, _ = read_rewards(_write(tmp_path / "r.jsonl", [{"id": k, "reward": 1} for k in "bcd"]))
    j = join(items, recs)
    assert [i.id for i in j.items] == ["b", "c"]
    assert (j.n_items_without_reward, j.n_rewards_without_item) == (1, 1)
    recs, _ = read_rewards(_write(tmp_path / "r.jsonl", [{"id": "z", "reward": 1}]))
    with pytest.raises(InputError, match="no item id matches a reward id"):
        join(items, recs)
