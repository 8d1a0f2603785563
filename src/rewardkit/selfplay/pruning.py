"""Three-level diversity pruning of self-generated tests and the effective suite size
(seed 003, after CoVer): invalid tests, duplicate input strings, duplicate execution profiles.

    >>> import numpy as np
    >>> from rewardkit.selfplay.pruning import prune
    >>> from rewardkit.selfplay.executor import TestCase
    >>> tests = [TestCase("(1,)", "2"), TestCase("(1, )", "2"), TestCase("(", "0"),
    ...          TestCase("(3,)", "4")]
    >>> passed = np.array([[1, 1, 0, 1], [0, 0, 0, 0]], bool)      # (m, K)
    >>> r = prune(tests, passed, invalid_test=[False, False, True, False])
    >>> r.kept, r.invalid, r.duplicate_input, r.duplicate_profile
    ((0,), (2,), (1,), (3,))

Levels, in order: (1) invalid — the test does not parse, or a program known to be correct
(``y`` at its maximum) fails it; (2) duplicate input — the same argument tuple as an earlier
surviving test (compared as parsed literals, so ``(1, )`` equals ``(1,)``); (3) duplicate
profile — the same pass column as an earlier survivor on the *current* programs (the pool-
dependent equivalence the seed criticises). Survivors beyond ``k`` are dropped in order.

``k_eff = k / (1 + (k − 1)·ρ̄)`` with ρ̄ the mean pairwise Pearson correlation of the kept pass
columns. A constant column has no correlation; we count it as 1 with an identical column and 0
otherwise, and clip ρ̄ at 0 so that k_eff ≤ k.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._json import JsonMixin
from .._validation import Interval, validate_params
from ..errors import ConfigError
from .executor import TestCase

__all__ = ["PRUNE_REASONS", "PruneResult", "k_eff", "prune", "prune_batch"]

# reason codes of prune_batch, in the order the levels run
PRUNE_REASONS = ("kept", "invalid", "duplicate_input", "duplicate_profile", "over_budget")


def prune_batch(
    E: np.ndarray,
    input_ids: np.ndarray,
    invalid: np.ndarray,
    trusted_rows: np.ndarray,
    *,
    k: int | None = None,
) -> np.ndarray:
    """Vectorised pruning of T tasks at once; returns (T, K) int reason codes (0 = kept).

    E (T, m, K) bool; input_ids (T, K) int (equal id = equal input); invalid (T, K) bool (the
    test does not parse); trusted_rows (T, m) bool (programs known correct).
    """
    K = E.shape[2]
    bad = invalid | (trusted_rows[:, :, None] & ~E).any(axis=1)  # (T, K)
    reason = np.where(bad, 1, 0)
    earlier = np.tri(K, K, -1, dtype=bool)  # earlier[j, j'] = j' < j
    same_in = input_ids[:, :, None] == input_ids[:, None, :]  # (T, K, K)
    dup_in = (same_in & earlier & (reason == 0)[:, None, :]).any(axis=2) & (reason == 0)
    reason = np.where(dup_in, 2, reason)
    packed = np.packbits(E, axis=1)  # (T, ceil(m/8), K)
    same_prof = (packed[:, :, :, None] == packed[:, :, None, :]).all(axis=1)  # (T, K, K)
    dup_prof = (same_prof & earlier & (reason == 0)[:, None, :]).any(axis=2) & (reason == 0)
    reason = np.where(dup_prof, 3, reason)
    if k is not None:
        over = (np.cumsum(reason == 0, axis=1) > k) & (reason == 0)
        reason = np.where(over, 4, reason)
    return reason


def k_eff_batch(E: np.ndarray, kept: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(T,) k_eff and (T,) ρ̄ of the kept columns of E (T, m, K) (see the module docstring)."""
    X = E.astype(float)
    Xc = X - X.mean(axis=1, keepdims=True)
    cov = np.matmul(Xc.transpose(0, 2, 1), Xc)  # (T, K, K)
    sd = np.sqrt(np.einsum("tkk->tk", cov))
    const = sd < 1e-12
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = cov / (sd[:, :, None] * sd[:, None, :])
    packed = np.packbits(E, axis=1)
    identical = (packed[:, :, :, None] == packed[:, :, None, :]).all(axis=1)
    either_const = const[:, :, None] | const[:, None, :]
    corr = np.where(either_const, identical.astype(float), corr)
    K = E.shape[2]
    pair = kept[:, :, None] & kept[:, None, :] & np.triu(np.ones((K, K), bool), 1)
    n_pairs = pair.sum(axis=(1, 2))
    rho = np.where(n_pairs > 0, (corr * pair).sum(axis=(1, 2)) / np.maximum(n_pairs, 1), 0.0)
    rho = np.clip(rho, 0.0, 1.0)
    k = kept.sum(axis=1).astype(float)
    keff = np.where(k > 1, k / (1.0 + (k - 1.0) * rho), k)
    return keff, rho


def k_eff(passed: Any) -> float:
    """k / (1 + (k − 1)·ρ̄) for the columns of a (m, k) pass matrix."""
    E = np.asarray(passed, dtype=bool)
    if E.ndim != 2:
        raise ConfigError(f"The 'passed' parameter of k_eff must be a (m, k) array. Got {E.shape}.")
    keff, _ = k_eff_batch(E[None], np.ones((1, E.shape[1]), bool))
    return float(keff[0])


@dataclass(frozen=True)
class PruneResult(JsonMixin):
    kept: tuple[int, ...]  # test indices, in their original order
    invalid: tuple[int, ...]
    duplicate_input: tuple[int, ...]
    duplicate_profile: tuple[int, ...]
    over_budget: tuple[int, ...]
    k_eff: float
    rho_bar: float


def _input_key(s: str) -> str:
    try:
        return repr(ast.literal_eval(s))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return s.strip()


@validate_params({"k": [Interval(int, 1, 10**6), None]})
def prune(
    tests: Sequence[TestCase],
    table: Any,
    *,
    y: Any = None,
    invalid_test: Any = None,
    k: int | None = None,
) -> PruneResult:
    """Prune one task's tests given its execution ``table``: an (m, K) pass matrix or an object
    with ``.passed`` (and ``.status`` / ``.invalid_test``, as the sandbox and executors give).
    ``y`` (m,) marks the programs at the top level as known correct."""
    func = "prune"
    passed = np.asarray(getattr(table, "passed", table), dtype=bool)
    if passed.ndim != 2 or passed.shape[1] != len(tests):
        raise ConfigError(
            f"The 'table' parameter of {func} must give an (m, {len(tests)}) pass matrix "
            f"(one column per test). Got shape {passed.shape}."
        )
    m, K = passed.shape
    if invalid_test is None:
        invalid_test = getattr(table, "invalid_test", None)
    if invalid_test is None and hasattr(table, "status"):
        from ..sandbox import Status

        invalid_test = np.asarray(table.status) == Status.INVALID_TEST
    inv = np.zeros(K, bool) if invalid_test is None else np.asarray(invalid_test, bool)
    if inv.ndim == 2:
        inv = np.asarray(inv.any(axis=0))
    if inv.shape != (K,):
        raise ConfigError(
            f"The 'invalid_test' parameter of {func} must have shape ({K},) or ({m}, {K}). "
            f"Got {np.asarray(invalid_test).shape}."
        )
    trusted = np.zeros(m, bool)
    if y is not None:
        yv = np.asarray(y, dtype=float)
        if yv.shape != (m,):
            raise ConfigError(
                f"The 'y' parameter of {func} must have shape ({m},). Got {yv.shape}."
            )
        trusted = yv >= 1.0 - 1e-12
    keys: dict[str, int] = {}
    ids = np.array([keys.setdefault(_input_key(t.input), len(keys)) for t in tests])
    reason = prune_batch(passed[None], ids[None], inv[None], trusted[None], k=k)[0]
    kept = reason == 0
    keff, rho = k_eff_batch(passed[None], kept[None])

    def idx(code: int) -> tuple[int, ...]:
        return tuple(int(i) for i in np.flatnonzero(reason == code))

    return PruneResult(idx(0), idx(1), idx(2), idx(3), idx(4), float(keff[0]), float(rho[0]))
