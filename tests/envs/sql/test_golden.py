"""The SQL golden set: every record replays to its frozen verdict, and a changed verifier
shows up as differences (the set can fail)."""

from __future__ import annotations

import json

from rewardkit._frozen import thaw
from rewardkit._json import canonical_json
from rewardkit.envs import make
from rewardkit.envs.sql.cases import load_sql_library
from rewardkit.envs.sql.golden import GOLDEN
from rewardkit.envs.sql.verifier import build_stack


def test_golden_replays_to_its_verdicts():
    records = GOLDEN.load()
    assert len(records) >= 100
    kinds = {r["name"].split("/")[0] for r in records}
    assert kinds == {"library", "fuzz"}
    assert GOLDEN.diff() == []


def test_a_changed_verifier_shows_up():
    """Score the golden episodes with one weight changed and with the PHI gate removed: the
    verdicts differ from the frozen ones."""
    changed = {"weights": 0, "gate": 0}
    stacks = {
        "weights": build_stack({"evidence": 0.4}),
        "gate": build_stack(),
    }
    for rec in GOLDEN.load():
        snap = rec["snapshot"]
        old = rec["verdict"]
        for what, stack in stacks.items():
            env = make(snap["env_id"], verifier=stack)
            env.restore(canonical_json(snap))
            v = env.finalize()
            if what == "gate":
                gates = dict(v.gate_failures)
                gates.pop("phi_leak", None)
                if sorted(gates) != sorted(old["gate_failures"]):
                    changed[what] += 1
            elif json.dumps(v.total) != json.dumps(old["total"]):
                changed[what] += 1
    assert changed["weights"] > 10
    assert changed["gate"] >= 2


def test_library_records_play_the_cases_own_actions():
    """A library record is the case's actions as the case wrote them: a frozen copy (tuples,
    read-only dicts) is refused by the strict action parser, and an episode of refused actions
    scores 0.0 for the honest control and for every cheat alike, which guards nothing."""
    cases = {f"library/{c.name}": c for c in load_sql_library()}
    records = [r for r in GOLDEN.load() if r["name"].startswith("library/")]
    assert len(records) >= 20
    for r in records:
        played = r["snapshot"]["actions"]
        want = json.loads(canonical_json(thaw(cases[r["name"]].actions)))
        assert played == want[: len(played)] and played, r["name"]
    totals = {r["name"]: r["verdict"]["total"] for r in records}
    assert totals["library/control/revenue"] > 3 > 0 > totals["library/write/00"]
