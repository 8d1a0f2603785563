"""The ``rewardkit learn`` experiments in the report of ``rewardkit demo``, when their files are
in the demo's output folder (``out/learn/<experiment>/``, what ``rewardkit learn … --out out``
writes). The demo does not train: an experiment that has not been run is simply not shown.

Each experiment becomes a section with two checks on the files themselves — the
pre-registration on disk is the one the summary was computed under (its content hash), and
every pre-registered arm × seed has a result — its curves, and its outcome in words (effects
found with their intervals, or that none was found).
"""

from __future__ import annotations

import json
from pathlib import Path

from .._json import content_hash
from .._results import Check, Section

__all__ = ["EXPERIMENTS", "artefact_sections"]

EXPERIMENTS = ("calibration", "gating")


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f}"


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
