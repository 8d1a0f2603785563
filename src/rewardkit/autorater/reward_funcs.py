"""TRL-ready reward functions: the autorater's completions scored against a ``label`` column.

Usage::

    from trl import GRPOTrainer
    from rewardkit.autorater import brier_reward_func, log_reward_func
    trainer = GRPOTrainer(model=..., reward_funcs=[brier_reward_func], train_dataset=ds)
    # ds has a "prompt" column and a "label" column: 1 when B is better, 0 when A is, or a
    # fractional soft label.

TRL calls a reward function with keyword arguments only: ``prompts``, ``completions``,
``completion_ids`` and one list per dataset column (here ``label``), plus ``trainer_state``,
``log_extra`` and ``log_metric`` (TRL ≥ 1.0). ``completions`` holds strings for standard datasets
and lists of message dicts (``[{"role": "assistant", "content": "…"}]``) for conversational
ones; the text scored is the content of the last message. The function returns one float per
completion and never None: a parse failure is a scored outcome (0 for Brier, log eps for log),
not an unscorable row. When TRL passes ``log_metric``, the share of parse failures in the batch
is logged as ``autorater/<name>/parse_failure_rate``.

Use :func:`make_reward_func` for another label column, eps or tag.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from .._completion import completion_text
from .._validation import Interval, Options, validate_params
from ..errors import ConfigError
from .parse import DEFAULT_TAG, _check_tag, parse_probability
from .rewards import DEFAULT_EPS, RULES, proper_rewards

__all__ = ["brier_reward_func", "log_reward_func", "make_reward_func"]

RewardFunc = Callable[..., list[float]]


@validate_params({"rule": [Options(RULES)], "eps": [Interval(float, 0, 0.5, closed="neither")]})
def make_reward_func(
    rule: Literal["brier", "log"],
    *,
    label_column: str = "label",
    eps: float = DEFAULT_EPS,
    tag: str = DEFAULT_TAG,
    name: str | None = None,
) -> RewardFunc:
    """A TRL reward function scoring completions with ``rule`` against ``label_column``."""
    func = "make_reward_func"
    eps = float(eps)
    tag = _check_tag(tag)
    if not isinstance(label_column, str) or not label_column:
        raise ConfigError(
            f"The 'label_column' parameter of {func} must be a non-empty str. Got {label_column!r}."
        )
    fname = name or f"autorater_{rule}"

    def reward_func(
        prompts: Any = None, completions: Any = None, completion_ids: Any = None, **kwargs: Any
    ) -> list[float]:
        if completions is None:
            raise ConfigError(f"{fname} needs the 'completions' argument (one per sample).")
        if label_column not in kwargs:
            raise ConfigError(
                f"{fname} needs the dataset column '{label_column}' (labels in [0, 1], 1 when "
                f"B is better); the columns passed were {sorted(kwargs)}."
            )
        texts = [completion_text(c) for c in completions]
        rewards = proper_rewards(texts, kwargs[label_column], rule=rule, eps=eps, tag=tag)
        log_metric = kwargs.get("log_metric")
        if callable(log_metric) and texts:
            failed = np.mean([parse_probability(t, tag=tag) is None for t in texts])
            log_metric(f"autorater/{fname}/parse_failure_rate", float(failed))
        return [float(r) for r in rewards]

    reward_func.__name__ = reward_func.__qualname__ = fname
    reward_func.__doc__ = (
        f"TRL reward function: the {rule} proper reward of each completion's "
        f"<{tag}> probability against the '{label_column}' column."
    )
    return reward_func


brier_reward_func = make_reward_func("brier", name="brier_reward_func")
log_reward_func = make_reward_func("log", name="log_reward_func")
