"""P3: sweep the dual-pool weight α of arm C in the simulation (seed 003).

    >>> from rewardkit.selfplay.alpha_sweep import alpha_sweep
    >>> s = alpha_sweep(alphas=(0.0, 0.5, 1.0), steps=20, n_seeds=1, rng=0)
    >>> [r.alpha for r in s.rows]
    [0.0, 0.5, 1.0]

P3 predicts that the best α is strictly inside (0, 1): α = 0 is CoVer (the suite's reward
follows the moving pool) and α = 1 lets the verifier overfit the frozen pool. "Best" here is
the highest final D_s among the α whose final pass@1, paired by seed with α = 0, is not more
than ``tolerance`` (P2's one point) below it. Every α runs with the same seeds and the same
common random numbers, so the comparison is paired. A simulation, not LLM training.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .._json import JsonMixin
from .._validation import Each, Interval, validate_params
from ..errors import ConfigError
from .bank import TaskBank, load_bank
from .executor import Executor, owned_executor
from .simulate import SimConfig, simulate

__all__ = ["AlphaRow", "AlphaSweep", "alpha_sweep"]


@dataclass(frozen=True)
class AlphaRow(JsonMixin):
    alpha: float
    final_D_s: float  # mean over seeds of the last-50-step mean
    final_pass_at_1: float
    pass_at_1_minus_alpha0: tuple[float, ...]  # per seed
    eligible: bool  # pass@1 within tolerance of α = 0 at every seed


@dataclass(frozen=True)
class AlphaSweep(JsonMixin):
    rows: tuple[AlphaRow, ...]
    best_alpha: float | None
    p3_holds: bool  # best α strictly inside (0, 1) and both ends below it
    tolerance: float
    steps: int
    n_seeds: int


@validate_params(
    {
        "alphas": [Each((Interval(float, 0, 1),), min_len=1)],
        "steps": [Interval(int, 1, 10**6)],
        "rng": ["rng"],
        "n_seeds": [Interval(int, 1, 10**4)],
        "tolerance": [Interval(float, 0, None)],
    }
)
def alpha_sweep(
    alphas: Sequence[float] = (0.0, 0.25, 0.5, 0.75, 1.0),
    steps: int = 350,
    *,
    rng: Any = 0,
    n_seeds: int = 3,
    tolerance: float = 0.01,
    config: SimConfig | None = None,
    bank: TaskBank | None = None,
    executor: Executor | None = None,
) -> AlphaSweep:
    """Run arm C once per α (same seeds) and read P3 off the final D_s and pass@1."""
    func = "alpha_sweep"
    vals = [float(a) for a in alphas]
    if 0.0 not in vals or len(set(vals)) != len(vals):
        raise ConfigError(
            f"The 'alphas' parameter of {func} must be distinct values in [0, 1] including 0.0 "
            f"(the paired reference). Got {list(alphas)!r}."
        )
    cfg = config or SimConfig()
    bank = bank or load_bank()
    finals: dict[float, tuple[list[float], list[float]]] = {}
    with owned_executor(executor) as ex:
        for a in sorted(vals):
            sim = simulate(
                ("C",),
                steps,
                rng=rng,
                n_seeds=n_seeds,
                config=replace(cfg, alpha=a),
                bank=bank,
                executor=ex,
            )
            last = [[r for r in sim.records if r["seed"] == s][-50:] for s in range(n_seeds)]
            finals[a] = (
                [float(np.mean([r["D_s"] for r in x])) for x in last],
                [float(np.mean([r["pass_at_1"] for r in x])) for x in last],
            )
    base = finals[0.0][1]
    rows = []
    for a in sorted(vals):
        ds, p1 = finals[a]
        diff = tuple(p - b for p, b in zip(p1, base))
        rows.append(
            AlphaRow(
                a, float(np.mean(ds)), float(np.mean(p1)), diff, all(d >= -tolerance for d in diff)
            )
        )
    ok = [r for r in rows if r.eligible]
    best = max(ok, key=lambda r: r.final_D_s) if ok else None
    ends = [r for r in rows if r.alpha in (0.0, 1.0)]
    holds = (
        best is not None
        and 0.0 < best.alpha < 1.0
        and all(e.final_D_s < best.final_D_s for e in ends)
    )
    return AlphaSweep(
        tuple(rows), None if best is None else best.alpha, holds, tolerance, steps, n_seeds
    )
