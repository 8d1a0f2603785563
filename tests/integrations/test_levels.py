"""levels_stack: step judgments read from an episode field, scored with score_trajectory."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardkit.errors import ConfigError
from rewardkit.integrations.levels import levels_stack
from rewardkit.levels import LevelMapping, score_trajectory


def test_seed_worked_numbers() -> None:
    s = levels_stack()
    clean = s.score({"step_levels": [3] * 12})
    spiked = s.score({"step_levels": [3] * 12 + [0]})
    assert clean.total == pytest.approx(0.85)
    assert spiked.total == pytest.approx(12 / 13 * 0.85 * 0.30)  # 0.235385 (seed 000 §5)
    assert clean.total - spiked.total == pytest.approx(0.614615, abs=1e-6)
    assert spiked.components["has_l0"] == 1.0 and clean.components["has_l0"] == 0.0
    a = levels_stack(recipe="A").score({"step_levels": [3] * 12 + [0]})
    assert a.total == pytest.approx(12 / 13 * 0.85)


def test_masked_steps_and_sessions() -> None:
    s = levels_stack(column="j", session=True)
    r = s.score({"j": [{"level": 3, "review": "final"}, {"level": 0, "review": "provisional"}]})
    assert r.total == pytest.approx(0.85)  # the provisional L0 is masked, not penalised
    assert r.components["frac_masked"] == pytest.approx(0.5)
    r = s.score({"j": [-1, -1]})
    assert r.total is None and set(r.excluded) == {"trajectory", "has_l0"}


def test_malformed_judgments_are_recorded_not_raised() -> None:
    s = levels_stack()
    r = s.score({"other": [3]})
    assert r.total is None and "step_levels" in r.errors["trajectory"]
    r = s.score({"step_levels": [3, "x"]})
    assert r.total is None and "trajectory" in r.errors


def test_version_names_the_recipe_and_mapping() -> None:
    m = LevelMapping({0: 0.0, 1: 0.5, 2: 0.7, 3: 0.9}, ceiling=0.9)
    a, b = levels_stack(recipe="B"), levels_stack(recipe="B", mapping=m)
    assert a.version.startswith("levels-B-gamma0.3-all_final-")
    assert a.version != b.version and a.config_hash != b.config_hash


def test_bad_parameters_name_themselves() -> None:
    with pytest.raises(ConfigError, match=r"'recipe' parameter of levels_stack"):
        levels_stack(recipe="D")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"'gamma' parameter of levels_stack must be"):
        levels_stack(gamma=1.5)
    with pytest.raises(ConfigError, match=r"'column' parameter of levels_stack"):
        levels_stack(column="")
    with pytest.raises(ConfigError, match=r"'mapping' parameter of levels_stack"):
        levels_stack(mapping={3: 0.85})  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"'session' parameter of levels_stack"):
        levels_stack(session=1)  # type: ignore[arg-type]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(-1, 3), min_size=1, max_size=20),
    st.sampled_from(["A", "B", "C"]),
)
def test_total_is_score_trajectory(levels: list[int], recipe: str) -> None:
    expected = score_trajectory(levels, recipe=recipe).value  # type: ignore[arg-type]
    got = levels_stack(recipe=recipe).score({"step_levels": levels}).total  # type: ignore[arg-type]
    assert got == expected


def test_one_episode_is_scored_once_for_all_three_components(monkeypatch):
    import rewardkit.integrations.levels as mod

    calls = []
    real = mod.score_trajectory
    monkeypatch.setattr(mod, "score_trajectory", lambda *a, **k: calls.append(1) or real(*a, **k))
    s = levels_stack()
    r = s.score({"step_levels": [3, 0]})
    assert len(calls) == 1 and r.components["has_l0"] == 1.0
    s.score({"step_levels": [3, 0]})  # a new episode object is scored again
    assert len(calls) == 2
