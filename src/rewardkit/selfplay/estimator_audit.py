"""How biased is each IG estimator in *your* regime? Simulated tables with known MI.

    >>> from rewardkit.selfplay.estimator_audit import estimator_audit
    >>> a = estimator_audit(m=16, G=16, n_rep=400, rng=0)
    >>> row = a.row("independent", "none")
    >>> round(row.true_mi, 3), row.bias > 0.25       # plug-in MI on pure noise at m = 16
    (0.0, True)

Model: y takes one of G + 1 equally likely levels c/G; a test passes with probability
sigmoid(β·(c/G − ½)). β = 0 is independence, larger β a stronger dependence. The true MI is
computed exactly from that joint law; each replicate draws m programs, and every correction of
:func:`ig_rewards` (gate off) is scored by its bias and RMSE against the truth. The statistics
notes found at m = 16, 17 levels: plug-in ≈ +0.38 nats on noise, Miller–Madow removing only a
small part, the null-mean correction unbiased at zero but over-correcting strong signals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._json import JsonMixin
from .._rng import as_generator
from .._validation import MAX_RESAMPLES, Interval, check_memory, validate_params
from ..errors import ConfigError
from .infogain import CORRECTIONS, ig_rewards

__all__ = ["AuditRow", "EstimatorAudit", "SCENARIOS", "estimator_audit"]

SCENARIOS: dict[str, float] = {"independent": 0.0, "weak": 3.0, "strong": 20.0}  # name → β


@dataclass(frozen=True)
class AuditRow(JsonMixin):
    scenario: str
    beta: float
    true_mi: float  # nats
    correction: str
    mean: float
    bias: float  # mean − true
    rmse: float


@dataclass(frozen=True)
class EstimatorAudit(JsonMixin):
    m: int
    G: int
    n_rep: int
    rows: tuple[AuditRow, ...]

    def row(self, scenario: str, correction: str) -> AuditRow:
        for r in self.rows:
            if r.scenario == scenario and r.correction == correction:
                return r
        raise ConfigError(
            f"The 'scenario' / 'correction' parameters of EstimatorAudit.row must name a row. "
            f"Got {scenario!r}, {correction!r}."
        )


def _h2(p: np.ndarray) -> np.ndarray:
    q = np.clip(p, 1e-300, 1.0)
    r = np.clip(1.0 - p, 1e-300, 1.0)
    return -(p * np.log(q) + (1.0 - p) * np.log(r))


@validate_params(
    {
        "m": [Interval(int, 2, 10_000)],
        "G": [Interval(int, 1, 10_000)],
        "n_rep": [Interval(int, 2, 10**7)],
        "n_perm": [Interval(int, 2, MAX_RESAMPLES)],
        "rng": ["rng"],
    }
)
def estimator_audit(
    m: int = 16,
    G: int = 16,
    *,
    scenarios: dict[str, float] | None = None,
    n_rep: int = 2000,
    n_perm: int = 100,
    rng: Any = 0,
) -> EstimatorAudit:
    """Bias and RMSE of plug-in, Miller–Madow, exact-null and permutation-null IG at (m, G)."""
    func = "estimator_audit"
    check_memory(n_rep, "n_rep", func, nbytes=n_rep * m * G * 8, formula="n_rep × m × G × 8 bytes")
    gen = as_generator(rng, func)
    levels = np.arange(G + 1) / G
    rows = []
    for name, beta in (scenarios or SCENARIOS).items():
        p_pass = 1.0 / (1.0 + np.exp(-beta * (levels - 0.5)))  # (G+1,)
        true = float(_h2(np.array(p_pass.mean())) - _h2(p_pass).mean())
        y = levels[gen.integers(0, G + 1, size=(n_rep, m))]  # (n_rep, m)
        p = 1.0 / (1.0 + np.exp(-beta * (y - 0.5)))
        E = (gen.random((n_rep, m)) < p)[:, :, None]  # (n_rep, m, 1)
        for corr in CORRECTIONS:
            est = ig_rewards(E, y, gate="none", correction=corr, n_perm=n_perm, rng=gen).reward[
                :, 0
            ]
            rows.append(
                AuditRow(
                    name,
                    float(beta),
                    true,
                    corr,
                    float(est.mean()),
                    float(est.mean() - true),
                    float(np.sqrt(((est - true) ** 2).mean())),
                )
            )
    return EstimatorAudit(m, G, n_rep, tuple(rows))
