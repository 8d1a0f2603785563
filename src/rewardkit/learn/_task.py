"""What an experiment of ``rewardkit learn`` is made of: a task, its arms and its settings.

A :class:`LearnTask` knows its prompts and labels, the warm-start targets, one TRL reward
function per arm, the per-batch statistics logged during training and the held-out metrics.
:class:`Settings` holds the training hyperparameters; both go into the pre-registration.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .._json import JsonMixin

__all__ = ["LearnTask", "Metric", "Settings"]

RewardFunc = Callable[..., list[float]]


@dataclass(frozen=True)
class Metric(JsonMixin):
    """A held-out metric and the direction in which it is better."""

    name: str
    better: str  # "lower" | "higher"
    definition: str


@dataclass(frozen=True)
class Settings(JsonMixin):
    """Model, warm start, GRPO and evaluation settings (all pre-registered)."""

    hidden_size: int = 64
    layers: int = 2
    warm_steps: int = 400
    warm_batch: int = 64
    warm_lr: float = 1e-3
    warm_pairs: int = 2000
    batch_size: int = 32  # completions per GRPO step
    num_generations: int = 8  # completions per prompt (the GRPO group)
    learning_rate: float = 1e-3
    temperature: float = 1.0
    max_completion_length: int = 8
    eval_samples: int = 16  # sampled answers per held-out prompt
    eval_every: int = 50  # steps between points of the held-out curve
    threads: int = 1  # torch threads during a run (restored after)


class LearnTask(Protocol):
    """The task side of an experiment (see calibration.py and gating.py)."""

    name: str
    arms: tuple[str, ...]
    reference: str  # the arm every other arm is compared with
    words: tuple[str, ...]  # whole-word tokens of the tokenizer (answer tags)
    metrics: tuple[Metric, ...]
    curve_metric: str  # the per-step training statistic plotted over training
    hypotheses: tuple[str, ...]

    def describe(self) -> dict[str, Any]: ...

    def eval_prompts(self) -> list[str]: ...

    def warm_pairs(self, n: int, rng: np.random.Generator) -> list[tuple[str, str]]: ...

    def train_rows(self, n: int, rng: np.random.Generator) -> dict[str, list[Any]]: ...

    def reward_func(self, arm: str, stats: list[dict[str, float]]) -> RewardFunc: ...

    def evaluate(
        self, prompts: Sequence[str], texts: Sequence[str], rng: np.random.Generator
    ) -> dict[str, float]: ...
