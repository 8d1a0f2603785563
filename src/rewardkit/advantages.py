"""Group-relative advantages (GRPO), the Reward-Resolution Protocol and the minimum-pass gate.

Usage::

    from rewardkit.advantages import group_advantages, minimum_pass
    adv = group_advantages([1.0, 0.0, None, 0.5], groups=2)        # 2 groups of 2, zscore
    adv.values                    # array([ 0.7071, -0.7071,  nan,  0. ])   (None → no advantage)
    adv = group_advantages(r, groups, method="maxnorm", resolution=1e-2)
    minimum_pass(r, groups, threshold=0.8).frac_pass

Methods, for one group g with valid rewards r (seed 002 "GRPO intuition", seed 003 step 5):

- ``"zscore"``:  A = (r − mean_g) / (std_g + eps), std unbiased (ddof = 1). TRL uses eps = 1e-4,
  verl eps = 1e-6; eps is explicit here.
- ``"center"``:  A = r − mean_g (Dr. GRPO; TRL ``scale_rewards="none"``, verl
  ``norm_adv_by_std_in_grpo=False``).
- ``"maxnorm"``: MaxNorm-AC (arXiv:2609.19164): u = r − mean_g, s_g = max(max_j |u_j|, δ),
  A = u / s_g, so |A| ≤ 1 and a gap below the resolution δ is never amplified.

Reward-Resolution Protocol: with ``resolution=δ``, a group whose valid rewards all lie within δ
of each other (max − min ≤ δ) is *low-variance*; ``on_low_variance`` decides what it gets:
``"keep"`` (the method as is), ``"drop"`` (DAPO-style: advantages 0, group reported in
``dropped_groups``) or ``"maxnorm"`` (MaxNorm-AC for that group only).

``None`` or NaN rewards are excluded from their group's statistics and get no advantage (NaN in
``values``). A group with a single valid reward has no relative information: advantage 0, listed
in ``singleton_groups`` (verl instead uses mean 0 and std 1 there, i.e. A = r).

A group's best sample is not publishable just because it is the best of its group (seed 002):
:func:`minimum_pass` reports the fraction of groups whose best sample clears an absolute bar.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ._json import JsonMixin, to_plain
from ._validation import Interval, Options, check_positive_int, validate_params
from .errors import ConfigError, ZeroVarianceWarning

__all__ = ["METHODS", "Advantages", "MinimumPass", "group_advantages", "minimum_pass"]

METHODS = ("zscore", "center", "maxnorm")
LOW_VARIANCE = ("keep", "drop", "maxnorm")


@dataclass(frozen=True, eq=False)
class Advantages(JsonMixin):
    """Per-sample advantages and per-group statistics (groups in order of first appearance)."""

    values: np.ndarray  # (n,) float64; NaN where the reward was None/NaN
    method: str
    eps: float
    resolution: float | None
    on_low_variance: str
    group_ids: tuple[Any, ...]  # (G,)
    group_size: np.ndarray  # (G,) int64, valid rewards per group
    group_mean: np.ndarray  # (G,) float64; NaN when the group has no valid reward
    group_std: np.ndarray  # (G,) float64, unbiased; NaN with fewer than 2 valid
    low_variance_groups: tuple[Any, ...]  # within the resolution (empty without one)
    dropped_groups: tuple[Any, ...]  # advantages set to 0 by on_low_variance="drop"
    singleton_groups: tuple[Any, ...]  # one valid reward: advantage 0
    n_excluded: int  # None / NaN rewards
    frac_zero_std: float | None  # over groups with >= 2 valid rewards
    max_abs: float | None  # max |A| over valid samples

    def tolist(self) -> list[float | None]:
        """Advantages as floats, ``None`` where the reward was missing."""
        return [None if np.isnan(v) else float(v) for v in self.values]

    def to_dict(self) -> dict[str, Any]:
        """Canonical JSON form. In these arrays NaN *means* "no value" (a missing reward, a
        group without one), so it is written as ``None`` here, by name — canonical JSON
        refuses any other NaN."""
        out = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, np.ndarray) and v.dtype.kind == "f":
                v = [None if np.isnan(x) else float(x) for x in v]
            out[f.name] = to_plain(v, f"$.{f.name}")
        return out


def _as_rewards(rewards: Sequence[float | None] | np.ndarray, fn: str) -> np.ndarray:
    if isinstance(rewards, np.ndarray) and rewards.dtype.kind in "fiu":
        arr = rewards.astype(np.float64)  # (n,)
    else:
        bad_type = next((x for x in rewards if isinstance(x, (str, bytes, bool, np.bool_))), None)
        try:
            if bad_type is not None:
                raise TypeError
            arr = np.array([np.nan if x is None else x for x in rewards], dtype=np.float64)
        except (TypeError, ValueError):
            raise ConfigError(
                f"The 'rewards' parameter of {fn} must be a sequence of floats or "
                f"None. Got {rewards!r:.80}."
            ) from None
    if arr.ndim != 1:
        raise ConfigError(
            f"The 'rewards' parameter of {fn} must be one-dimensional. Got shape {arr.shape}."
        )
    bad = np.flatnonzero(np.isinf(arr))
    if bad.size:
        raise ConfigError(
            f"The 'rewards' parameter of {fn} must hold finite floats or None. "
            f"Got {arr[bad[0]]} at index {bad[0]}."
        )
    return arr


def _group_index(
    groups: int | Sequence[Hashable] | np.ndarray, n: int, fn: str
) -> tuple[np.ndarray, tuple[Any, ...]]:
    """Map each sample to a group number 0..G-1 (order of first appearance)."""
    if isinstance(groups, (int, np.integer)) and not isinstance(groups, bool):
        size = check_positive_int(int(groups), "groups", fn)
        if n % size:
            raise ConfigError(
                f"The 'groups' parameter of {fn} as a group size must divide "
                f"the number of rewards ({n}). Got {size}."
            )
        return np.repeat(np.arange(n // size), size), tuple(range(n // size))
    labels = groups if isinstance(groups, np.ndarray) else list(groups)  # type: ignore[arg-type]
    if len(labels) != n:
        raise ConfigError(
            f"The 'groups' parameter of {fn} must give one group id per reward "
            f"({n}) or a group size. Got {len(labels)} ids."
        )
    if isinstance(labels, np.ndarray):
        arr = labels if labels.ndim == 1 and labels.dtype.kind in "iuU" else None
    else:
        kinds = {type(x) for x in labels}
        arr = np.asarray(labels) if n and (kinds <= {int} or kinds <= {str}) else None
    if arr is not None:
        # Fast path for int or str ids: np.unique, renumbered by first appearance.
        uniq, first_pos, inverse = np.unique(arr, return_index=True, return_inverse=True)
        by_first = np.argsort(first_pos, kind="stable")
        rank = np.empty(uniq.size, dtype=np.int64)
        rank[by_first] = np.arange(uniq.size)
        return rank[inverse], tuple(uniq[by_first].tolist())
    first: dict[Any, int] = {}
    idx = np.empty(n, dtype=np.int64)
    for i, lab in enumerate(labels):
        key = lab.item() if isinstance(lab, np.generic) else lab
        try:
            idx[i] = first.setdefault(key, len(first))
        except TypeError:
            raise ConfigError(
                f"Group ids given to {fn} must be hashable. Got {lab!r} at index {i}."
            ) from None
    return idx, tuple(first)


@dataclass(frozen=True, eq=False)
class _Stats:
    """Per-group statistics over valid rewards; arrays are (G,) unless noted."""

    cnt: np.ndarray  # int64
    mean: np.ndarray  # NaN when the group has no valid reward
    std: np.ndarray  # unbiased; NaN with fewer than 2 valid
    spread: np.ndarray  # max - min; NaN when empty
    maxdev: np.ndarray  # max |r - mean|; 0 when empty
    u_sorted: np.ndarray  # (n,) r - its group's mean, in group order; NaN where invalid
    sizes: np.ndarray  # samples per group, invalid ones included
    order: np.ndarray | None  # (n,) the stable sort by group; None when already sorted

    def per_sample(self, per_group_factor: np.ndarray) -> np.ndarray:
        """(n,) u times its group's factor, back in the caller's sample order."""
        a = self.u_sorted * np.repeat(per_group_factor, self.sizes)
        if self.order is None:
            return a
        out = np.empty_like(a)
        out[self.order] = a
        return out


def _group_stats(r: np.ndarray, idx: np.ndarray) -> _Stats:
    """``r`` (n,) with n >= 1 and ``idx`` (n,) numbering the groups 0..G-1."""
    # Sort by group once (a no-op for contiguous groups) and reduce each run with reduceat.
    order = None if np.all(idx[1:] >= idx[:-1]) else np.argsort(idx, kind="stable")
    rs = r if order is None else r[order]  # (n,)
    ids = idx if order is None else idx[order]
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])  # (G,)
    sizes = np.diff(np.r_[starts, rs.size])  # (G,)
    valid = ~np.isnan(rs)
    cnt = np.add.reduceat(valid.astype(np.int64), starts)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.add.reduceat(np.where(valid, rs, 0.0), starts) / cnt
        u = rs - np.repeat(mean, sizes)  # (n,) NaN where invalid
        var = np.add.reduceat(np.where(valid, u * u, 0.0), starts) / (cnt - 1)
        std = np.where(cnt >= 2, np.sqrt(var), np.nan)
        spread = np.fmax.reduceat(rs, starts) - np.fmin.reduceat(rs, starts)
        maxdev = np.nan_to_num(np.fmax.reduceat(np.abs(u), starts))
    return _Stats(cnt, mean, std, spread, maxdev, u, sizes, order)


@validate_params(
    {
        "method": [Options(METHODS)],
        "eps": [Interval(float, 0, None)],
        "resolution": [Interval(float, 0, None, closed="neither"), None],
        "on_low_variance": [Options(LOW_VARIANCE)],
    }
)
def group_advantages(
    rewards: Sequence[float | None] | np.ndarray,
    groups: int | Sequence[Hashable] | np.ndarray,
    *,
    method: Literal["zscore", "center", "maxnorm"] = "zscore",
    eps: float = 1e-6,
    resolution: float | None = None,
    on_low_variance: Literal["keep", "drop", "maxnorm"] = "keep",
) -> Advantages:
    """Group-relative advantages of ``rewards``.

    ``groups`` is a group id per reward, or an int G for contiguous groups of G samples (the
    layout TRL uses: each prompt's ``num_generations`` completions side by side).
    """
    fn = "group_advantages"
    eps_f = float(eps)
    res = None if resolution is None else float(resolution)
    if on_low_variance != "keep" and res is None:
        raise ConfigError(
            f"The 'on_low_variance' parameter of {fn} needs a 'resolution'; "
            f"with resolution=None only 'keep' applies. Got {on_low_variance!r}."
        )
    r = _as_rewards(rewards, fn)  # (n,)
    if r.size == 0:
        raise ConfigError(f"The 'rewards' parameter of {fn} must hold at least one reward. Got [].")
    idx, ids = _group_index(groups, r.size, fn)  # (n,), G ids
    stats = _group_stats(r, idx)
    cnt, std, maxdev = stats.cnt, stats.std, stats.maxdev

    # Every method is A = u / d_g for a per-group denominator d_g; a factor 0 zeroes a group.
    if method == "zscore":
        denom = np.nan_to_num(std, nan=0.0) + eps_f  # (G,)
    elif method == "center":
        denom = np.ones_like(std)
    else:
        denom = np.maximum(maxdev, 0.0 if res is None else res)
    low = (cnt >= 2) & (stats.spread <= res) if res is not None else np.zeros(cnt.size, bool)
    if on_low_variance == "maxnorm" and res is not None:  # res is set, validated above
        denom = np.where(low, np.maximum(maxdev, res), denom)
    with np.errstate(divide="ignore"):
        factor = np.where(denom > 0, 1.0 / denom, 0.0)  # zero spread with eps 0: 0/0 → 0
    if on_low_variance == "drop":
        factor = np.where(low, 0.0, factor)
    single = cnt == 1
    factor = np.where(single, 0.0, factor)  # no relative information in a lone sample
    a = stats.per_sample(factor)  # (n,) NaN where the reward was None / NaN
    valid = ~np.isnan(r)

    multi = cnt >= 2
    zero = np.isclose(np.nan_to_num(std, nan=1.0), 0.0)  # TRL's isclose(std, 0), atol 1e-8
    n_multi = int(multi.sum())
    frac_zero = float((zero & multi).sum() / n_multi) if n_multi else None
    if n_multi and frac_zero == 1.0:
        warnings.warn(
            f"every group with at least 2 rewards has zero reward variance "
            f"({n_multi} groups): the batch carries no learning signal.",
            ZeroVarianceWarning,
            stacklevel=2,
        )

    return Advantages(
        values=a,
        method=method,
        eps=eps_f,
        resolution=res,
        on_low_variance=on_low_variance,
        group_ids=ids,
        group_size=cnt,
        group_mean=stats.mean,
        group_std=std,
        low_variance_groups=tuple(ids[g] for g in np.flatnonzero(low)),
        dropped_groups=tuple(ids[g] for g in np.flatnonzero(low))
        if on_low_variance == "drop"
        else (),
        singleton_groups=tuple(ids[g] for g in np.flatnonzero(single)),
        n_excluded=int((~valid).sum()),
        frac_zero_std=frac_zero,
        max_abs=float(np.max(np.abs(a[valid]))) if valid.any() else None,
    )


@dataclass(frozen=True)
class MinimumPass(JsonMixin):
    """The absolute minimum-pass report: does each group's best sample clear the bar?"""

    threshold: float
    n_groups: int  # groups with at least one valid reward
    n_pass: int
    frac_pass: float | None
    best: tuple[float | None, ...]  # per group (order of first appearance)
    failing_groups: tuple[Any, ...]
    empty_groups: tuple[Any, ...]  # no valid reward at all: neither pass nor fail


@validate_params({"threshold": [Interval(float, None, None)]})
def minimum_pass(
    rewards: Sequence[float | None] | np.ndarray,
    groups: int | Sequence[Hashable] | np.ndarray,
    *,
    threshold: float,
) -> MinimumPass:
    """Fraction of groups whose best valid reward is at least ``threshold``."""
    fn = "minimum_pass"
    thr = float(threshold)
    r = _as_rewards(rewards, fn)
    idx, ids = _group_index(groups, r.size, fn)
    valid = ~np.isnan(r)
    best = np.full(len(ids), -np.inf)
    np.maximum.at(best, idx[valid], r[valid])
    has = np.isfinite(best)
    passed = has & (best >= thr)
    n = int(has.sum())
    return MinimumPass(
        threshold=thr,
        n_groups=n,
        n_pass=int(passed.sum()),
        frac_pass=float(passed.sum() / n) if n else None,
        best=tuple(float(b) if h else None for b, h in zip(best, has)),
        failing_groups=tuple(ids[g] for g in np.flatnonzero(has & ~passed)),
        empty_groups=tuple(ids[g] for g in np.flatnonzero(~has)),
    )
