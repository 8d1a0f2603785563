"""Rank agreement between a reward and gold quality: Spearman ρ and Kendall τ_b with
task-level paired percentile-bootstrap intervals (seed 000 §4).

Usage::

    from rewardkit.stats import gold_quality, rank_agreement
    q = gold_quality(n_correct, n_error)          # None where a task has only edge notes
    ra = rank_agreement(rewards, q, n_resamples=2000, rng=42)
    ra.spearman.value, ra.spearman.confidence_interval.low, ra.n_excluded_gold

With the same seed the intervals equal ``scipy.stats.bootstrap((x, y), stat, paired=True,
method="percentile", n_resamples=B, rng=np.random.default_rng(seed))`` to 1e-12, while
running as a few small matrix products:

* A resample is a count vector w (how often each task was drawn), from scipy's own draw
  ``rng.integers(0, n, (B, n))``. Copies of one task are ties of each other.
* Tie-averaged ranks of a weighted sample: rank_i = Σ_j w_j [x_j < x_i] + (Σ_j w_j [x_j = x_i]
  + 1) / 2, i.e. ``w @ Lᵀ + (w @ Eᵀ + 1) / 2`` with the n × n indicator matrices L, E.
  ρ is the w-weighted Pearson correlation of the two rank vectors; the mean rank is (n+1)/2.
* Kendall: P − Q = ½ wᵀ S w with S_ij = sign(x_i − x_j)·sign(y_i − y_j); pairs tied in x are
  Σ_g m_g(m_g − 1)/2 with group counts m = w @ G_x. τ_b = (P − Q) / √(n0 − T_x) / √(n0 − T_y),
  n0 = n(n − 1)/2 (scipy.stats.kendalltau's formula).

Every quantity except the final ratio is an exact integer or quarter-integer in float64, and no
(B, n, n) array is ever built: memory is O(B·n + n²).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._rng import RngLike, as_generator
from .._validation import MAX_RESAMPLES, Interval, check_memory, check_real, validate_params
from ..errors import ConfigError
from ._resample import batches, bootstrap_indices, index_counts, percentile_interval
from ._types import ConfidenceInterval, Estimate, RankAgreement

__all__ = ["gold_quality", "rank_agreement", "spearman_kendall_weighted"]

_FN = "rank_agreement"


def gold_quality(n_correct: Sequence[int], n_error: Sequence[int]) -> tuple[float | None, ...]:
    """Gold quality q = correct / (correct + error) per task (seed 000 §4).

    Edge annotations are neutral: they enter neither count, so a task with only edge
    annotations has no q (``None``) and is excluded from rank agreement (and counted there).
    """
    if len(n_correct) != len(n_error):
        raise ConfigError(
            f"The 'n_error' parameter of gold_quality must have one count per task "
            f"({len(n_correct)}). Got {len(n_error)}."
        )
    out: list[float | None] = []
    for i, (c, e) in enumerate(zip(n_correct, n_error)):
        for name, v in (("n_correct", c), ("n_error", e)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise ConfigError(
                    f"The '{name}[{i}]' parameter of gold_quality must be an int >= 0. Got {v!r}."
                )
        out.append(None if c + e == 0 else c / (c + e))
    return tuple(out)


def _vector(values: Sequence[float | None], name: str) -> np.ndarray:
    """float64 vector with NaN where the value is None; non-finite numbers are refused."""
    out = np.empty(len(values), dtype=np.float64)
    for i, v in enumerate(values):
        if v is None:
            out[i] = np.nan
            continue
        x = check_real(v, f"{name}[{i}]", _FN) if not isinstance(v, float) else v
        if not np.isfinite(x):
            raise ConfigError(
                f"The '{name}[{i}]' parameter of {_FN} must be a finite float or None. Got {v!r}."
            )
        out[i] = x
    return out


def _design(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, tuple[int, ...]]:
    """All n × k matrices the statistics multiply the counts by, side by side: one GEMM.

    Columns: Lxᵀ | Exᵀ | Lyᵀ | Eyᵀ | S | G_x | G_y, with L[i, j] = [x_j < x_i],
    E[i, j] = [x_j = x_i], S[i, j] = sign(x_i − x_j)·sign(y_i − y_j) and G the tie-group
    indicators. Returns the (n, 5n + groups) matrix and the column split points.
    """
    lx = (x[None, :] < x[:, None]).T
    ex = (x[None, :] == x[:, None]).T
    ly = (y[None, :] < y[:, None]).T
    ey = (y[None, :] == y[:, None]).T
    s = np.sign(x[:, None] - x[None, :]) * np.sign(y[:, None] - y[None, :])
    gx = np.unique(x)[None, :] == x[:, None]
    gy = np.unique(y)[None, :] == y[:, None]
    blocks = [lx, ex, ly, ey, s, gx, gy]
    splits = tuple(np.cumsum([b.shape[1] for b in blocks])[:-1].tolist())
    return np.hstack([b.astype(np.float64) for b in blocks]), splits


def spearman_kendall_weighted(
    x: np.ndarray, y: np.ndarray, w: np.ndarray, design: tuple | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """ρ and τ_b of the samples that hold task i ``w[r, i]`` times; NaN where undefined.

    x, y: (n,) float; w: (R, n) float counts, each row summing to n. Returns two (R,) arrays.
    """
    mat, splits = design if design is not None else _design(x, y)
    wl_x, we_x, wl_y, we_y, ws, mx, my = np.split(w @ mat, splits, axis=1)  # one (R, k) GEMM
    n_tot = w.sum(axis=1)  # (R,) resample sizes
    # Spearman: tie-averaged ranks of the weighted sample, then a weighted Pearson.
    rx = wl_x + (we_x + 1.0) / 2.0  # (R, n) rank of task i's copies
    ry = wl_y + (we_y + 1.0) / 2.0
    m2 = n_tot * ((n_tot + 1.0) / 2.0) ** 2  # n · mean_rank²
    wrx = w * rx
    sxy = (wrx * ry).sum(axis=1) - m2
    sxx = (wrx * rx).sum(axis=1) - m2
    syy = (w * ry * ry).sum(axis=1) - m2
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.where((sxx > 0) & (syy > 0), sxy / np.sqrt(sxx * syy), np.nan)
    rho = np.clip(rho, -1.0, 1.0)

    # Kendall τ_b: concordance as a quadratic form, ties from group counts.
    con_minus_dis = (ws * w).sum(axis=1) / 2.0  # (R,) = ½ wᵀ S w
    n0 = n_tot * (n_tot - 1.0) / 2.0
    tx = (mx * (mx - 1.0)).sum(axis=1) / 2.0
    ty = (my * (my - 1.0)).sum(axis=1) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = np.where(
            (tx < n0) & (ty < n0), con_minus_dis / np.sqrt(n0 - tx) / np.sqrt(n0 - ty), np.nan
        )
    tau = np.clip(tau, -1.0, 1.0)
    return rho, tau


def _estimate(point: float, theta: np.ndarray, level: float) -> tuple[Estimate, int]:
    interval, se, n_deg = percentile_interval(theta, level)
    ci = None if interval is None else ConfidenceInterval(*interval)
    return Estimate(None if np.isnan(point) else float(point), ci, se), n_deg


@validate_params(
    {
        "n_resamples": [Interval(int, 1, MAX_RESAMPLES)],
        "confidence_level": [Interval(float, 0, 1, closed="neither")],
        "batch": [Interval(int, 1, MAX_RESAMPLES), None],
        "rng": ["rng"],
    }
)
def rank_agreement(
    reward: Sequence[float | None],
    gold: Sequence[float | None],
    *,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    batch: int | None = None,
    rng: RngLike = 42,
) -> RankAgreement:
    """Spearman ρ and Kendall τ_b of reward vs gold with paired percentile-bootstrap intervals.

    Tasks whose reward is ``None`` or whose gold quality is ``None`` are excluded and counted
    (a task missing both counts as a missing reward). Both statistics use the same resamples;
    an int ``rng`` is ``numpy.random.default_rng(rng)``, so each interval equals scipy's
    ``bootstrap`` called with a fresh ``default_rng(seed)``; ``batch`` splits the draw exactly
    as scipy's ``batch`` does. A resample with a constant reward or gold vector has no
    correlation: it is counted in ``n_degenerate`` and left out of the interval.
    """
    gen = as_generator(rng, _FN)
    b_total, level = int(n_resamples), float(confidence_level)
    check_memory(
        b_total,
        "n_resamples",
        _FN,
        nbytes=min(b_total, batch or b_total) * max(len(reward), 1) * 32,
        formula="n_resamples (or batch) × n_tasks × 32 bytes",
    )
    if len(reward) != len(gold):
        raise ConfigError(
            f"The 'gold' parameter of {_FN} must have one value per task ({len(reward)}). "
            f"Got {len(gold)}."
        )
    r, g = _vector(reward, "reward"), _vector(gold, "gold")
    miss_r, miss_g = np.isnan(r), np.isnan(g)
    keep = ~miss_r & ~miss_g
    x, y = r[keep], g[keep]
    n = int(x.size)
    if n < 2:
        raise ConfigError(
            f"{_FN} needs at least 2 tasks with both a reward and a gold quality. Got {n} "
            f"({int(miss_r.sum())} without reward, {int((miss_g & ~miss_r).sum())} without gold)."
        )

    design = _design(x, y)
    rho0, tau0 = spearman_kendall_weighted(x, y, np.ones((1, n)), design)
    rhos, taus = [], []
    for size in batches(b_total, batch):
        w = index_counts(bootstrap_indices(gen, n, size), n)  # (size, n)
        rho_b, tau_b = spearman_kendall_weighted(x, y, w, design)
        rhos.append(rho_b)
        taus.append(tau_b)
    rho_all, tau_all = np.concatenate(rhos), np.concatenate(taus)
    spearman, _ = _estimate(float(rho0[0]), rho_all, level)
    kendall, _ = _estimate(float(tau0[0]), tau_all, level)
    # ρ and τ_b are undefined on exactly the same resamples (a constant x or y vector).
    n_deg = int(np.count_nonzero(np.isnan(rho_all) | np.isnan(tau_all)))
    return RankAgreement(
        spearman=spearman,
        kendall_tau_b=kendall,
        n=n,
        n_excluded_reward=int(miss_r.sum()),
        n_excluded_gold=int((miss_g & ~miss_r).sum()),
        n_resamples=b_total,
        n_degenerate=n_deg,
        frac_degenerate=n_deg / b_total,
        confidence_level=level,
    )
