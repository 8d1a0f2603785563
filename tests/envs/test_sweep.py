"""Weight sweeps: the linear shortcut equals RewardStack, a behaviour switch, the front."""

from __future__ import annotations

import pytest

from rewardkit.envs import make
from rewardkit.envs.fhir.verifier import DEFAULT_WEIGHTS, build_stack
from rewardkit.envs.sweep import BEHAVIOURS, _episodes, _totals, plot_pareto, sweep
from rewardkit.errors import ConfigError


@pytest.fixture(scope="module")
def result():
    return sweep(env_ids=["fhir/anc-threshold-v1", "fhir/potassium-latest-v1"], variants=1)


def test_there_is_a_behaviour_switch(result):
    assert result.default_choice == "concise"
    assert result.switches, result.preferred
    cost = [s for s in result.switches if s["component"] == "cost"]
    assert (
        cost and cost[0]["from"] == "concise" and cost[0]["to"] in ("never_call", "always_unknown")
    )


def test_front_is_non_dominated(result):
    pts = {b: (result.cost_spent[b], result.success[b]) for b in result.behaviours}
    for a in result.pareto:
        assert not any(
            pts[b][0] <= pts[a][0] and pts[b][1] >= pts[a][1] and pts[b] != pts[a] for b in pts
        )
    assert "over_call" not in result.pareto  # same success as concise at a higher cost
    assert "concise" in result.pareto


def test_linear_shortcut_equals_reward_stack():
    data = _episodes(["fhir/anc-threshold-v1"], 1)
    for weights in ({**DEFAULT_WEIGHTS, "cost": 8.0}, {**DEFAULT_WEIGHTS, "task": 0.0}):
        totals = _totals(data, weights)
        stack = build_stack(weights)
        env = make("fhir/anc-threshold-v1")
        for name, behaviour in BEHAVIOURS.items():
            got = []
            for trap in (
                "none",
                "page2",
                "amended",
                "entered_in_error",
                "unit_variant",
                "lookalike",
                "missing",
            ):
                env.reset(seed=0, options={"trap": trap, "variant": 0})
                for a in behaviour(env):
                    if env.step(a)[2]:
                        break
                got.append(stack.score(env.episode()).total)
            assert totals[name] == pytest.approx(sum(got) / len(got), abs=1e-12)


def test_plot_is_a_png(result, tmp_path):
    pytest.importorskip("matplotlib")
    p = plot_pareto(result, tmp_path / "p.png")
    assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"grid": [1.0]}, "at least two weights"),
        ({"variants": 0}, "must be an int >= 1"),
        ({"grid": [0, float("nan")]}, "'grid' parameter of sweep must be a float"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        sweep(**kwargs)


def test_no_single_weight_makes_always_unknown_preferred(result):
    """The abstention component penalises unknown-with-complete-evidence, so no non-negative
    weighting in the grid tips the policy into always answering unknown."""
    chosen = {b for row in result.preferred.values() for b in row}
    assert "always_unknown" not in chosen and "look_then_unknown" not in chosen
    assert result.mean_components["always_unknown"]["abstention"] < 0
