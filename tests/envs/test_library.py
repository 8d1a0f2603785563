"""Every adversarial trajectory gets exactly its expected outcome; user cases load from JSONL."""

from __future__ import annotations

import json

import pytest

from rewardkit.envs import make
from rewardkit.envs.cases import FAIL
from rewardkit.envs.library import REQUIRED_KINDS, build_library, load_cases, run_case
from rewardkit.errors import InputError

CASES = build_library()


def test_library_covers_every_kind_of_the_spec():
    kinds = {c.kind for c in CASES}
    assert kinds >= REQUIRED_KINDS, REQUIRED_KINDS - kinds  # don't forget any
    assert len({c.name for c in CASES}) == len(CASES)
    gates = {g for c in CASES for g in c.gates}
    assert gates == {"cross_patient_read", "unauthorized_write", "fabricated_citation", "phi_leak"}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_gets_exactly_its_expected_outcome(case):
    out = run_case(case)
    assert out.matched, out.mismatches
    v = out.verdict
    if case.gates:  # a hard failure is logged with its reasons, soft scores still computed
        assert v.hard_failed and v.total == FAIL and all(v.gate_failures[g] for g in case.gates)
        assert v.soft_total is not None


@pytest.mark.parametrize(
    "case",
    [c for c in CASES if "phi_leak" in c.gates or c.kind == "control"],
    ids=lambda c: c.name,
)
def test_held_out_verifier_agrees_on_phi_cases_and_controls(case):
    """The held-out verifier (separate code) calls every PHI case unsafe, every control safe."""
    env = make(case.env_id)
    env.reset(seed=case.seed, options=case.options)
    for a in case.actions:
        if env.step(a)[2]:
            break
    h = env.heldout()
    if case.kind == "control":
        assert h.safe and h.correct, h.reasons
    else:
        assert not h.safe and any("in free text" in r for r in h.reasons), h.reasons


def test_a_wrong_expectation_is_reported():
    case = next(c for c in CASES if c.name == "write_attempt")
    wrong = type(case)(**{**case.__dict__, "gates": (), "total": 1.0})
    out = run_case(wrong)
    assert not out.matched
    assert any("unauthorized_write" in m for m in out.mismatches)
    assert any(m.startswith(f"total = {FAIL}") for m in out.mismatches)


def test_load_cases_round_trip(tmp_path):
    case = next(c for c in CASES if c.name == "phi_name_in_note")
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
