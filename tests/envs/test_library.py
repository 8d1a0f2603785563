"""Every adversarial trajectory gets exactly its expected outcome; user cases load from JSONL."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from rewardkit._json import canonical_json
from rewardkit.envs.fhir import ENV_IDS
from rewardkit.envs.fhir.casegen import LIBRARY_PATH, generate
from rewardkit.envs.fhir.verifier import build_stack
from rewardkit.envs.fhir.world import TRAPS
from rewardkit.envs.library import REQUIRED_KINDS, build_library, load_cases, run_case
from rewardkit.errors import InputError

CASES = build_library()
FAIL = build_stack().fail_value
CLASSES = {  # attack class → the gates its cases may fail
    "directory_dump": {"cross_patient_read"},
    "cross_patient_citation": {"cross_patient_citation", "fabricated_citation"},
    "phi_evasion": {"phi_leak"},
    "write_attempt": {"unauthorized_write"},
    "cross_patient_read": {"cross_patient_read"},
}


def test_library_covers_every_class_with_many_instances():
    kinds = Counter(c.kind for c in CASES)
    assert set(kinds) >= REQUIRED_KINDS, REQUIRED_KINDS - set(kinds)  # don't forget any
    assert len(CASES) >= 300 and len({c.name for c in CASES}) == len(CASES)
    for kind in ("directory_dump", "cross_patient_citation", "phi_evasion", "benign_note"):
        assert kinds[kind] >= 50, (kind, kinds[kind])
    assert {g for c in CASES for g in c.gates} == {g.name for g in build_stack().gates}
    assert all(c.heldout is not None and c.components for c in CASES)
    for c in CASES:
        assert set(c.gates) <= CLASSES.get(c.kind, set(c.gates)), c.name
    # every family and trap is attacked
    assert {(c.env_id, c.options["trap"]) for c in CASES} == {
        (e, t) for e in ENV_IDS for t in TRAPS
    }


def test_the_data_file_is_what_the_generator_writes():
    text = LIBRARY_PATH.read_text(encoding="utf-8")
    assert text == "\n".join(canonical_json(c) for c in generate()) + "\n"


def test_every_case_gets_exactly_its_expected_outcome():
    """Gates, components and the held-out judgment of all cases (one test: 1,000+ cases)."""
    bad = []
    for case in CASES:
        out = run_case(case)
        if not out.matched:
            bad.append((case.name, out.mismatches))
        v = out.verdict
        if case.gates:  # a hard failure is logged with its reasons, soft scores still computed
            assert v.hard_failed and v.total == FAIL and v.soft_total is not None, case.name
    assert bad == [], bad[:5]


def test_ungrounded_unknown_ranks_below_grounded_unknown_and_grounded_correct():
    by = {}
    for c in CASES:
        if c.options["trap"] == "missing" and c.kind in ("reference", "unknown_without_evidence"):
            by.setdefault(c.kind, []).append(run_case(c).verdict.total)
    complete = [
        run_case(c).verdict.total
        for c in CASES
        if c.kind == "reference" and c.options["trap"] != "missing"
    ]
    assert max(by["unknown_without_evidence"]) < min(by["reference"])  # grounded unknown
    assert max(by["unknown_without_evidence"]) < min(complete)  # grounded correct answers


def test_a_wrong_expectation_is_reported():
    case = next(c for c in CASES if c.kind == "write_attempt")
    wrong = type(case)(**{**case.__dict__, "gates": (), "total": 1.0})
    out = run_case(wrong)
    assert not out.matched
    assert any("unauthorized_write" in m for m in out.mismatches)
    assert any(m.startswith(f"total = {FAIL}") for m in out.mismatches)
    flipped = type(case)(**{**case.__dict__, "heldout": {"safe": True}})
    assert run_case(flipped).mismatches == ("held-out safe = False, expected True",)


def test_load_cases_round_trip(tmp_path):
    case = next(c for c in CASES if c.kind == "phi_evasion")
    p = tmp_path / "cases.jsonl"
    p.write_text(case.to_json() + "\n\n")
    (loaded,) = load_cases(str(p))
    assert loaded.to_json() == case.to_json()
    assert run_case(loaded).matched


@pytest.mark.parametrize(
    "line, match",
    [
        ("{", r"cases.jsonl, line 1: not valid JSON"),
        (
            json.dumps({"name": "x", "seed": 0, "actions": [], "gates": []}),
            r"line 1, field 'env_id': missing",
        ),
        (
            json.dumps(
                {
                    "name": "x",
                    "env_id": "fhir/anc-threshold-v1",
                    "seed": 0,
                    "actions": [],
                    "gates": ["no_such_gate"],
                }
            ),
            r"field 'gates': unknown gate 'no_such_gate'",
        ),
        (
            json.dumps(
                {
                    "name": "x",
                    "env_id": "fhir/anc-threshold-v1",
                    "seed": 0,
                    "actions": [],
                    "gates": [],
                    "components": {"task": "1"},
                }
            ),
            r"field 'components': component 'task' must be a number",
        ),
        (
            json.dumps({"name": "x", "env_id": "e", "seed": True, "actions": [], "gates": []}),
            r"field 'seed': expected a non-negative int",
        ),
    ],
)
def test_bad_case_files_name_file_line_and_field(tmp_path, line, match):
    p = tmp_path / "cases.jsonl"
    p.write_text(line + "\n")
    with pytest.raises(InputError, match=match):
        load_cases(str(p))


def test_library_figure_rows_are_classes_and_name_the_mismatches():
    # The report's library figure has one line per class (the library has 1,000+ cases; one
    # line per case made a figure ~29,000 px tall); a mismatch still shows, by name, as FAIL.
    from dataclasses import replace

    from rewardkit.envs.demo import _class_rows

    cases = build_library()
    outcomes = [run_case(c) for c in cases[:40]]
    cases = cases[:40]
    rows = _class_rows(cases, outcomes)
    assert [r[0] for r in rows] == sorted({c.kind for c in cases})
    assert sum(r[1] for r in rows) == len(cases)
    assert all(r[4] == ("PASS" if r[1] == r[2] else "FAIL") for r in rows)
    broken = [replace(outcomes[0], matched=False), *outcomes[1:]]
    row = next(r for r in _class_rows(cases, broken) if r[0] == cases[0].kind)
    assert row[4] == "FAIL" and cases[0].name in row[3] and row[2] == row[1] - 1
