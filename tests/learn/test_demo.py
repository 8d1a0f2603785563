"""The learn experiments in the demo report: shown when their files are there, checked, and the
checks fail on tampered or incomplete files (the breaks of these two checks)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from rewardkit._json import canonical_json, content_hash
from rewardkit.learn import GatingTask, LearnResult, paired_difference
from rewardkit.learn.demo import artefact_sections

PREREG = {
    "experiment": "gating",
    "arms": ["naive", "ordered"],
    "reference_arm": "naive",
    "seeds": [0, 1, 2],
    "steps": 40,
    "decision_rule": "the 95% paired interval excludes 0",
}


def _runs(runs: list[tuple[str, int]]) -> list[dict]:
    # Per-seed numbers chosen so that ordered − naive after training is about −0.8 in every seed.
    out = []
    for arm, seed in runs:
        after = 0.9 + 0.01 * seed if arm == "naive" else 0.1 + 0.02 * seed
        metrics = {"unsafe_rate": after, "safe_correct_rate": 0.05, "parse_failure_rate": 0.0}
        before = {"unsafe_rate": 0.5, "safe_correct_rate": 0.05, "parse_failure_rate": 0.01}
        train = [{"unsafe_rate": after - 0.1 + 0.01 * i} for i in range(PREREG["steps"])]
        out.append(
            {
                "arm": arm,
                "seed": seed,
                "before": before,
                "after": metrics,
                "train": train,
                "curve": [],
            }
        )
    return out


def _write(
    out: Path, prereg: dict, runs: list[tuple[str, int]], recorded: str | None = None
) -> Path:
    """The files ``rewardkit learn gating`` writes, from synthetic per-seed results."""
    folder = out / "learn" / "gating"
    folder.mkdir(parents=True)
    (folder / "preregistration.json").write_text(canonical_json(prereg, indent=1) + "\n")
    res = LearnResult.build(
        GatingTask(), PREREG, recorded or content_hash(prereg), _runs(ALL), PREREG["steps"],
        paired_difference,
    )  # fmt: skip
    summary = res.summary_json()
    summary["runs"] = [r for r in summary["runs"] if (r["arm"], r["seed"]) in runs]
    (folder / "summary.json").write_text(canonical_json(summary, indent=1) + "\n")
    kept = [
        x
        for x in res.curves_jsonl().splitlines()
        if tuple(json.loads(x)[k] for k in ("arm", "seed")) in runs
    ]
    (folder / "curves.jsonl").write_text("".join(x + "\n" for x in kept))
    return folder


def _edit_summary(folder: Path, edit: Callable[[dict], None]) -> None:
    path = folder / "summary.json"
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


ALL = [(a, s) for a in PREREG["arms"] for s in PREREG["seeds"]]


def test_no_files_no_section(tmp_path: Path) -> None:
    assert artefact_sections(tmp_path) == []


def test_consistent_files_pass_and_say_the_outcome(tmp_path: Path) -> None:
    _write(tmp_path, PREREG, ALL)
    (sec,) = artefact_sections(tmp_path)
    assert sec.name == "learn-gating" and all(c.passed for c in sec.checks)
    assert "unsafe_rate (after training): ordered − naive = -0.7900" in sec.description
    assert "0.500 → 0.120" in sec.description


def test_break_edited_preregistration_fails_the_hash_check(tmp_path: Path) -> None:
    _write(tmp_path, {**PREREG, "steps": 200}, ALL, recorded=content_hash(PREREG))
    (sec,) = artefact_sections(tmp_path)
    assert [c.passed for c in sec.checks] == [False, True, True]


def test_break_dropped_seed_fails_the_completeness_check(tmp_path: Path) -> None:
    _write(tmp_path, PREREG, [r for r in ALL if r != ("ordered", 2)])
    (sec,) = artefact_sections(tmp_path)
    assert [c.passed for c in sec.checks] == [True, False, False]
    assert "('ordered', 2)" in sec.checks[1].measured


def test_unreadable_files_are_a_failed_check_not_a_crash(tmp_path: Path) -> None:
    _write(tmp_path, PREREG, ALL)
    (tmp_path / "learn" / "gating" / "summary.json").write_text("{not json")
    (sec,) = artefact_sections(tmp_path)
    assert not sec.checks[0].passed and sec.checks[0].name == "files readable"


def _claim_an_effect(d: dict) -> None:
    d["summary"]["effects_found"].append(
        "safe_correct_rate (after training): ordered − naive = +0.3"
    )


def _narrow_an_interval(d: dict) -> None:
    pd = d["summary"]["metrics"]["parse_failure_rate"]["vs_reference"]["ordered"]
    pd["low"], pd["high"] = 0.001, 0.002


def _edit_a_seed(d: dict) -> None:
    d["summary"]["metrics"]["unsafe_rate"]["per_arm"]["ordered"]["after"][0] = 0.0


def _drop_a_finding(d: dict) -> None:
    d["summary"]["effects_found"].pop(0)


@pytest.mark.parametrize(
    "edit", [_claim_an_effect, _narrow_an_interval, _edit_a_seed, _drop_a_finding]
)
def test_break_summary_edited_after_the_run_fails_the_recompute_check(
    tmp_path: Path, edit: Callable[[dict], None]
) -> None:
    # The hash check binds only the pre-registration; an effect claimed, an interval narrowed, a
    # per-seed value changed or a finding dropped in summary.json must not pass.
    folder = _write(tmp_path, PREREG, ALL)
    _edit_summary(folder, edit)
    (sec,) = artefact_sections(tmp_path)
    assert [c.passed for c in sec.checks] == [True, True, False]
    assert sec.checks[2].measured.startswith("summary.")


def test_break_edited_training_curves_fail_the_recompute_check(tmp_path: Path) -> None:
    folder = _write(tmp_path, PREREG, ALL)
    curves = folder / "curves.jsonl"
    rows = [json.loads(x) for x in curves.read_text().splitlines()]
    for row in rows:
        if row.get("arm") == "naive" and "train" in row:
            row["train"]["unsafe_rate"] = 0.0
    curves.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (sec,) = artefact_sections(tmp_path)
    assert [c.passed for c in sec.checks] == [True, True, False]
    assert "training" in sec.checks[2].measured
