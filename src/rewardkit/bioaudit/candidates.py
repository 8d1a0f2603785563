"""Injection candidates for the spike-in anchor: decisions the engine itself judges level 0.

Usage::

    from rewardkit.bioaudit import INJECTION_CANDIDATES, check_injection_candidates
    cand = INJECTION_CANDIDATES["scrna"][0]          # no_doublet_detection on droplet data
    check_injection_candidates()                     # raises if any is not judged L0

Seed 000 §5: the strong anchor appends one engine-judged L0 decision to a clean all-L3
substrate; the candidate must carry its rules' ``required_context`` (else the engine says −1,
which is masked and would make the anchor vacuous). The self-check judges each candidate
after its paradigm's substrate and alone (empty history) and requires level 0 both times.
"""

from __future__ import annotations

from typing import Any

from ..errors import RewardkitError
from .engine import Engine
from .templates import substrate

__all__ = ["INJECTION_CANDIDATES", "check_injection_candidates"]


def _d(paradigm: str, i: int, action: str, params: dict, context: dict) -> dict[str, Any]:
    return {
        "decision_id": f"inject-{paradigm}-{i}",
        "action": action,
        "params": params,
        "context": {"paradigm": paradigm, **context},
    }


INJECTION_CANDIDATES: dict[str, tuple[dict[str, Any], ...]] = {
    "deg": (
        _d("deg", 1, "multiple_testing_correction", {"method": "none", "alpha": 0.05}, {}),
        _d(
            "deg",
            2,
            "result_filtering",
            {"use": "pvalue", "padj_threshold": 0.05, "lfc_threshold_mode": "none"},
            {},
        ),
        _d(
            "deg",
            3,
            "de_test",
            {"method": "DESeq2_wald", "input": "raw_counts"},
            {"n_replicates_per_group": 1},
        ),
    ),
    "pan": (
        _d("pan", 1, "multiple_testing_correction", {"method": "none", "alpha": 0.05}, {}),
        _d(
            "pan",
            2,
            "association_test",
            {"method": "linear_mixed_model", "adjust_for_cancer_type": False},
            {},
        ),
        _d(
            "pan",
            3,
            "batch_correction",
            {"method": "ComBat", "batch_variable": "cancer_type"},
            {"n_cohorts": 8},
        ),
    ),
    "scrna": (
        _d("scrna", 1, "no_doublet_detection", {}, {"platform": "droplet", "n_cells": 8000}),
        _d("scrna", 2, "multiple_testing_correction", {"method": "none", "alpha": 0.05}, {}),
        _d("scrna", 3, "normalization", {"method": "none", "log_transform": False}, {}),
    ),
}


class InjectionCheckError(RewardkitError):
    """An injection candidate is not judged level 0 by the engine."""


def check_injection_candidates(engine: Engine | None = None) -> dict[str, tuple[int, ...]]:
    """Judge every candidate (after its substrate, and alone); return paradigm -> levels."""
    eng = engine or Engine()
    out = {}
    for paradigm, cands in INJECTION_CANDIDATES.items():
        base = substrate(paradigm)
        levels = []
        for c in cands:
            for history in (base, []):
                j = eng.audit_decision(c, history)
                if j.level != 0:
                    raise InjectionCheckError(
                        f"Injection candidate {c['decision_id']} ({c['action']}) is judged "
                        f"level {j.level}, not 0 ({j.rationale}); a spike-in needs an L0 step."
                    )
            levels.append(j.level)
        out[paradigm] = tuple(levels)
    return out
