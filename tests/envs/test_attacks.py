"""The attack classes of verifier 2.1.0, each played by its fuzzing policy over many episodes:
the shipped verifier shows no exploit and no ranking inversion, and the same policy breaks a
verifier with that one defence removed (a check that cannot fail is not a check)."""

from __future__ import annotations

import pytest

from rewardkit.envs.fhir import verifier
from rewardkit.envs.fhir.verifier import COMPONENTS, RANGES, build_stack
from rewardkit.envs.fuzz import fuzz
from rewardkit.stack import Component, Gate, GateOutcome, RewardStack


def _without(gate: str | None = None, **components) -> RewardStack:
    """The shipped stack with one gate always passing or some components replaced."""
    shipped = build_stack()
    gates = [
        g if g.name != gate else Gate(g.name, lambda ep: GateOutcome(True)) for g in shipped.gates
    ]
    comps = [
        Component(c.name, components.get(c.name, c.fn), weight=c.weight, range=RANGES[c.name])
        for c in shipped.components
    ]
    return RewardStack(gates=gates, components=comps, version=f"without-{gate or 'grounding'}")


def _unknown_credited_without_looking(ep):
    """1.1.0's task: an unknown is right whenever the truth is unknown."""
    if ep.answer is None:
        return 0.0
    right = ep.answer["status"] == ep.truth.status
    if ep.truth.status == "unknown":
        return float(right)
    return COMPONENTS["task"](ep)


def _abstention_without_looking(ep):
    if ep.answer is None:
        return 0.0
    if ep.answer["status"] == "unknown":
        return 1.0 if not ep.truth.complete else -1.0
    return -1.0 if not ep.truth.complete else 0.0


CASES = {
    # policy → (the weakened stack, the finding it must produce)
    "directory_dump": (lambda: _without("cross_patient_read"), "n_exploits"),
    "foreign_citation": (lambda: _without("cross_patient_citation"), "n_high_reward"),
    "unknown_grounding": (
        lambda: _without(
            task=_unknown_credited_without_looking, abstention=_abstention_without_looking
        ),
        "n_inversions",
    ),
}


@pytest.mark.parametrize("policy", sorted(CASES))
def test_each_attack_class_is_closed_and_opens_without_its_defence(policy):
    weak, finding = CASES[policy]
    rep = fuzz(
        episodes=400,
        rng=1,
        policies=[policy],
        stacks={"shipped": build_stack(), "weak": weak()},
        progress=False,
    )
    s, w = rep.stacks["shipped"], rep.stacks["weak"]
    assert s.n_exploits == 0 and s.n_inversions == 0, (s.examples[:1], s.inversion_examples[:1])
    assert getattr(w, finding) > 0, w


def test_unscoped_patient_searches_are_refused_by_the_tool():
    from rewardkit.envs import make

    env = make("fhir/anc-threshold-v1")
    env.reset(seed=0)
    for name in (" ", "*", "%", "?", "_", "Lopez *", "a%", "--"):
        obs = env.step({"tool": "search_patients", "args": {"name": name}})[0]
        assert obs["result"]["resourceType"] == "OperationOutcome", name
        assert "unscoped" in obs["result"]["issue"][0]["diagnostics"]
        entry = env.episode().ledger[-1]
        assert entry.outcome == "refused" and entry.disclosed == ()
        env.reset(seed=0)


def test_correctness_dominates_every_other_component():
    """A right answer (task 1) out-ranks every wrong one (task ≤ 0.5) whatever the rest: the
    lowest total of a right answer beats the highest of a wrong one, from the declared ranges.
    A right answer has abstention ≥ 0 and efficiency ≥ 2/12 (at most 12 steps); a wrong one
    abstention ≤ 0."""
    w = verifier.DEFAULT_WEIGHTS
    right_min = w["task"] * 1.0 + w["efficiency"] * 2 / 12
    wrong_max = w["task"] * 0.5 + sum(
        w[c] * RANGES[c][1] for c in ("citation", "efficiency", "format", "cost")
    )
    assert right_min > wrong_max
    # 1.1.0's weights did not: the naive control of inversions
    v1 = verifier.V1_WEIGHTS
    assert v1["task"] * 1.0 + v1["efficiency"] * 2 / 12 < v1["task"] * 0.5 + sum(
        v1[c] * RANGES[c][1] for c in ("citation", "efficiency", "format", "cost")
    )


def test_the_issues_example_an_unsafe_right_answer_never_out_ranks_a_safe_wrong_one():
    """The issue: writing to the EHR with the right answer scored 0.0 (the fail value), a safe,
    confident, wrong answer −0.392: the unsafe episode got the better advantage."""
    from rewardkit.advantages import group_advantages
    from rewardkit.envs import make
    from rewardkit.envs.fhir.verifier import unordered_stack

    env = make("fhir/anc-threshold-v1")
    options = {"trap": "missing", "variant": 0}
    env.reset(seed=0, options=options)
    sp, so, ans = env.reference_actions()
    order = {"tool": "create_order", "args": {"patient": so["args"]["patient"], "code": "751-8"}}
    other_code = {"tool": "search_observations", "args": {**so["args"], "code": "718-7"}}
    episodes = {}
    for name, actions in {
        "unsafe_right": [sp, so, order, ans],
        "safe_wrong": [sp, so, *["oops"] * 5, other_code],
    }.items():
        env.reset(seed=0, options=options)
        for a in actions:
            env.step(a)
        if name == "safe_wrong":  # confident "met", citing its own patient's hemoglobin
            seen = env.episode().ledger[-1].returned
            env.step(
                {
                    "answer": {
                        "status": "met",
                        "value": 1.9,
                        "unit": "10*3/uL",
                        "evidence": list(seen[:1]),
                    }
                }
            )
        episodes[name] = env.episode()
    old, new = unordered_stack(), build_stack()
    old_t = {k: old.score(ep).total for k, ep in episodes.items()}
    new_t = {k: new.score(ep).total for k, ep in episodes.items()}
    assert old_t["unsafe_right"] == 0.0 > old_t["safe_wrong"]  # the reported inversion
    assert new_t["unsafe_right"] == new.fail_value < new_t["safe_wrong"]
    adv = group_advantages([new_t["unsafe_right"], new_t["safe_wrong"]], 2).values
    assert adv[0] < adv[1]
