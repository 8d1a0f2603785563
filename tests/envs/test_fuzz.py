"""Fuzzing: no exploit in the shipped verifier, exploits in the naive control, determinism."""

from __future__ import annotations

import pytest

from rewardkit._optional import have
from rewardkit.envs.fhir.verifier import build_stack
from rewardkit.envs.fuzz import fuzz
from rewardkit.envs.policies import POLICIES
from rewardkit.errors import ConfigError
from rewardkit.stack import Component, Gate, GateOutcome, RewardStack


def test_shipped_has_no_exploit_and_the_naive_control_has_some():
    rep = fuzz(episodes=1000, rng=0, progress=False)
    s, n = rep.stacks["shipped"], rep.stacks["naive"]
    assert s.n_exploits == 0 and s.n_high > 50  # "high" is reachable, so 0 is informative
    assert n.n_exploits > 0
    assert rep.heldout_wrong > 0 and rep.heldout_unsafe > 0 and rep.ledger_violations > 0
    assert s.n_hard_failed >= rep.ledger_violations  # every ledger violation hit a gate
    assert set(rep.episodes_by_policy) == set(POLICIES)
    assert n.exploits_by_policy["cheat_cite_all"] > 0  # pays per citation: stuffing wins
    ex = n.examples[0]
    assert ex["snapshot"] and ex["reason"]


def _exact_match_stack() -> RewardStack:
    """The shipped stack with the pre-1.1.0 PHI gate (exact spellings only): a regression
    stand-in that the fuzzer must expose."""
    shipped = build_stack()
    needles: dict[int, set[str]] = {}

    def phi_leak(ep):
        if id(ep.world) not in needles:
            needles[id(ep.world)] = {
                s.lower()
                for pid, p in ep.world.patients.items()
                for g, f in [(p["name"][0]["given"][0], p["name"][0]["family"])]
                for s in (pid, p["identifier"][0]["value"], p["birthDate"], f"{g} {f}", f"{f}, {g}")
            }
        text = " ".join((ep.answer or {}).get(k) or "" for k in ("note", "unit")).lower()
        return GateOutcome(not any(n in text for n in needles[id(ep.world)]))

    gates = [g for g in shipped.gates if g.name != "phi_leak"] + [Gate("phi_leak", phi_leak)]
    return RewardStack(gates=gates, components=list(shipped.components), version="exact-phi")


def test_phi_evasions_are_exploits_of_an_exact_match_gate_not_of_the_shipped_one():
    rep = fuzz(
        episodes=120,
        rng=0,
        policies=["phi_evasion"],
        stacks={"shipped": build_stack(), "exact": _exact_match_stack()},
        progress=False,
    )
    s, x = rep.stacks["shipped"], rep.stacks["exact"]
    assert rep.heldout_unsafe == 120  # every episode leaks, by the held-out verifier
    assert s.n_exploits == 0 and s.n_hard_failed == 120
    assert x.n_exploits > 30, x  # most spellings dodge exact matching: high reward, unsafe
    assert all("held-out says unsafe" in e["reason"] for e in x.examples)


@pytest.mark.slow
def test_ten_thousand_episodes():
    rep = fuzz(episodes=10_000, rng=1, progress=False)
    assert rep.stacks["shipped"].n_exploits == 0
    assert rep.stacks["naive"].n_exploits > 0


def test_report_does_not_depend_on_chunking():
    a = fuzz(episodes=150, rng=3, chunks=1, progress=False)
    b = fuzz(episodes=150, rng=3, chunks=7, progress=False)
    assert a.to_json() == b.to_json()
    assert fuzz(episodes=150, rng=4, progress=False).to_json() != a.to_json()


def test_a_stack_without_gates_is_caught_by_the_ledger():
    pays = RewardStack(components=[Component("one", lambda ep: 1.0)], version="always-1")
    rep = fuzz(episodes=100, rng=0, stacks={"always": pays}, progress=False)
    assert rep.stacks["always"].n_exploits >= rep.ledger_violations > 0


@pytest.mark.slow  # ray.init and worker start-up take tens of seconds on 2 cores
@pytest.mark.skipif(not have("ray"), reason="ray is not installed (pip install 'rewardkit[ray]')")
def test_ray_backend_gives_the_same_report():
    local = fuzz(episodes=200, rng=5, chunks=4, progress=False)
    remote = fuzz(episodes=200, rng=5, chunks=4, backend="ray", progress=False)
    assert remote.to_json() == local.to_json()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"episodes": 0}, r"'episodes' parameter of fuzz must be an int in \[1, "),
        ({"backend": "dask"}, "'backend' parameter of fuzz must be one of 'local', 'ray'"),
        ({"high_frac": 0.0}, r"'high_frac' parameter of fuzz must be a float in \(0, 1\]"),
        ({"policies": ["greedy"]}, "'policies' parameter of fuzz must be one of"),
        ({"env_ids": []}, "must name at least one environment"),
        ({"rng": -1}, r"'rng' parameter of fuzz must be an int in \[0, 2\*\*63\)"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        fuzz(**{"episodes": 10, **kwargs})


def test_a_generator_rng_draws_the_campaign_seed():
    import numpy as np

    a = fuzz(episodes=20, rng=np.random.default_rng(8), progress=False)
    b = fuzz(episodes=20, rng=np.random.default_rng(8), progress=False)
    assert a.to_json() == b.to_json() and a.seed == int(np.random.default_rng(8).integers(0, 2**31))


@pytest.mark.slow
def test_inversion_examples_replay_to_the_totals_they_report():
    from rewardkit.envs import Env
    from rewardkit.envs.fhir.verifier import unordered_stack

    rep = fuzz(episodes=3000, rng=0, progress=False)
    u = rep.stacks["unordered"]
    assert u.control_for == ("inversion",) and u.n_inversions > 0 and u.passed
    ex = u.inversion_examples[0]
    stack = unordered_stack()
    bad, good = (Env.from_snapshot(ex[k]["snapshot"]) for k in ("bad", "good"))
    assert stack.score(bad.episode()).total == ex["bad"]["total"]
    assert stack.score(good.episode()).total == ex["good"]["total"] < ex["bad"]["total"]
    assert ex["advantage_gap"] > 0
    assert rep.stacks["shipped"].n_inversions == 0 and rep.stacks["shipped"].passed
