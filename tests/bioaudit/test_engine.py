"""The engine: levels −1..3 as SPEC §3 defines them, history semantics, injection candidates."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardkit.bioaudit import (
    INJECTION_CANDIDATES,
    PARADIGMS,
    Engine,
    Judgment,
    check_injection_candidates,
    load_rulepack,
)
from rewardkit.bioaudit.templates import full_template, substrate
from rewardkit.errors import ConfigError

ENGINE = Engine()


def test_paradigms_and_default_packs():
    assert PARADIGMS == ("deg", "pan", "scrna")
    assert set(ENGINE.packs) == set(PARADIGMS)
    assert ENGINE.hash.startswith("sha256:")
    assert Engine("scrna").packs.keys() == {"scrna"}


def test_unknown_action_is_minus_one():
    d = {"decision_id": "x", "action": "run_magic", "params": {}, "context": {"paradigm": "deg"}}
    j = ENGINE.audit_decision(d, [])
    assert j == Judgment(-1, (), "unknown action 'run_magic' for the deg pack")


@pytest.mark.parametrize("paradigm", PARADIGMS)
def test_missing_required_context_is_minus_one(paradigm):
    pack = load_rulepack(paradigm)
    checked = 0
    for i, d in enumerate(full_template(paradigm)):
        needed = {k for r in pack.rules_for(d["action"]) for k in r.required_context}
        for key in sorted(needed):
            broken = copy.deepcopy(d)
            del broken["context"][key]
            j = ENGINE.audit_decision(broken, full_template(paradigm)[:i])
            assert j.level == -1, (d["action"], key)
            assert key in j.rationale and j.rule_ids
            checked += 1
    assert checked >= 3


def test_injection_candidate_without_required_context_is_minus_one():
    cand = copy.deepcopy(INJECTION_CANDIDATES["scrna"][0])
    assert cand["action"] == "no_doublet_detection"
    del cand["context"]["platform"]
    j = ENGINE.audit_decision(cand, substrate("scrna"))
    assert j.level == -1 and "platform" in j.rationale


def test_paradigm_resolution():
    d = copy.deepcopy(substrate("deg")[-1])
    del d["context"]["paradigm"]
    assert ENGINE.audit_decision(d, []).level == -1  # several packs, no paradigm
    assert ENGINE.audit_decision(d, [], paradigm="deg").level >= 0
    assert Engine("deg").audit_decision(d, []).level >= 0  # a single pack needs none
    d["context"]["paradigm"] = "proteomics"
    assert ENGINE.audit_decision(d, []).level == -1


def test_level_is_minimum_over_violated_rules():
    d = copy.deepcopy(substrate("deg")[6])
    assert d["action"] == "de_test"
    d["context"]["n_replicates_per_group"] = 2  # L2
    d["params"]["method"] = "t_test"  # L1
    j = ENGINE.audit_decision(d, substrate("deg")[:6])
    assert j.level == 1
    assert j.rule_ids == ("deg.test.wrong_for_counts", "deg.replicates.low")
    d["params"].update(method="DESeq2_wald", input="normalized")  # L0
    assert ENGINE.audit_decision(d, substrate("deg")[:6]).level == 0


def test_audit_uses_earlier_decisions_only():
    traj = substrate("scrna")
    # a history rule: dimensionality reduction after normalisation → fine; without → L0
    i = next(k for k, d in enumerate(traj) if d["action"] == "dimensionality_reduction")
    assert ENGINE.audit(traj)[i].level == 3
    moved = traj[:i] + traj[i + 1 :]
    norm = next(k for k, d in enumerate(moved) if d["action"] == "normalization")
    # put dimensionality reduction *before* normalisation: the later normalisation does not count
    reordered = [*moved[:norm], traj[i], *moved[norm:]]
    j = ENGINE.audit(reordered)[norm]
    assert j.level == 0 and j.rule_ids == ("scrna.norm.skipped",)


@pytest.mark.parametrize("paradigm", PARADIGMS)
def test_substrates_are_twelve_level_3_steps(paradigm):
    assert ENGINE.levels(substrate(paradigm)) == (3,) * 12


def test_injection_candidates_self_check():
    levels = check_injection_candidates(ENGINE)
    assert set(levels) == set(PARADIGMS)
    for p, cands in INJECTION_CANDIDATES.items():
        assert len(cands) >= 1 and levels[p] == (0,) * len(cands)
        for c in cands:
            assert c["context"]["paradigm"] == p
            needed = {k for r in ENGINE.packs[p].rules_for(c["action"]) for k in r.required_context}
            assert needed <= set(c["context"])
    assert INJECTION_CANDIDATES["scrna"][0]["action"] == "no_doublet_detection"


def test_bad_engine_arguments():
    with pytest.raises(ConfigError, match=r"The 'rulepack' parameter of Engine must be"):
        Engine(42)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"two packs for paradigm 'deg'"):
        Engine(["deg", "deg"])
    with pytest.raises(ConfigError, match=r"'trajectory' parameter of Engine\.audit"):
        ENGINE.audit({"action": "x"})  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"'decision' parameter of Engine\.audit_decision"):
        ENGINE.audit_decision("qc_filter", [])  # type: ignore[arg-type]


actions = st.sampled_from([*sorted({a for p in PARADIGMS for a in ENGINE.packs[p].actions}), "zz"])
values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 50),
    st.floats(-1, 100),
    st.sampled_from(["none", "cell", "droplet", "pvalue", "OS", "normalized"]),
)
keys = st.sampled_from(
    [
        "method",
        "unit",
        "input",
        "alpha",
        "n_comps",
        "platform",
        "n_cells",
        "n_batches",
        "n_cohorts",
        "use",
        "paired",
        "n_replicates_per_group",
    ]
)
decisions = st.builds(
    lambda i, a, p, c, par: {
        "decision_id": f"d{i}",
        "action": a,
        "params": p,
        "context": {**c, "paradigm": par},
    },
    st.integers(0, 99),
    actions,
    st.dictionaries(keys, values, max_size=4),
    st.dictionaries(keys, values, max_size=4),
    st.sampled_from(PARADIGMS),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(decisions, max_size=8))
def test_audit_is_total_deterministic_and_prefix_stable(traj):
    js = ENGINE.audit(traj)
    assert len(js) == len(traj)
    assert all(-1 <= j.level <= 3 for j in js)
    assert all((j.level == 3) == (j.rule_ids == ()) for j in js if j.level >= 0)
    assert ENGINE.audit(copy.deepcopy(traj)) == js
    # a decision's judgment depends on it and the decisions before it only
    for k in range(len(traj)):
        assert ENGINE.audit(traj[: k + 1])[k] == js[k]


def test_public_names_are_sorted_and_exist():
    import rewardkit.bioaudit as ba

    assert ba.__all__ == sorted(ba.__all__)
    assert all(hasattr(ba, n) for n in ba.__all__)
    for name in ("Engine", "Judgment", "PARADIGMS", "INJECTION_CANDIDATES", "load_benchmark"):
        assert name in ba.__all__
