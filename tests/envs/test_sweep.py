"""Weight sweeps: the linear shortcut equals RewardStack, a behaviour switch, the front."""

from __future__ import annotations

import pytest

from rewardkit.envs import make
from rewardkit.envs.fhir.verifier import DEFAULT_WEIGHTS, build_stack
from rewardkit.envs.plots import plot_pareto
from rewardkit.envs.sweep import BEHAVIOURS, _episodes, _totals, sweep
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
        ({"grid": [1.0]}, "'grid' parameter of sweep must be a sequence of 2 or more values"),
        ({"variants": 0}, r"must be an int in \[1, "),
        (
            {"grid": [0, float("nan")]},
            "'grid' parameter of sweep must be a sequence .* each a finite float",
        ),
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


def test_a_component_without_score_is_excluded_and_counted_not_zero(monkeypatch):
    """A crashed component (and one that returns None) is left out of its mean and counted;
    an episode the verifier could not score is left out of the totals."""
    from rewardkit.envs.fhir import verifier

    def cost(ep):
        if ep.task.trap == "page2":
            raise RuntimeError("cost meter down")
        return verifier.cost(ep)

    def efficiency(ep):
        return None if ep.task.trap == "amended" else verifier.efficiency(ep)

    monkeypatch.setitem(verifier.COMPONENTS, "cost", cost)
    monkeypatch.setitem(verifier.COMPONENTS, "efficiency", efficiency)
    res = sweep(env_ids=["fhir/anc-threshold-v1"], variants=1)  # 7 tasks: one per trap
    assert res.excluded["concise"] == {
        "task": 0,
        "citation": 0,
        "abstention": 0,
        "efficiency": 1,
        "format": 0,
        "cost": 1,
    }
    assert res.unscored["concise"] == 1  # the crash makes that episode's total None
    # the concise path costs 2 of 8 on every task: 0.75, not 6 × 0.75 / 7 with a fake 0
    assert res.mean_components["concise"]["cost"] == pytest.approx(0.75)
    assert res.mean_components["concise"]["efficiency"] == pytest.approx(1.0)

    data = _episodes(["fhir/anc-threshold-v1"], 1)
    totals = _totals(data, dict(DEFAULT_WEIGHTS))
    env, stack = make("fhir/anc-threshold-v1"), build_stack()
    got = []
    for trap in ("none", "page2", "amended", "entered_in_error", "unit_variant", "lookalike"):
        env.reset(seed=0, options={"trap": trap, "variant": 0})
        for a in BEHAVIOURS["concise"](env):
            env.step(a)
        got.append(stack.score(env.episode()).total)
    env.reset(seed=0, options={"trap": "missing", "variant": 0})
    for a in BEHAVIOURS["concise"](env):
        env.step(a)
    got.append(stack.score(env.episode()).total)
    scored = [t for t in got if t is not None]
    assert len(scored) == 6  # RewardStack: a crash → total None; a None component → left out
    assert totals["concise"] == pytest.approx(sum(scored) / len(scored), abs=1e-12)
