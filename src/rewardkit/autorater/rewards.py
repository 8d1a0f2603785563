"""Strictly proper rewards for a stated probability, with parse failures penalised.

Usage::

    from rewardkit.autorater import brier_reward, log_reward, proper_rewards
    brier_reward(0.7, 1)                  # 0.91
    log_reward(None, 1)                   # log(0.001) = -6.907755...
    proper_rewards(["<probability>0.7</probability>", "no tag"], [1, 0], rule="log")

The rules of seed 001 (Sec. 3, Eq. 1–2), with the paper's eps = 0.001:

    R_B = 1 − (p − y)²                                   if valid, 0       if invalid
    R_L = y·log p′ + (1 − y)·log(1 − p′),  p′ = clip(p, eps, 1 − eps)
                                                         if valid, log eps if invalid

``p`` is valid when it is a finite number in [0, 1]; None, NaN, ±inf and numbers outside [0, 1]
are invalid (a parse failure). ``y`` is the label in [0, 1]: 1 when B is better, 0 when A is,
fractional for soft labels; a bad label is the caller's error and raises. Both rules are
strictly proper: for y ~ Bernoulli(q) the expected reward is maximised only at p = q.

Invalid entries are replaced by a harmless 0.5 *before* any arithmetic, and the invalid branch
is selected afterwards, so no NaN, overflow or floating-point warning can escape (the tests run
under ``numpy.errstate(all="raise")``), and a valid item's reward does not depend on what else
is in the batch.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any, Literal, overload

import numpy as np

from .._validation import Interval, Options, validate_params
from ..errors import ConfigError
from .parse import DEFAULT_TAG, parse_probability

__all__ = ["DEFAULT_EPS", "RULES", "brier_reward", "log_reward", "proper_rewards"]

DEFAULT_EPS = 1e-3  # the paper's epsilon (seed 001, Sec. 3)
RULES: tuple[Literal["brier", "log"], ...] = ("brier", "log")
_SAFE = 0.5  # stand-in for invalid entries; any value in (eps, 1 - eps) would do


def _as_probabilities(p: Any, func: str) -> np.ndarray:
    """float64 array of the stated probabilities, None → NaN; anything but numbers raises."""
    if isinstance(p, np.ndarray) and p.dtype.kind != "O":
        if p.dtype.kind not in "iuf":
            raise ConfigError(
                f"The 'p' parameter of {func} must be numbers or None (an array of float). "
                f"Got an array of dtype {p.dtype}."
            )
        return p.astype(np.float64)
    obj = np.asarray(p, dtype=object)
    flat = obj.ravel().tolist()
    for t in set(map(type, flat)):  # a handful of types, however long the batch
        if t is not type(None) and (not issubclass(t, numbers.Real) or issubclass(t, bool)):
            bad = next(v for v in flat if type(v) is t)
            raise ConfigError(
                f"The 'p' parameter of {func} must hold numbers or None (use proper_rewards "
                f"for texts). Got {bad!r}."
            )
    return np.array(flat, dtype=np.float64).reshape(obj.shape)  # None → NaN


def _as_labels(y: Any, func: str, param: str = "y") -> np.ndarray:
    try:
        arr = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        raise ConfigError(
            f"The '{param}' parameter of {func} must be numbers in [0, 1]. Got {y!r}."
        ) from None
    bad = ~np.isfinite(arr)
    bad |= np.where(bad, 0.0, arr) < 0.0
    bad |= np.where(bad, 0.0, arr) > 1.0
    if bad.any():
        idx = np.flatnonzero(bad.ravel())[0]
        at = "" if arr.ndim == 0 else f" at index {idx}"
        raise ConfigError(
            f"The '{param}' parameter of {func} must be labels in [0, 1] (1 when B is better, "
            f"fractional for soft labels). Got {float(arr.ravel()[idx])!r}{at}."
        )
    return arr


def _valid_and_safe(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(valid mask, p with every invalid entry replaced by 0.5), computed without touching a
    NaN or inf in any arithmetic or comparison."""
    finite = np.isfinite(p)
    p_fin = np.where(finite, p, _SAFE)
    valid = finite & (p_fin >= 0.0) & (p_fin <= 1.0)
    return valid, np.where(valid, p_fin, _SAFE)


def _broadcast(p: np.ndarray, y: np.ndarray, func: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        pb, yb = np.broadcast_arrays(p, y)
    except ValueError:
        raise ConfigError(
            f"The 'p' and 'y' parameters of {func} must have the same length (or y a single "
            f"label). Got shapes {p.shape} and {y.shape}."
        ) from None
    return pb, yb


def _brier(valid: np.ndarray, p: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.where(valid, 1.0 - (p - y) ** 2, 0.0)


def _log(valid: np.ndarray, p: np.ndarray, y: np.ndarray, eps: float) -> np.ndarray:
    pc = np.clip(p, eps, 1.0 - eps)
    return np.where(valid, y * np.log(pc) + (1.0 - y) * np.log(1.0 - pc), math.log(eps))


@overload
def brier_reward(p: float | None, y: float) -> float: ...
@overload
def brier_reward(p: Any, y: Any) -> np.ndarray | float: ...
def brier_reward(p: Any, y: Any) -> np.ndarray | float:
    """1 − (p − y)² for a valid p, 0 for an invalid one; scalars give a float, arrays an array."""
    pa = _as_probabilities(p, "brier_reward")
    pb, yb = _broadcast(pa, _as_labels(y, "brier_reward"), "brier_reward")
    valid, safe = _valid_and_safe(pb)
    out = _brier(valid, safe, yb)
    return float(out) if out.ndim == 0 else out


@overload
def log_reward(p: float | None, y: float, *, eps: float = ...) -> float: ...
@overload
def log_reward(p: Any, y: Any, *, eps: float = ...) -> np.ndarray | float: ...
@validate_params({"eps": [Interval(float, 0, 0.5, closed="neither")]})
def log_reward(p: Any, y: Any, *, eps: float = DEFAULT_EPS) -> np.ndarray | float:
    """y·log p′ + (1 − y)·log(1 − p′) with p′ = clip(p, eps, 1 − eps); log(eps) if invalid."""
    eps = float(eps)
    pa = _as_probabilities(p, "log_reward")
    pb, yb = _broadcast(pa, _as_labels(y, "log_reward"), "log_reward")
    valid, safe = _valid_and_safe(pb)
    out = _log(valid, safe, yb, eps)
    return float(out) if out.ndim == 0 else out


@validate_params({"rule": [Options(RULES)], "eps": [Interval(float, 0, 0.5, closed="neither")]})
def proper_rewards(
    texts: Iterable[Any],
    labels: Any,
    *,
    rule: Literal["brier", "log"] = "brier",
    eps: float = DEFAULT_EPS,
    tag: str = DEFAULT_TAG,
) -> np.ndarray:
    """Parse each autorater output with :func:`parse_probability` and score it: (n,) float64.

    ``texts`` may hold anything; a non-string (None, NaN) or a text outside the convention gets
    the invalid reward. ``labels`` has one label in [0, 1] per text.
    """
    func = "proper_rewards"
    eps = float(eps)
    if isinstance(texts, (str, bytes)) or not isinstance(texts, Iterable):
        raise ConfigError(
            f"The 'texts' parameter of {func} must be a sequence of autorater outputs (a list "
            f"of str). Got {type(texts).__name__}."
        )
    texts = list(texts)
    y = _as_labels(labels, func, "labels")
    if y.ndim != 1 or y.shape[0] != len(texts):
        raise ConfigError(
            f"The 'labels' parameter of {func} must have one label per text ({len(texts)}). "
            f"Got shape {y.shape}."
        )
    p = np.array([parse_probability(t, tag=tag) for t in texts], dtype=np.float64)  # None → NaN
    valid, safe = _valid_and_safe(p)
    return _brier(valid, safe, y) if rule == "brier" else _log(valid, safe, y, eps)
