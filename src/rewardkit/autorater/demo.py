"""The autorater section of ``rewardkit demo``: the diagnostic's key scalars as checks, and a
reliability diagram of a calibrated and an overconfident synthetic rater."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._optional import have
from .._results import Check, Section
from .calibration import expected_calibration_error, reliability_diagram
from .proof import CHECKS, _diagnostic
from .rewards import log_reward

__all__ = ["demo_section"]

# (scalar of the diagnostic, what the check claims, what is expected)
KEY_SCALARS = (
    ("log_invalid", "log reward of a parse failure = log 0.001", "-6.907755"),
    ("control_constant_half_brier", "constant 0.5 → mean Brier 0.75", "0.750000"),
    ("propriety_brier_max_argmax_error", "Brier: expected reward peaks at p = q", "≤ 2.5e-4"),
    ("propriety_log_max_argmax_error", "log: expected reward peaks at p = q", "≤ 5e-4"),
    ("isolation_brier_max_abs_diff", "Brier: garbage leaves valid rewards unchanged", "0"),
    ("isolation_log_max_abs_diff", "log: garbage leaves valid rewards unchanged", "0"),
    ("grad_brier_toward_y_frac", "Brier: one step moves every valid p toward y", "1"),
    ("grad_log_toward_y_frac", "log: one step moves every valid p toward y", "1"),
    ("grad_log_invalid_max_abs", "invalid items get zero gradient (log)", "0"),
)


def _fmt(v: float) -> str:
    return f"{v:.6f}" if v == 0 or abs(v) >= 1e-3 else f"{v:.3g}"


def _ece_by_hand(p: Any, y: Any, n_bins: int = 10) -> float:
    """10-bin ECE written out with plain loops, the reference the library's vectorised ECE is
    checked against (bin b holds b/10 <= p < (b+1)/10, p = 1 in the last bin)."""
    members: list[list[tuple[float, float]]] = [[] for _ in range(n_bins)]
    for pi, yi in zip(p.tolist(), y.tolist()):
        members[min(int(pi * n_bins), n_bins - 1)].append((pi, yi))
    total = 0.0
    for bin_ in members:
        if bin_:
            gap = sum(yi for _, yi in bin_) / len(bin_) - sum(pi for pi, _ in bin_) / len(bin_)
            total += len(bin_) * abs(gap)
    return total / len(p)


def demo_section() -> Section:
    # The numpy gradient only: importing torch would cost more than the whole section; the
    # torch / numpy agreement is what the receipt under docs/receipts/ binds.
    d = _diagnostic(42, "cpu", use_torch=False)
    checks = [Check(claim, want, _fmt(d[k]), CHECKS[k](d[k])) for k, claim, want in KEY_SCALARS]
    checks.append(
        Check(
            "all diagnostic checks (seed 42)",
            "passed",
            "passed" if d["passed"] else ", ".join(d["failed"]),
            d["passed"],
        )
    )
    # Calibration on synthetic raters: q ~ U(0, 1), y ~ Bernoulli(q); one states q, the other
    # sharpens it (logit × 3). ECE and the proper log reward both prefer the calibrated one.
    rng = np.random.default_rng(0)
    q = rng.uniform(0.02, 0.98, size=4000)
    y = (rng.uniform(size=q.size) < q).astype(np.float64)
    sharp = 1.0 / (1.0 + np.exp(-3.0 * np.log(q / (1.0 - q))))
    cal_ok = expected_calibration_error(q, y)
    cal_over = expected_calibration_error(sharp, y)
    gain = float(np.mean(log_reward(q, y)) - np.mean(log_reward(sharp, y)))
    ece_ok, ece_over = cal_ok.ece, cal_over.ece
    checks += [
        Check(
            "ECE: calibrated < overconfident",
            "calibrated lower",
            "None" if ece_ok is None or ece_over is None else f"{ece_ok:.4f} < {ece_over:.4f}",
            ece_ok is not None and ece_over is not None and ece_ok < ece_over,
        ),
        Check("mean log reward: calibrated − overconfident", "> 0", _fmt(gain), gain > 0),
    ]
    # A broken ECE can still order the two raters (signed gaps cancel, unweighted bins shrink
    # both): the value itself is checked against the loop-written reference.
    ref_ok, ref_over = _ece_by_hand(q, y), _ece_by_hand(sharp, y)
    got = (ece_ok, ece_over)
    checks.append(
        Check(
            "ECE = hand-binned reference (both raters)",
            f"{ref_ok:.6f}, {ref_over:.6f}",
            "None" if None in got else f"{ece_ok:.6f}, {ece_over:.6f}",
            None not in got
            and abs(ece_ok - ref_ok) <= 1e-12  # type: ignore[operator]
            and abs(ece_over - ref_over) <= 1e-12,  # type: ignore[operator]
        )
    )
    artefacts: dict[str, Any] = {
        "autorater.json": {
            "diagnostic_seed42": d,
            "calibrated": cal_ok.to_dict(),
            "overconfident": cal_over.to_dict(),
        }
    }
    if have("matplotlib"):
        artefacts["autorater-reliability.png"] = reliability_diagram(
            cal_over, title="Overconfident synthetic rater"
        )
    return Section(
        "autorater",
        "Probabilistic autorater rewards (proper scoring rules)",
        tuple(checks),
        artefacts,
    )
