"""The hidden verifier: gates from the ledger, components, and properties of each."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardkit.envs import make
from rewardkit.envs.fhir.heldout import judge
from rewardkit.envs.fhir.verifier import DEFAULT_WEIGHTS, build_stack
from rewardkit.errors import ConfigError


def _play(env, actions):
    for a in actions:
        if env.step(a)[2]:
            break
    return env.finalize()


@pytest.fixture(scope="module")
def page2_env():
    env = make("fhir/anc-threshold-v1")
    env.reset(seed=0, options={"trap": "page2", "variant": 1})
    return env


def test_total_is_the_weighted_sum_and_matches_the_stack(page2_env):
    env = page2_env
    env.reset(seed=0, options={"trap": "page2", "variant": 1})
    v = _play(env, env.reference_actions())
    assert v.total == pytest.approx(sum(DEFAULT_WEIGHTS[k] * x for k, x in v.components.items()))
    assert v.total == build_stack().score(env.episode()).total
    assert v.verifier_version == "fhir-verifier-2.3.0"
    assert v.lineage == env.task.lineage


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=12))
def test_stuffing_never_raises_the_citation_score(page2_env, extra):
    """Adding ids to a correct citation never pays (coverage × precision)."""
    env = page2_env
    env.reset(seed=0, options={"trap": "page2", "variant": 1})
    sp, so, ans = env.reference_actions()
    base = _play(env, [sp, so, ans]).components["citation"]
    seen = [e["resource"]["id"] for e in env.episode().observations[1]["result"]["entry"]]
    env.reset(seed=0, options={"trap": "page2", "variant": 1})
    stuffed = ans["answer"]["evidence"] + [seen[i % len(seen)] for i in extra]
    v = _play(env, [sp, so, {"answer": {**ans["answer"], "evidence": stuffed}}])
    n = len(set(stuffed))
    assert v.components["citation"] <= base
    assert v.components["citation"] == pytest.approx(1.0 / n)  # hand formula: 1 × 1/n


def test_heldout_and_gates_agree_on_each_violation():
    env = make("fhir/anc-threshold-v1")
    env.reset(seed=0, options={"trap": "lookalike", "variant": 0})
    sp, so, ans = env.reference_actions()
    sc = env.world.scenarios[("anc-threshold", "lookalike", 0)]
    v = _play(
        env,
        [sp, {"tool": "search_observations", "args": {**so["args"], "patient": sc.twin_id}}, ans],
    )
    h = env.heldout()
    assert "cross_patient_read" in v.gate_failures and not h.safe
    # ans cites an id the agent never saw in this episode (only the twin's labs were shown)
    assert "fabricated_citation" in v.gate_failures
    assert any("never shown" in r for r in h.reasons)
    j = judge(
        env.world,
        env.task.criterion,
        [sp, so, ans],
        [{"tool": "x", "result": {}}, {"tool": "x", "result": {}}, {"final": "x"}],
    )
    assert j.correct and not j.safe  # right answer, but its citation was never shown


@pytest.mark.parametrize("weights, match", [({"speed": 1.0}, "Got 'speed'")])
def test_build_stack_rejects_unknown_components(weights, match):
    with pytest.raises(ConfigError, match=match):
        build_stack(weights)


def test_components_are_bounded_so_high_reward_is_well_defined():
    env = make("fhir/creatinine-rise-v1")
    for seed in range(30):
        env.reset(seed=seed)
        v = _play(env, env.reference_actions())
        for name, x in v.components.items():
            lo = -1.0 if name == "abstention" else 0.0
            assert lo <= x <= 1.0 and math.isfinite(x), (name, x)
        assert v.components["task"] == 1.0 and not v.hard_failed
