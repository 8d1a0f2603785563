"""``rewardkit learn calibration``: does a proper scoring rule teach calibrated probabilities?

Task (synthetic, the truth known): the prompt ``"a=3 b=1:"`` encodes two features a, b in
0..4; the true probability is ``p(a, b) = 1 / (1 + exp(−0.8·(a − b)))`` and a training label is
``y ~ Bernoulli(p(a, b))``. The model answers ``<probability>0.xx</probability>``. The warm
start teaches that format only: its targets are two uniformly random digits, independent of
the prompt, so the warm-started model knows the format and nothing about p.

Arms (one TRL reward function each):

- ``brier``: rewardkit's Brier reward ``1 − (p − y)²`` (invalid → 0), :mod:`rewardkit.autorater`;
- ``log``: rewardkit's clipped log reward (eps = 1e-3, invalid → log eps);
- ``improper`` (reference): the reward users write first — 1 when the rounded probability
  equals the label (``p ≥ 0.5`` ↔ ``y = 1``), else 0; invalid → 0.

Held-out metrics over ``eval_samples`` sampled answers per prompt (all 25 prompts) with fresh
labels: ECE (10 bins), mean ``|p̂ − p(x)|`` of the sampled answers, parse-failure rate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._completion import completion_text
from ..autorater import expected_calibration_error, make_reward_func, parse_probability
from ._task import Metric, RewardFunc

__all__ = ["CalibrationTask", "true_probability"]

SLOPE = 0.8
LEVELS = 5
TAGS = ("<probability>", "</probability>")


def true_probability(a: int, b: int) -> float:
    """p(a, b) = 1 / (1 + exp(−0.8·(a − b)))."""
    return 1.0 / (1.0 + math.exp(-SLOPE * (a - b)))


def _prompt(a: int, b: int) -> str:
    return f"a={a} b={b}:"


def _features(prompt: str) -> tuple[int, int]:
    a, b = prompt.rstrip(":").split()
    return int(a[2:]), int(b[2:])


def _improper(completions: Any = None, label: Any = None, **kw: Any) -> list[float]:
    out = []
    for c, y in zip(completions, label):
        p = parse_probability(completion_text(c))
        out.append(0.0 if p is None else float(int(p >= 0.5) == int(y)))
    return out


@dataclass(frozen=True)
class CalibrationTask:
    name: str = "calibration"
    arms: tuple[str, ...] = ("brier", "log", "improper")
    reference: str = "improper"
    words: tuple[str, ...] = TAGS
    metrics: tuple[Metric, ...] = (
        Metric("ece", "lower", "expected calibration error, 10 equal-width bins, sampled "
               "answers against fresh held-out labels y ~ Bernoulli(p(x))"),
        Metric("mae", "lower", "mean |p̂ − p(x)| over the valid sampled answers"),
        Metric("parse_failure_rate", "lower", "share of sampled answers the strict parser "
               "rejects"),
    )  # fmt: skip
    curve_metric: str = "mae"
    hypotheses: tuple[str, ...] = (
        "H1: after training, brier and log have a lower held-out mae than improper",
        "H2: after training, brier and log have a lower held-out ece than improper",
        "H3: brier and log lower their held-out mae relative to the warm start",
    )

    def describe(self) -> dict[str, Any]:
        return {
            "prompt": "a=<a> b=<b>:  (a, b in 0..4)",
            "true_probability": "p(a, b) = 1 / (1 + exp(-0.8 * (a - b)))",
            "label": "y ~ Bernoulli(p(a, b)), drawn per training row",
            "answer_format": "<probability>0.xx</probability>",
            "warm_start": "targets 0.00..0.99 drawn uniformly, independent of the prompt",
            "arms": {
                "brier": "rewardkit.autorater Brier reward (invalid -> 0)",
                "log": "rewardkit.autorater log reward, eps 1e-3 (invalid -> log eps)",
                "improper": "1 if (p >= 0.5) == y else 0 (invalid -> 0)",
            },
            "heldout": "all 25 prompts x eval_samples sampled answers, fresh labels",
        }

    def eval_prompts(self) -> list[str]:
        return [_prompt(a, b) for a in range(LEVELS) for b in range(LEVELS)]

    def warm_pairs(self, n: int, rng: np.random.Generator) -> list[tuple[str, str]]:
        ab = rng.integers(0, LEVELS, size=(n, 2))  # (n, 2)
        dd = rng.integers(0, 100, size=n)  # (n,) uniform, independent of the prompt
        return [
            (_prompt(int(a), int(b)), f"{TAGS[0]}0.{int(d):02d}{TAGS[1]}")
            for (a, b), d in zip(ab, dd)
        ]

    def train_rows(self, n: int, rng: np.random.Generator) -> dict[str, list[Any]]:
        ab = rng.integers(0, LEVELS, size=(n, 2))
        p = np.array([true_probability(int(a), int(b)) for a, b in ab])
        y = (rng.random(n) < p).astype(float)
        return {
            "prompt": [_prompt(int(a), int(b)) for a, b in ab],
            "label": [float(v) for v in y],
            "p_true": [float(v) for v in p],
        }

    def reward_func(self, arm: str, stats: list[dict[str, float | None]]) -> RewardFunc:
        base = _improper if arm == "improper" else make_reward_func(arm)  # type: ignore[arg-type]

        def reward(completions: Any = None, p_true: Any = None, **kw: Any) -> list[float]:
            r = base(completions=completions, **kw)
            ps = [parse_probability(completion_text(c)) for c in completions]
            err = [abs(p - q) for p, q in zip(ps, p_true) if p is not None]
            stats.append(
                {
                    "reward": float(np.mean(r)),
                    "parse_failure_rate": float(np.mean([p is None for p in ps])),
                    "mae": float(np.mean(err)) if err else None,
                }
            )
            return r

        reward.__name__ = f"{arm}_reward"
        return reward

    def evaluate(
        self, prompts: Sequence[str], texts: Sequence[str], rng: np.random.Generator
    ) -> dict[str, float | None]:
        truth = np.array([true_probability(*_features(p)) for p in prompts])  # (n,)
        y = (rng.random(len(truth)) < truth).astype(float)  # fresh held-out labels
        ps = [parse_probability(t) for t in texts]
        valid = np.array([p is not None for p in ps])
        cal = expected_calibration_error(ps, y)
        err = [abs(p - q) for p, q in zip(ps, truth) if p is not None]
        return {
            "ece": cal.ece,
            "mae": math.fsum(err) / len(err) if err else None,
            "parse_failure_rate": float(1.0 - valid.mean()),
        }
