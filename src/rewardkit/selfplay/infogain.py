"""Information-gain rewards for self-generated tests, with their bias beside them (seed 003).

    >>> import numpy as np
    >>> from rewardkit.selfplay.infogain import ig_rewards, plugin_mi, null_mi
    >>> E = np.array([[1, 1], [1, 0], [0, 1], [0, 0]], bool)   # (m, K): 4 programs × 2 tests
    >>> y = np.array([1.0, 1.0, 0.5, 0.0])                      # (m,) graded correctness
    >>> plugin_mi(E, y).round(4).tolist()                       # nats, one per test
    [0.6931, 0.3466]
    >>> ig_rewards(E, y, correction="exact_null").reward.round(4).tolist()   # MI − E_null[MI]
    [0.231, -0.1155]

Shapes: an execution table ``E`` is ``(m, K)`` (programs × tests, pass = 1) or batched
``(T, m, K)``; graded correctness ``y`` is ``(m,)`` or ``(T, m)``. Every function accepts both and
returns ``(K,)`` or ``(T, K)``. ``y`` may hold any discrete values (e.g. fractions of GT tests
passed); MI only needs which programs share a level, the covariance gate uses the values.

How it is fast: each test column is a 2 × C contingency table with integer cells. The counts of
all tests of all tasks come from one matrix product ``Eᵀ @ onehot(y)``, and every
``Σ c·log c`` is read from a lookup table indexed by ``(column total, cell)``: no per-test Python
loop. Permutations only reshuffle ``y``; the marginals stay, so only the joint term is redone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._json import JsonMixin
from .._rng import as_generator
from .._validation import MAX_RESAMPLES, Interval, Options, check_memory, validate_params
from ..errors import ConfigError

__all__ = [
    "CORRECTIONS",
    "GATE_MODES",
    "IGRewards",
    "PermutationNull",
    "entropy",
    "ig_rewards",
    "miller_madow_bias",
    "null_mi",
    "permutation_null",
    "plugin_mi",
]

CORRECTIONS = ("none", "miller_madow", "permutation", "exact_null")
GATE_MODES = ("covariance", "none")
_COV_TOL = 1e-12  # a covariance this small is a constant column or rounding, not a signal
_TIE_TOL = 1e-12  # permutation values within this of the observed MI count as ≥ it


# ---------------------------------------------------------------------------------------------
# input preparation


@dataclass(frozen=True)
class _Batch:
    E: np.ndarray  # (T, m, K) bool
    codes: np.ndarray  # (T, m) int: level index of y within its task
    values: np.ndarray  # (T, m) float: y itself (for the covariance gate)
    n_levels: int  # L: the largest number of distinct y values in one task
    squeeze: bool  # the input was one task: drop the T axis on the way out

    @property
    def m(self) -> int:
        return int(self.E.shape[1])


def _prepare(E: Any, y: Any, func: str) -> _Batch:
    e = np.asarray(E)
    v = np.asarray(y, dtype=float) if not isinstance(y, np.ndarray) else y.astype(float)
    if e.ndim not in (2, 3):
        raise ConfigError(
            f"The 'E' parameter of {func} must be a 0/1 array of shape (m, K) or (T, m, K). "
            f"Got shape {e.shape}."
        )
    squeeze = e.ndim == 2
    if squeeze:
        e = e[None]
    if e.dtype != bool:
        if not np.isin(e, (0, 1)).all():
            raise ConfigError(
                f"The 'E' parameter of {func} must hold only 0/1 (pass/fail). "
                f"Got values {np.unique(e)[:5].tolist()}."
            )
        e = e.astype(bool)
    if v.ndim == 1 and squeeze:
        v = v[None]
    if v.shape != e.shape[:2]:
        raise ConfigError(
            f"The 'y' parameter of {func} must have shape "
            f"{e.shape[1:2] if squeeze else e.shape[:2]} (one value per program). "
            f"Got shape {np.asarray(y).shape}."
        )
    if e.shape[1] < 1:
        raise ConfigError(f"The 'E' parameter of {func} must have at least one program. Got 0.")
    if not np.isfinite(v).all():
        raise ConfigError(f"The 'y' parameter of {func} must be finite. Got a NaN or inf.")
    # Levels are numbered per task (0..Ĉ−1), so L = max Ĉ and no cell is spent on a level
    # another task uses. Round so that 3/8 computed two ways is one level.
    r = np.round(v, 9)
    order = np.argsort(r, axis=1, kind="stable")
    srt = np.take_along_axis(r, order, axis=1)
    rank = np.concatenate(
        [np.zeros((r.shape[0], 1), np.intp), np.cumsum(np.diff(srt, axis=1) > 0, axis=1)], axis=1
    )
    codes = np.empty_like(rank)
    np.put_along_axis(codes, order, rank, axis=1)
    return _Batch(e, codes, v, int(rank.max()) + 1, squeeze)


def _out(b: _Batch, x: np.ndarray) -> np.ndarray:
    return x[0] if b.squeeze else x


# ---------------------------------------------------------------------------------------------
# lookup tables: f(c) = c·log c and the joint term of one level


def _clogc(n: int) -> np.ndarray:
    """(n+1,) f(c) = c·log c with f(0) = 0."""
    c = np.arange(n + 1, dtype=float)
    return c * np.log(np.where(c > 0, c, 1.0))


def _joint_table(m: int) -> np.ndarray:
    """(m+1, m+1) J[b, n1] = f(n1) + f(b − n1): both cells of a level with b programs, n1 pass."""
    f = _clogc(m)
    b = np.arange(m + 1)[:, None]
    n1 = np.arange(m + 1)[None, :]
    ok = n1 <= b
    return np.where(ok, f[np.minimum(n1, m)] + f[np.clip(b - n1, 0, m)], 0.0)


def _level_counts(b: _Batch) -> np.ndarray:
    """(T, L) number of programs at each y level."""
    T = b.codes.shape[0]
    out = np.zeros((T, b.n_levels), dtype=np.intp)
    np.add.at(out, (np.repeat(np.arange(T), b.m), b.codes.ravel()), 1)
    return out


def _onehot(codes: np.ndarray, L: int) -> np.ndarray:
    """(..., m) int → (..., m, L) float32 one-hot (float32 matmul is exact for counts < 2^24)."""
    z = np.zeros((*codes.shape, L), dtype=np.float32)
    np.put_along_axis(z, codes[..., None], 1.0, axis=-1)
    return z


def _pass_counts(b: _Batch, codes: np.ndarray | None = None) -> np.ndarray:
    """(T, K, L) n1[t, j, c] = number of programs at level c that pass test j."""
    z = _onehot(b.codes if codes is None else codes, b.n_levels)
    return np.rint(np.matmul(b.E.transpose(0, 2, 1).astype(np.float32), z)).astype(np.intp)


def _marginal_term(b: _Batch, a: np.ndarray, lv: np.ndarray) -> np.ndarray:
    """(T, K) f(N) − f(a) − f(N − a) − Σ_c f(b_c): the part of N·MI that permutations keep."""
    f = _clogc(b.m)
    return f[b.m] - f[a] - f[b.m - a] - f[lv].sum(axis=1)[:, None]


# ---------------------------------------------------------------------------------------------
# estimators


def plugin_mi(E: Any, y: Any) -> np.ndarray:
    """Plug-in mutual information (nats) between each test's pass column and ``y``.

    ``I = (f(N) − Σ_r f(n_r) − Σ_c f(n_c) + Σ_rc f(n_rc)) / N`` with ``f(c) = c·log c`` on the
    2 × C table of (pass/fail) × (y level); equals ``sklearn.metrics.mutual_info_score``.
    """
    b = _prepare(E, y, "plugin_mi")
    return _out(b, _plugin(b))


def _plugin(b: _Batch, codes: np.ndarray | None = None) -> np.ndarray:
    lv = _level_counts(b)  # (T, L)
    n1 = _pass_counts(b, codes)  # (T, K, L)
    a = b.E.sum(axis=1)  # (T, K) passes per test
    J = _joint_table(b.m)
    joint = J[lv[:, None, :], n1].sum(axis=2)  # (T, K)
    return np.maximum((_marginal_term(b, a, lv) + joint) / b.m, 0.0)


def miller_madow_bias(E: Any, y: Any) -> np.ndarray:
    """Miller–Madow first-order bias of plug-in MI (nats), in its general form (seed 003, ⚠ block):

        bias = (Ŝ − R̂ − Ĉ + 1) / (2N)

    Ŝ non-empty cells of the 2 × C table, R̂ and Ĉ non-empty row / column marginals, N = m. It
    reduces to (R̂ − 1)(Ĉ − 1)/(2N) only when every cell is filled (Ŝ = R̂·Ĉ); at m = 16, R̂ = 2
    that needs Ĉ ≤ 8, which is why the seed's peak is 7/32 and not 15/32.
    """
    b = _prepare(E, y, "miller_madow_bias")
    return _out(b, _mm(b))


def _mm(b: _Batch) -> np.ndarray:
    lv = _level_counts(b)
    n1 = _pass_counts(b)
    present = lv[:, None, :] > 0
    S = ((n1 > 0) & present).sum(axis=2) + (((lv[:, None, :] - n1) > 0) & present).sum(axis=2)
    a = b.E.sum(axis=1)
    R = (a > 0).astype(int) + (a < b.m).astype(int)
    C = (lv > 0).sum(axis=1)[:, None]
    return (S - R - C + 1) / (2.0 * b.m)


def _emi_table(N: int) -> np.ndarray:
    """(N+1, N+1) h[a, b]: expected Σ_n (n/N)·log(N·n/(a·b)) of one cell under the
    hypergeometric law of n (row total a, column total b, N items) — Vinh et al. (2010)."""
    lf = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, N + 1)))])  # log k!

    def lchoose(n: np.ndarray, k: np.ndarray) -> np.ndarray:
        ok = (k >= 0) & (k <= n)
        return np.where(
            ok, lf[np.clip(n, 0, N)] - lf[np.clip(k, 0, N)] - lf[np.clip(n - k, 0, N)], -np.inf
        )

    a = np.arange(N + 1)[:, None, None]
    bb = np.arange(N + 1)[None, :, None]
    n = np.arange(N + 1)[None, None, :]
    logp = lchoose(a, n) + lchoose(N - a, bb - n) - lchoose(np.full_like(bb, N), bb)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = (n / N) * np.log(N * n / (a * bb))
    term = np.where((n >= 1) & np.isfinite(logp), term, 0.0)
    return (term * np.exp(logp)).sum(axis=2)


def null_mi(E: Any, y: Any) -> np.ndarray:
    """Exact mean of plug-in MI under the permutation null (y shuffled across programs), nats.

    It is the hypergeometric expected MI of adjusted MI (Vinh, Epps & Bailey 2010): with the
    pass count a of a test and the level counts b_c of y fixed, E[MI] = Σ_c h(a, b_c) +
    h(m − a, b_c). No Monte Carlo: one (m+1)² table serves the whole batch.
    """
    b = _prepare(E, y, "null_mi")
    return _out(b, _null(b))


def _null(b: _Batch) -> np.ndarray:
    h = _emi_table(b.m)
    lv = _level_counts(b)  # (T, L)
    a = b.E.sum(axis=1)  # (T, K)
    # per task, EMI for every possible pass count a: (T, m+1)
    per_a = h[:, lv].sum(axis=2).T + h[::-1][:, lv].sum(axis=2).T
    return np.take_along_axis(per_a, a, axis=1)


def entropy(y: Any) -> np.ndarray:
    """Plug-in entropy H(y) in nats of the level histogram: a float for ``(m,)``, ``(T,)`` for
    ``(T, m)``. It bounds every test's MI (I ≤ H(y)) whatever the tests are (seed 003)."""
    v = np.asarray(y, dtype=float)
    if v.ndim not in (1, 2) or v.shape[-1] < 1:
        raise ConfigError(
            f"The 'y' parameter of entropy must have shape (m,) or (T, m) with m >= 1. "
            f"Got shape {v.shape}."
        )
    b = _prepare(
        np.zeros((*v.shape, 1), bool) if v.ndim == 2 else np.zeros((v.size, 1), bool), v, "entropy"
    )
    lv = _level_counts(b)
    h = np.log(b.m) - _clogc(b.m)[lv].sum(axis=1) / b.m
    h = np.maximum(h, 0.0)
    return h[0] if b.squeeze else h


@dataclass(frozen=True)
class PermutationNull(JsonMixin):
    """Plug-in MI under ``n_perm`` shuffles of y: mean, spread, standard error of the mean and the
    one-sided p-value (k + 1)/(n_perm + 1), k = shuffles with MI ≥ the observed one."""

    mean: np.ndarray  # (K,) or (T, K) nats
    sd: np.ndarray  # ddof = 1
    se: np.ndarray  # sd / sqrt(n_perm)
    pvalue: np.ndarray
    n_perm: int


@validate_params(
    {
        "n_perm": [Interval(int, 2, MAX_RESAMPLES)],
        "rng": ["rng"],
        "chunk_cells": [Interval(int, 1, 2**40)],
    }
)
def permutation_null(
    E: Any, y: Any, *, n_perm: int = 200, rng: Any, chunk_cells: int = 2**22
) -> PermutationNull:
    """Shuffle y across the programs of each task ``n_perm`` times (the same shuffle for every
    test of a task, as the seed's FROST step 2) and recompute every test's plug-in MI.

    Memory stays bounded: tasks are processed in chunks of about ``chunk_cells`` count cells
    (tests × permutations × levels), a few tens of MiB.
    """
    func = "permutation_null"
    gen = as_generator(rng, func)
    b = _prepare(E, y, func)
    T, m, K = b.E.shape
    check_memory(
        n_perm,
        "n_perm",
        func,
        nbytes=T * n_perm * m * 8 * 2,
        formula="2 × n_perm × T × m × 8 bytes",
    )
    obs = _plugin(b)
    mean = np.empty((T, K))
    sd = np.empty((T, K))
    ge = np.empty((T, K), dtype=np.intp)
    J = _joint_table(m)
    lv = _level_counts(b)
    marg = _marginal_term(b, b.E.sum(axis=1), lv)
    perms = gen.permuted(np.broadcast_to(np.arange(m), (T, n_perm, m)), axis=-1)  # (T, P, m)
    bits = m <= 64 and hasattr(np, "bitwise_count")
    if bits:  # each pass column and each shuffled level as an m-bit mask; cells are popcounts
        ut = np.uint16 if m <= 16 else np.uint32 if m <= 32 else np.uint64  # narrow = fast
        w = np.left_shift(ut(1), np.arange(m, dtype=ut))  # (m,)
        emask = (b.E.astype(ut) * w[None, :, None]).sum(axis=1, dtype=ut)  # (T, K)
    chunk_tasks = max(1, chunk_cells // (K * n_perm * b.n_levels))
    for s in range(0, T, chunk_tasks):
        sl = slice(s, s + chunk_tasks)
        codes = np.take_along_axis(b.codes[sl, None, :], perms[sl], axis=2)  # (t, P, m)
        t = codes.shape[0]
        if bits:
            lmask = np.zeros((t, n_perm, b.n_levels), dtype=ut)
            levels = np.arange(b.n_levels)
            for i in range(m):
                lmask |= (codes[:, :, i, None] == levels).astype(ut) * w[i]
            n1 = np.bitwise_count(emask[sl, :, None, None] & lmask[:, None, :, :])  # (t, K, P, L)
        else:  # one (K, m) @ (m, P·L) product per task
            z = _onehot(codes.transpose(0, 2, 1), b.n_levels).reshape(t, m, n_perm * b.n_levels)
            n1 = np.rint(np.matmul(b.E[sl].transpose(0, 2, 1).astype(np.float32), z))
            n1 = n1.astype(np.intp).reshape(t, K, n_perm, b.n_levels)
        base = (lv[sl] * (m + 1)).astype(np.uint16 if (m + 1) ** 2 < 2**16 else np.intp)
        joint = J.ravel()[base[:, None, None, :] + n1].sum(axis=3)  # (t, K, P)
        mi = np.maximum((marg[sl, :, None] + joint) / m, 0.0)
        mean[sl] = mi.mean(axis=2)
        sd[sl] = mi.std(axis=2, ddof=1)
        ge[sl] = (mi >= obs[sl, :, None] - _TIE_TOL).sum(axis=2)
    pvalue = (ge + 1) / (n_perm + 1)
    se = sd / np.sqrt(n_perm)
    return PermutationNull(_out(b, mean), _out(b, sd), _out(b, se), _out(b, pvalue), n_perm)


# ---------------------------------------------------------------------------------------------
# rewards


@dataclass(frozen=True)
class IGRewards(JsonMixin):
    """Per-test IG rewards with everything needed to read them: the raw plug-in MI, the
    correction subtracted, the covariance gate, and the task-level ceiling H(y) and Ĉ."""

    reward: np.ndarray  # (K,) or (T, K): gate · (mi − correction_term), nats
    mi: np.ndarray  # plug-in MI
    correction_term: np.ndarray  # what was subtracted (zeros for "none")
    gate_open: np.ndarray  # bool: cov(column, y) > 0 (all True for gate="none")
    covariance: np.ndarray
    h_y: np.ndarray | float  # (T,) or scalar
    c_hat: np.ndarray | int  # non-empty y levels per task
    correction: str
    gate: str
    null: PermutationNull | None = None  # for correction="permutation"


@validate_params(
    {
        "gate": [Options(GATE_MODES)],
        "correction": [Options(CORRECTIONS)],
        "n_perm": [Interval(int, 2, MAX_RESAMPLES)],
        "rng": ["rng", None],
    }
)
def ig_rewards(
    E: Any,
    y: Any,
    *,
    gate: str = "covariance",
    correction: str = "none",
    n_perm: int = 200,
    rng: Any = None,
) -> IGRewards:
    """Reward each test by the information its pass column carries about y (seed 003):

        r_j = 1[cov(E_:,j, y) > 0] · (Î(E_:,j; y) − correction_j)

    ``correction``: "none" (CoVer's protocol), "miller_madow" ((Ŝ − R̂ − Ĉ + 1)/(2m)),
    "exact_null" (the hypergeometric permutation mean) or "permutation" (``n_perm`` shuffles;
    needs ``rng``). Corrected rewards may be negative: that is the estimate, not clipped. A
    constant column has MI 0, every correction 0 and covariance 0, so its reward is exactly 0.
    """
    func = "ig_rewards"
    b = _prepare(E, y, func)
    mi = _plugin(b)
    null = None
    if correction == "none":
        term = np.zeros_like(mi)
    elif correction == "miller_madow":
        term = _mm(b)
    elif correction == "exact_null":
        term = _null(b)
    else:
        if rng is None:
            raise ConfigError(
                "The 'rng' parameter of ig_rewards must be an int seed or a numpy.random."
                "Generator when correction='permutation'. Got None."
            )
        full = permutation_null(b.E, b.values, n_perm=n_perm, rng=rng)  # (T, K) fields
        term = full.mean
        null = PermutationNull(
            _out(b, full.mean), _out(b, full.sd), _out(b, full.se), _out(b, full.pvalue), n_perm
        )
    ef = b.E.astype(float)
    cov = (ef * b.values[:, :, None]).mean(axis=1) - ef.mean(axis=1) * b.values.mean(axis=1)[
        :, None
    ]
    open_ = cov > _COV_TOL if gate == "covariance" else np.ones_like(cov, dtype=bool)
    reward = np.where(open_, mi - term, 0.0)
    lv = _level_counts(b)
    h = np.maximum(np.log(b.m) - _clogc(b.m)[lv].sum(axis=1) / b.m, 0.0)
    c_hat = (lv > 0).sum(axis=1)
    return IGRewards(
        reward=_out(b, reward),
        mi=_out(b, mi),
        correction_term=_out(b, term),
        gate_open=_out(b, open_),
        covariance=_out(b, cov),
        h_y=float(h[0]) if b.squeeze else h,
        c_hat=int(c_hat[0]) if b.squeeze else c_hat,
        correction=correction,
        gate=gate,
        null=null,
    )
