"""Paired differences over seeds with a Student-t confidence interval.

    from rewardkit.stats import paired_difference
    pd = paired_difference("mae", "brier", "improper", x_per_seed, r_per_seed)
    pd.mean, pd.low, pd.high, pd.excludes_zero

When two arms of an experiment share every seed (same start, same data, same draws — the
``rewardkit learn`` runs and the self-play simulation's common random numbers), arm X is compared
with arm R by the mean of the per-seed differences ``d_s = X_s − R_s`` with the interval
``mean ± t_{n−1} · sd / √n``. With three seeds the interval is wide on purpose: it is what the
seeds support.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .._json import JsonMixin
from ..errors import ConfigError

__all__ = ["PairedDifference", "paired_difference", "t_quantile_975"]

# Two-sided 95% Student-t quantiles t_{0.975, df} for df = 1..30 (scipy.stats.t.ppf(0.975, df),
# to 10 decimals; the tests compare them with scipy). Beyond 30 the Cornish–Fisher expansion of
# t in 1/df around the normal quantile (Hill 1970, five terms; within 1e-7 of scipy from df 31).
_T975 = (
    12.7062047362, 4.3026527297, 3.1824463053, 2.7764451052, 2.5705818356, 2.4469118511,
    2.3646242516, 2.3060041352, 2.2621571628, 2.2281388520, 2.2009851601, 2.1788128297,
    2.1603686565, 2.1447866879, 2.1314495456, 2.1199052992, 2.1098155778, 2.1009220402,
    2.0930240544, 2.0859634473, 2.0796138447, 2.0738730679, 2.0686576104, 2.0638985616,
    2.0595385528, 2.0555294386, 2.0518305165, 2.0484071418, 2.0452296421, 2.0422724563,
)  # fmt: skip
_Z975 = 1.959963984540054  # the standard normal's 0.975 quantile


def t_quantile_975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (df ≥ 1)."""
    if df < 1:
        raise ConfigError(f"t_quantile_975 needs df >= 1. Got {df}.")
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z975
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


@dataclass(frozen=True)
class PairedDifference(JsonMixin):
    """``arm − reference`` of one metric, per seed and as a mean with its 95% t-interval.

    ``excludes_zero`` is the pre-registered decision rule: an effect is reported as found only
    when the interval lies entirely on one side of 0.
    """

    metric: str
    arm: str
    reference: str
    per_seed: tuple[float | None, ...]
    mean: float | None  # None when a seed has no value (e.g. no valid answer at all)
    low: float | None  # None with a single seed: no interval
    high: float | None
    excludes_zero: bool


def paired_difference(
    metric: str,
    arm: str,
    reference: str,
    x: Sequence[float | None],
    r: Sequence[float | None],
) -> PairedDifference:
    """Per-seed differences ``x − r`` (same seeds, same order) and their 95% t-interval."""
    if len(x) != len(r) or not x:
        raise ConfigError(
            f"paired_difference needs one value per seed in both arms. Got {len(x)} and {len(r)}."
        )
    if any(v is None or math.isnan(v) for v in (*x, *r)):
        d_ = tuple(
            None if a is None or b is None or math.isnan(a) or math.isnan(b) else a - b
            for a, b in zip(x, r)
        )
        return PairedDifference(metric, arm, reference, d_, None, None, None, False)
    d = [float(a) - float(b) for a, b in zip(x, r)]  # type: ignore[arg-type]
    n = len(d)
    mean = math.fsum(d) / n
    if n < 2:
        return PairedDifference(metric, arm, reference, tuple(d), mean, None, None, False)
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in d) / (n - 1))
    half = t_quantile_975(n - 1) * sd / math.sqrt(n)
    low, high = mean - half, mean + half
    return PairedDifference(
        metric, arm, reference, tuple(d), mean, low, high, bool(low > 0 or high < 0)
    )
