"""rewardkit.stats against scipy.stats on the same data and seed (n = 60 tasks, B = 2000).

Cases: ρ + τ_b intervals (one rank_agreement call against two scipy.stats.bootstrap calls with
spearmanr / kendalltau, vectorized=False, method="percentile", paired=True — what a user writes),
and the stratified test (permutation p + bootstrap interval against permutation_test +
bootstrap). Each case first asserts that both give the same numbers. The peak memory of one
rank_agreement call (tracemalloc) is in the case name.
"""

from __future__ import annotations

import sys
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).parent))
from _timing import median_time

from rewardkit.stats import rank_agreement, stratified_test

N, B, SEED = 60, 2000, 42


def _data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    gold = rng.integers(0, 5, N) / 4  # 5 tied gold levels
    reward = np.clip(gold * 0.6 + rng.normal(0, 0.2, N), 0, 0.85)
    reward = np.round(reward * 16) / 16  # rewards on a 1/16 grid: ties
    return reward, gold, rng.random(N) < 0.5


def _scipy_rank(x: np.ndarray, y: np.ndarray) -> tuple:
    kw = dict(paired=True, vectorized=False, method="percentile", n_resamples=B)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rho = stats.bootstrap(
            (x, y),
            lambda a, b: stats.spearmanr(a, b).statistic,
            rng=np.random.default_rng(SEED),
            **kw,
        )
        tau = stats.bootstrap(
            (x, y),
            lambda a, b: stats.kendalltau(a, b).statistic,
            rng=np.random.default_rng(SEED),
            **kw,
        )
    return rho.confidence_interval, tau.confidence_interval


def _mean_diff(a, b, axis=-1):
    return np.mean(a, axis=axis) - np.mean(b, axis=axis)


def _scipy_stratified(g: np.ndarray, b: np.ndarray) -> tuple:
    p = stats.permutation_test(
        (g, b),
        _mean_diff,
        permutation_type="independent",
        alternative="two-sided",
        n_resamples=B,
        rng=np.random.default_rng(SEED),
    ).pvalue
    ci = stats.bootstrap(
        (g, b), _mean_diff, method="percentile", n_resamples=B, rng=np.random.default_rng(SEED)
    ).confidence_interval
    return p, ci


def peak_memory_mib() -> float:
    x, y, _ = _data()
    rank_agreement(x.tolist(), y.tolist(), n_resamples=B, rng=SEED)  # warm imports
    tracemalloc.start()
    rank_agreement(x.tolist(), y.tolist(), n_resamples=B, rng=SEED)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def run() -> list[dict]:
    x, y, good = _data()
    xs, ys = x.tolist(), y.tolist()
    ours = rank_agreement(xs, ys, n_resamples=B, rng=SEED)
    rho_ci, tau_ci = _scipy_rank(x, y)
    assert ours.spearman.confidence_interval is not None
    assert ours.kendall_tau_b.confidence_interval is not None
    np.testing.assert_allclose(
        [
            ours.spearman.confidence_interval.low,
            ours.spearman.confidence_interval.high,
            ours.kendall_tau_b.confidence_interval.low,
            ours.kendall_tau_b.confidence_interval.high,
        ],
        [rho_ci.low, rho_ci.high, tau_ci.low, tau_ci.high],
        rtol=0,
        atol=1e-12,
    )
    mem = peak_memory_mib()
    t_ours = median_time(lambda: rank_agreement(xs, ys, n_resamples=B, rng=SEED), repeat=5)
    t_scipy = median_time(lambda: _scipy_rank(x, y), repeat=3, min_time_s=0.0)

    st = stratified_test(xs, good.tolist(), n_resamples=B, rng=SEED)
    p, ci = _scipy_stratified(x[good], x[~good])
    assert st.pvalue == p and abs(st.confidence_interval.low - ci.low) < 1e-12
    t_st = median_time(lambda: stratified_test(xs, good.tolist(), n_resamples=B, rng=SEED))
    t_st_scipy = median_time(lambda: _scipy_stratified(x[good], x[~good]), repeat=5)
    return [
        {
            "case": f"rho+tau_b CIs n={N} B={B} (peak {mem:.2f} MiB)",
            "ours_s": t_ours,
            "baseline": "scipy.stats.bootstrap x2",
            "baseline_s": t_scipy,
            "ratio": t_scipy / t_ours,
        },
        {
            "case": f"stratified test n={N} B={B}",
            "ours_s": t_st,
            "baseline": "scipy permutation_test+bootstrap",
            "baseline_s": t_st_scipy,
            "ratio": t_st_scipy / t_st,
        },
    ]


if __name__ == "__main__":
    for row in run():
        print(row)
