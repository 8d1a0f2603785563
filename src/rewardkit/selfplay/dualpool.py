"""Dual-pool information gain and the coverage term (seed 003, FROST steps 3–4).

    >>> import numpy as np
    >>> from rewardkit.selfplay.dualpool import dual_pool_rewards
    >>> E = np.array([[1, 1], [1, 0], [0, 1], [0, 0]], bool); y = np.array([1, 1, 0.5, 0])
    >>> P = np.array([[1, 0], [0, 1], [0, 0]], bool); yp = np.array([1.0, 0.5, 0.0])
    >>> r = dual_pool_rewards(E, y, P, yp, alpha=0.5, lam=0.2)
    >>> r.reward.round(4).tolist()
    [0.8648, 0.2733]

    I_mix = α·Î(E_P0; y_P0) + (1 − α)·Î(E; y),     r_j = I_mix,j + λ·d_j

E is the active pool's execution table, E_P0 the frozen probe pool P0 run on the same tests, d_j
the share of P0's buggy members (y < 1) that test j rejects. Both IG terms use the same gate and
correction. With α = λ = 0 the reward is CoVer's plain protocol, bit for bit. Running P0 costs
|P0|·k extra executions per task and step (reported by the simulation).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._json import JsonMixin
from .._validation import MAX_RESAMPLES, Interval, Options, validate_params
from ..errors import ConfigError
from .infogain import CORRECTIONS, GATE_MODES, ig_rewards
from .probes import detection_from_table

__all__ = ["DualPoolRewards", "dual_pool_rewards"]


@dataclass(frozen=True)
class DualPoolRewards(JsonMixin):
    reward: np.ndarray  # (k,) or (T, k)
    i_active: np.ndarray  # gated, corrected IG on the active pool
    i_probe: np.ndarray  # gated, corrected IG on P0
    i_mix: np.ndarray
    d: np.ndarray  # per-test detection on P0
    alpha: float
    lam: float


@validate_params(
    {
        "alpha": [Interval(float, 0, 1)],
        "lam": [Interval(float, 0, None)],
        "gate": [Options(GATE_MODES)],
        "correction": [Options(CORRECTIONS)],
        "n_perm": [Interval(int, 2, MAX_RESAMPLES)],
        "rng": ["rng", None],
    }
)
def dual_pool_rewards(
    E: Any,
    y: Any,
    E_p0: Any,
    y_p0: Any,
    *,
    alpha: float = 0.0,
    lam: float = 0.0,
    gate: str = "covariance",
    correction: str = "none",
    n_perm: int = 200,
    rng: Any = None,
) -> DualPoolRewards:
    """Per-test reward r = I_mix + λ·d_j over a batch (see the module docstring)."""
    func = "dual_pool_rewards"
    a, lam_ = float(alpha), float(lam)
    e, ep = np.asarray(E), np.asarray(E_p0)
    if e.ndim != ep.ndim or e.shape[-1] != ep.shape[-1] or e.shape[:-2] != ep.shape[:-2]:
        raise ConfigError(
            f"The 'E_p0' parameter of {func} must run P0 on the same tests as E: shape "
            f"(..., n_P0, {e.shape[-1]}) matching E {e.shape}. Got {ep.shape}."
        )
    act = ig_rewards(E, y, gate=gate, correction=correction, n_perm=n_perm, rng=rng)
    probe = ig_rewards(E_p0, y_p0, gate=gate, correction=correction, n_perm=n_perm, rng=rng)
    yp = np.asarray(y_p0, dtype=float)
    if ep.ndim == 2:
        d = detection_from_table(ep.astype(bool), yp)[2]
    else:
        d = np.stack([detection_from_table(p.astype(bool), q)[2] for p, q in zip(ep, yp)])
    i_mix = a * probe.reward + (1.0 - a) * act.reward
    return DualPoolRewards(i_mix + lam_ * d, act.reward, probe.reward, i_mix, d, a, lam_)
