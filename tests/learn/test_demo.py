"""The learn experiments in the demo report: shown when their files are there, checked, and the
checks fail on tampered or incomplete files (the breaks of these two checks)."""

from __future__ import annotations

import json
from pathlib import Path

from rewardkit._json import canonical_json, content_hash
from rewardkit.learn.demo import artefact_sections

PREREG = {
    "experiment": "gating",
    "arms": ["naive", "ordered"],
    "reference_arm": "naive",
    "seeds": [0, 1, 2],
    "steps": 400,
    "decision_rule": "the 95% paired interval excludes 0",
}


def _write(
    out: Path, prereg: dict, runs: list[tuple[str, int]], recorded: str | None = None
) -> None:
    folder = out / "learn" / "gating"
    folder.mkdir(parents=True)
    (folder / "preregistration.json").write_text(canonical_json(prereg, indent=1) + "\n")
    summary = {
        "preregistration_hash": recorded or content_hash(prereg),
        "runs": [{"arm": a, "seed": s} for a, s in runs],
        "summary": {
            "metrics": {
                "unsafe_rate": {
                    "per_arm": {
                        "naive": {"mean_before": 0.5, "mean_after": 0.9},
                        "ordered": {"mean_before": 0.5, "mean_after": 0.1},
                    }
                }
            },
            "effects_found": ["unsafe_rate (after training): ordered − naive = -0.8000"],
        },
    }
    (folder / "summary.json").write_text(json.dumps(summary))


ALL = [(a, s) for a in PREREG["arms"] for s in PREREG["seeds"]]


def test_no_files_no_section(tmp_path: Path) -> None:
    assert artefact_sections(tmp_path) == []


def test_consistent_files_pass_and_say_the_outcome(tmp_path: Path) -> None:
    _write(tmp_path, PREREG, ALL)
    (sec,) = artefact_sections(tmp_path)
    assert sec.name == "learn-gating" and all(c.passed for c in sec.checks)
    assert "ordered − naive = -0.8000" in sec.description and "0.500 → 0.100" in sec.description


def test_break_edited_preregistration_fails_the_hash_check(tmp_path: Path) -> None:
    _write(tmp_path, {**PREREG, "steps": 200}, ALL, recorded=content_hash(PREREG))
    (sec,) = artefact_sections(tmp_path)
    assert [c.passed for c in sec.checks] == [False, True]


def test_break_dropped_seed_fails_the_completeness_check(tmp_path: Path) -> None:
    _write(tmp_path, PREREG, [r for r in ALL if r != ("ordered", 2)])
    (sec,) = artefact_sections(tmp_path)
    assert [c.passed for c in sec.checks] == [True, False]
    assert "('ordered', 2)" in sec.checks[1].measured


def test_unreadable_files_are_a_failed_check_not_a_crash(tmp_path: Path) -> None:
    _write(tmp_path, PREREG, ALL)
    (tmp_path / "learn" / "gating" / "summary.json").write_text("{not json")
    (sec,) = artefact_sections(tmp_path)
    assert not sec.checks[0].passed and sec.checks[0].name == "files readable"
