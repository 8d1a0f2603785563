"""The ``rewardkit learn`` experiments in the report of ``rewardkit demo``, when their files are
in the demo's output folder (``out/learn/<experiment>/``, what ``rewardkit learn … --out out``
writes). The demo does not train: an experiment that has not been run is simply not shown.

Each experiment becomes a section with three checks on the files themselves — the
pre-registration on disk is the one the summary was computed under (its content hash); every
pre-registered arm × seed has a result; the summary's intervals and effects found are what its
own per-seed results (``summary.json`` runs, ``curves.jsonl`` training batches) give when
recomputed, so an interval or a claimed effect edited after the run is caught — its curves,
and its outcome in words (effects found with their intervals, or that none was found).
Files on one disk cannot prove *when* the pre-registration was written; that the runner writes
it before training is shown by its test, not by these checks.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from .._json import canonical_json, content_hash
from .._results import Check, Section
from ..stats.paired import paired_difference
from .calibration import CalibrationTask
from .gating import GatingTask
from .result import LearnResult

__all__ = ["EXPERIMENTS", "artefact_sections"]

EXPERIMENTS = ("calibration", "gating")


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f}"


_TASKS: dict[str, Any] = {"calibration": CalibrationTask, "gating": GatingTask}


def _first_difference(a: Any, b: Any, path: str = "summary") -> str | None:
    """The first place where ``a`` (recomputed) and ``b`` (on disk) differ, or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: {'missing on disk' if k in a else 'not recomputed'}"
            d = _first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} entries recomputed, {len(b)} on disk"
        for i, (x, y) in enumerate(zip(a, b)):
            d = _first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    if isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
        return None if abs(a - b) <= 1e-9 * max(1.0, abs(a)) else f"{path}: {a!r} vs {b!r}"
    return None if a == b else f"{path}: recomputed {a!r}, on disk {b!r}"


def _recompute_check(
    name: str, prereg: dict[str, Any], summary: dict[str, Any], folder: Path
) -> Check:
    """The summary's intervals and effects, recomputed from its own per-seed results."""
    label = "summary's intervals and effects = recomputed from its per-seed results"
    curves = folder / "curves.jsonl"
    if not curves.is_file():
        return Check(label, "curves.jsonl present", "curves.jsonl missing", False)
    train: dict[tuple[str, int], list[Any]] = {}
    for line in curves.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if "train" in row:
            train.setdefault((row["arm"], row["seed"]), []).append(row["train"])
    ran = {(r["arm"], r["seed"]) for r in summary["runs"]}
    missing = sorted((a, s) for a in prereg["arms"] for s in prereg["seeds"] if (a, s) not in ran)
    if missing or set(ran) != set(train):
        why = f"runs missing {missing}" if missing else "curves.jsonl runs differ from summary's"
        return Check(label, "identical", f"cannot recompute: {why}", False)
    runs = [{**r, "train": train[(r["arm"], r["seed"])]} for r in summary["runs"]]
    task = dataclasses.replace(
        _TASKS[name](), arms=tuple(prereg["arms"]), reference=prereg["reference_arm"]
    )
    rebuilt = LearnResult.build(
        task, prereg, content_hash(prereg), runs, summary["steps"], paired_difference
    )
    again = json.loads(canonical_json(rebuilt.summary))
    diff = _first_difference(again, summary["summary"])
    return Check(label, "identical", diff or "identical", diff is None)


def _section(name: str, folder: Path) -> Section:
    prereg = json.loads((folder / "preregistration.json").read_text(encoding="utf-8"))
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    got = content_hash(prereg)
    want = summary.get("preregistration_hash")
    planned = {(a, s) for a in prereg["arms"] for s in prereg["seeds"]}
    ran = {(r["arm"], r["seed"]) for r in summary.get("runs", [])}
    checks = (
        Check(
            "pre-registration on disk = the one the summary used",
            str(want),
            got,
            got == want,
        ),
        Check(
            "every pre-registered arm × seed has a result",
            f"{len(planned)} runs",
            f"{len(ran & planned)} of them (missing {sorted(planned - ran)})",
            planned <= ran,
        ),
        _recompute_check(name, prereg, summary, folder),
    )
    s = summary["summary"]
    lines = [
        f"Pre-registered {name} experiment: arms {', '.join(prereg['arms'])} (reference "
        f"{prereg['reference_arm']}), seeds {prereg['seeds']}, {prereg['steps']} GRPO steps, "
        f"tiny model trained on CPU. Decision rule: {prereg['decision_rule']}."
    ]
    for metric, m in s["metrics"].items():
        parts = [
            f"{arm} {_fmt(a['mean_before'])} → {_fmt(a['mean_after'])}"
            for arm, a in m["per_arm"].items()
        ]
        lines.append(f"Held-out {metric} (mean over seeds, before → after): " + "; ".join(parts))
    found = s.get("effects_found") or []
    lines.append(
        "Effects found: " + " | ".join(found)
        if found
        else "No effect found at this number of seeds (every paired interval includes 0)."
    )
    figures: dict[str, bytes] = {}
    png = folder / "curves.png"
    if png.is_file():
        figures[f"rewardkit learn {name}: training curve and held-out metrics"] = png.read_bytes()
    return Section(
        f"learn-{name}",
        f"Does the reward teach? rewardkit learn {name} (pre-registered GRPO run)",
        checks,
        {},
        figures,
        " ".join(lines),
    )


def artefact_sections(out: str | Path) -> list[Section]:
    """One section per experiment whose summary.json is under ``out/learn/``."""
    sections: list[Section] = []
    for name in EXPERIMENTS:
        folder = Path(out) / "learn" / name
        if (folder / "summary.json").is_file() and (folder / "preregistration.json").is_file():
            try:
                sections.append(_section(name, folder))
            except (OSError, ValueError, KeyError, TypeError) as exc:
                sections.append(
                    Section(
                        f"learn-{name}",
                        f"rewardkit learn {name} (unreadable files)",
                        (
                            Check(
                                "files readable",
                                "valid JSON",
                                f"{type(exc).__name__}: {exc}",
                                False,
                            ),
                        ),
                    )
                )
    return sections
