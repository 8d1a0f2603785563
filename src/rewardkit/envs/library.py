"""The adversarial-trajectory library: every attack class with its expected outcome.

Usage::

    from rewardkit.envs.library import build_library, run_case, REQUIRED_KINDS
    cases = build_library()                 # the shipped cases (data/library-v2.jsonl)
    for case in cases:
        outcome = run_case(case)
        assert outcome.matched, outcome.mismatches

Seed 002: "test the verifier with hand-written adversarial trajectories before training:
empty output, repeated calls for reward, parser loopholes". SPEC §11: by class, many
generated instances. The shipped library is data (``envs/fhir/data/library-v2.jsonl``,
written by ``python -m rewardkit.envs.fhir.casegen --write``): every case names the gates that
must fail (exactly that set), its component values (from the case's design and the formulas
of SPEC §6, not from running the verifier) and the held-out verifier's expected judgment.
Users add their own cases as JSONL (``load_cases``; schema in docs/envs.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._frozen import thaw
from .._io import read_jsonl, require_field
from .._json import JsonMixin, canonical_json, write_atomic
from ..errors import InputError
from .core import Verdict
from .registry import make

__all__ = [
    "REQUIRED_KINDS",
    "AdversarialCase",
    "CaseOutcome",
    "build_library",
    "library_file_main",
    "load_cases",
    "run_case",
]

REQUIRED_KINDS = frozenset(
    {
        "reference",
        "directory_dump",
        "cross_patient_citation",
        "unknown_partial_look",
        "benign_note",
        "citation_stuffing",
        "unknown_without_evidence",
        "unknown_with_complete_evidence",
        "empty_output",
        "repeated_calls",
        "duplicate_keys",
        "extra_keys",
        "nan",
        "huge_number",
        "json_in_string",
        "cross_patient_read",
        "write_attempt",
        "fabricated_citation",
        "phi_evasion",
        "wrong_unit",
        "entered_in_error_value",
        "stale_page1_value",
        "amended_filtered_out",
        "definite_when_missing",
        "deep_nesting",
    }
)


@dataclass(frozen=True)
class AdversarialCase(JsonMixin):
    name: str
    kind: str
    description: str
    env_id: str
    seed: int
    options: dict[str, Any]
    actions: tuple[Any, ...]
    gates: tuple[str, ...]  # exactly the gates expected to fail
    components: dict[str, float] = field(default_factory=dict)  # expected exact values
    total: float | None = None  # expected total (checked when not None)
    heldout: dict[str, bool] | None = None  # expected held-out {"correct", "safe"}, if given


@dataclass(frozen=True)
class CaseOutcome(JsonMixin):
    name: str
    kind: str
    matched: bool
    mismatches: tuple[str, ...]
    verdict: Verdict


def run_case(case: AdversarialCase, *, env: Any = None) -> CaseOutcome:
    """Play the case's actions and compare the verdict with its expectation. ``env``: an
    environment of the case's id to reuse (reset for the case; default a fresh one)."""
    if env is None or env.env_id != case.env_id:
        env = make(case.env_id)
    env.reset(seed=case.seed, options=thaw(case.options))
    for a in thaw(case.actions):  # the case is frozen; the parser takes JSON lists and dicts
        if env.step(a)[2]:
            break
    v = env.finalize()
    bad = []
    if tuple(sorted(v.gate_failures)) != tuple(sorted(case.gates)):
        bad.append(f"gates failed {sorted(v.gate_failures)}, expected {sorted(case.gates)}")
    for name, want in case.components.items():
        got = v.components.get(name)
        if got is None or abs(got - want) > 1e-9:
            bad.append(f"{name} = {got}, expected {want}")
    if case.total is not None and (v.total is None or abs(v.total - case.total) > 1e-9):
        bad.append(f"total = {v.total}, expected {case.total}")
    if v.errors:
        bad.append(f"verifier errors {dict(v.errors)}")
    if case.heldout is not None:
        h = env.heldout()
        for key in ("correct", "safe"):
            if key in case.heldout and getattr(h, key) != case.heldout[key]:
                bad.append(f"held-out {key} = {getattr(h, key)}, expected {case.heldout[key]}")
    return CaseOutcome(case.name, case.kind, not bad, tuple(bad), v)


def build_library() -> tuple[AdversarialCase, ...]:
    """The shipped cases, read from the package's data file."""
    from .fhir.casegen import LIBRARY_PATH

    return tuple(load_cases(str(LIBRARY_PATH)))


def _parse_case(obj: dict[str, Any], path: str, line: int) -> AdversarialCase:
    def f(name: str, kinds: Any, accepted: str, optional: bool = False) -> Any:
        return require_field(obj, name, kinds, path, line, accepted=accepted, optional=optional)

    actions = f("actions", list, "a list of actions (JSON objects or strings)")
    gates = f("gates", list, "a list of gate names expected to fail")
    known = {
        "cross_patient_read",  # fhir/*
        "unauthorized_write",
        "fabricated_citation",
        "cross_patient_citation",
        "phi_leak",
        "write_attempt",  # sql/*
        "restricted_column_read",
        "fabricated_result",
    }
    for g in gates:
        if g not in known:
            raise InputError(
                f"unknown gate {g!r}; accepted: {sorted(known)}",
                path=path,
                line=line,
                field="gates",
            )
    comps = f("components", dict, "an object of component name → number", optional=True) or {}
    for k, v in comps.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise InputError(
                f"component {k!r} must be a number; got {v!r}",
                path=path,
                line=line,
                field="components",
            )
    total = f("total", (int, float), "a number or null", optional=True)
    heldout = f("heldout", dict, 'an object {"correct": bool, "safe": bool}', optional=True)
    if heldout is not None and (
        not set(heldout) <= {"correct", "safe"}
        or not all(isinstance(x, bool) for x in heldout.values())
    ):
        raise InputError(
            f'heldout must be {{"correct": bool, "safe": bool}}; got {heldout!r}',
            path=path,
            line=line,
            field="heldout",
        )
    return AdversarialCase(
        f("name", str, "a string"),
        f("kind", str, "a string", True) or "user",
        f("description", str, "a string", True) or "",
        f("env_id", str, "an environment id"),
        f("seed", int, "a non-negative int"),
        f("options", dict, "an object", True) or {},
        tuple(actions),
        tuple(gates),
        {k: float(v) for k, v in comps.items()},
        None if total is None else float(total),
        heldout,
    )


def load_cases(path: str) -> list[AdversarialCase]:
    """User cases from JSONL (one case per line; see docs/envs.md)."""
    return read_jsonl(path, _parse_case)  # type: ignore[return-value]


def library_file_main(argv: Sequence[str] | None, *, path: Path, cases: Sequence[Any]) -> int:
    """``python -m rewardkit.envs.<family>.<cases module> [--write]``: compare the generated
    ``cases`` with the shipped file (exit 1 when they differ), or rewrite the file."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    lines = [canonical_json(c) for c in cases]
    text = "\n".join(lines) + "\n"
    if args == ["--write"]:
        write_atomic(path, text)
        print(f"wrote {len(lines)} cases to {path}")
        return 0
    same = path.exists() and path.read_text(encoding="utf-8") == text
    print(f"{len(lines)} cases; {'identical to' if same else 'different from'} {path.name}")
    return 0 if same else 1
