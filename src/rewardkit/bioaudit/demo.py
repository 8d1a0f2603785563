"""The bio-audit section of ``rewardkit demo``: engine, spike-in anchor, recall, golden set.

Usage::

    from rewardkit.bioaudit.demo import demo_section
    section = demo_section()        # rewardkit.demo.Section with checks and artefacts
"""

from __future__ import annotations

from typing import Any

from .._plotting import bars_png, optional_figures
from .._results import Check, Section
from ..levels import score_trajectory
from .benchmark import Benchmark, load_benchmark
from .candidates import INJECTION_CANDIDATES
from .engine import PARADIGMS, Engine

__all__ = ["defect_recall", "demo_section", "spike_in_levels"]

RECALL_RANGE = (0.7, 0.9)  # SPEC §3: engine recall on latent defects ≈ 0.8


def defect_recall(bm: Benchmark, engine: Engine) -> dict[str, Any]:
    """Share of latent defects (visible and silent) on decisions the engine flags (level 0–2).

    Borderline choices are not defects and are left out; a defect on a −1 decision counts as
    missed (the engine could not evaluate it).
    """
    levels = {
        t.task_id: dict(zip((d["decision_id"] for d in t.decisions), engine.levels(t.decisions)))
        for t in bm.tasks
    }
    defects = [d for d in bm.defects if d.kind != "borderline"]
    hits = [0 <= levels[d.task_id][d.decision_id] <= 2 for d in defects]
    visible = [h for d, h in zip(defects, hits) if d.visible]
    return {
        "recall": sum(hits) / len(hits),
        "n_defects": len(defects),
        "n_flagged": sum(hits),
        "n_silent": sum(not d.visible for d in defects),
        "recall_visible": sum(visible) / len(visible) if visible else None,
    }


def spike_in_levels(
    bm: Benchmark, engine: Engine, paradigm: str
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Engine levels of a paradigm's substrate, clean and with its first candidate appended."""
    clean = list(bm.substrates[f"{paradigm}_correct"])
    injected = [*clean, INJECTION_CANDIDATES[paradigm][0]]
    return engine.levels(clean), engine.levels(injected)


def demo_section() -> Section:
    """Engine levels on the substrates, spike-in (recipe B) on all three paradigms, recall on
    gold defects, and the golden zero-diff check, on the shipped synthetic benchmark."""
    bm = load_benchmark()
    engine = Engine()
    checks: list[Check] = []
    spike: dict[str, Any] = {}
    for p in PARADIGMS:
        clean, injected = spike_in_levels(bm, engine, p)
        before = score_trajectory(list(clean), recipe="B").value
        after = score_trajectory(list(injected), recipe="B").value
        assert before is not None and after is not None  # no −1 in either trajectory
        drop = before - after
        checks.append(
            Check(f"{p}_correct: 12 steps all L3", "[3]*12", str(list(clean)), clean == (3,) * 12)
        )
        checks.append(
            Check(
                f"{p}: spike-in drop (B) ≥ 0.30, injected L0",
                "0.850000 → 0.235385, L0",
                f"{before:.6f} → {after:.6f} (drop {drop:.6f}), L{injected[-1]}",
                drop >= 0.30 and injected[-1] == 0 and abs(before - 0.85) < 1e-12,
            )
        )
        spike[p] = {
            "clean_levels": clean,
            "injected_levels": injected,
            "clean_B": before,
            "injected_B": after,
            "drop": drop,
            "candidate": INJECTION_CANDIDATES[p][0]["action"],
        }
    rec = defect_recall(bm, engine)
    lo, hi = RECALL_RANGE
    checks.append(
        Check(
            "engine recall on latent defects",
            f"in [{lo}, {hi}]",
            f"{rec['recall']:.3f} ({rec['n_flagged']}/{rec['n_defects']}, "
            f"{rec['n_silent']} silent)",
            lo <= rec["recall"] <= hi,
        )
    )
    diffs = sum(
        a != b for g in bm.golden for a, b in zip(engine.levels(g.decisions), g.expected_levels)
    )
    n_golden = sum(len(g.decisions) for g in bm.golden)
    checks.append(
        Check(
            "golden set: engine = frozen levels",
            "0 diffs over 20 / 137",
            f"{diffs} diffs over {len(bm.golden)} / {n_golden}",
            diffs == 0 and len(bm.golden) == 20 and n_golden == 137,
        )
    )
    figures = optional_figures(lambda: {"Engine levels per paradigm": _levels_png(bm, engine)})
    return Section(
        "bioaudit",
        f"Bio-audit engine on the {bm.version} synthetic benchmark",
        tuple(checks),
        {
            "bioaudit.json": {
                "benchmark": {
                    "version": bm.version,
                    "hashes": bm.hashes,
                    "hash": bm.hash,
                    "description": bm.description,
                },
                "rulepacks": {p: pack.hash for p, pack in sorted(engine.packs.items())},
                "spike_in": spike,
                "defect_recall": rec,
                "golden_diffs": diffs,
            }
        },
        figures,
        "The rule engine judges every decision of the synthetic benchmark: the clean substrates "
        "are all L3, one injected candidate is L0 and drops recipe B by ≥ 0.30, it flags about "
        "80 % of the latent defects, and it reproduces the frozen golden levels exactly.",
    )


def _levels_png(bm: Benchmark, engine: Engine) -> bytes:
    """Share of the benchmark's decisions at each engine level, one bar group per paradigm."""
    levels = (-1, 0, 1, 2, 3)
    counts = {p: dict.fromkeys(levels, 0) for p in PARADIGMS}
    for t in bm.tasks:
        for lv in engine.levels(t.decisions):
            counts[t.paradigm][lv] += 1
    n = {p: sum(c.values()) for p, c in counts.items()}
    return bars_png(
        [f"{p} ({n[p]} decisions)" for p in PARADIGMS],
        {f"L{lv}": [counts[p][lv] / n[p] for p in PARADIGMS] for lv in levels},
        title=f"Engine levels on the {len(bm.tasks)} benchmark tasks (−1 = cannot evaluate)",
        ylabel="share of decisions",
    )
