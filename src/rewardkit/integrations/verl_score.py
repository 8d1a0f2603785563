"""The verl ``compute_score`` implementation (see :mod:`rewardkit.integrations.verl`).

It lives in an importable module on purpose: verl loads a reward *file* as a module named
``custom_module_<hash>`` that is not in ``sys.modules``, so cloudpickle ships everything
defined in that file by value to the ``remote`` manager's Ray workers — a module-level cache
defined there cannot be pickled (``PicklingError``). The file verl loads
(``integrations/verl.py``) only re-exports these functions, which pickle by reference.
PRIME's process pool pickles with the standard pickle, which needs the same.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from rewardkit._completion import completion_text
from rewardkit._validation import Interval, validate_params
from rewardkit.errors import ConfigError
from rewardkit.integrations._common import (
    Target,
    check_fill,
    flat_record,
    record_keys,
    resolve,
    warn_if_fill_outranks,
)
from rewardkit.integrations.samplelog import SampleLog, open_log
from rewardkit.stack import RewardStack

__all__ = [
    "VerlScore",
    "compute_score",
    "compute_score_batch",
    "compute_score_prime",
    "make_compute_score",
]


class VerlScore:
    """The callable :func:`make_compute_score` returns; ``keys`` is its fixed key set."""

    def __init__(
        self, stack: RewardStack, name: str, none_score: float, log: SampleLog | None = None
    ) -> None:
        self.stack = stack
        self.__name__ = name
        self.none_score = none_score
        self.log = log  # one JSONL record per scored sample (log_path=)
        self.keys: tuple[str, ...] = ("score", "acc", *record_keys(stack))

    def __repr__(self) -> str:
        return f"VerlScore(name={self.__name__!r}, none_score={self.none_score})"

    def __call__(
        self,
        data_source: Any = None,
        solution_str: str | None = None,
        ground_truth: Any = None,
        extra_info: Any = None,
        **kwargs: Any,
    ) -> dict[str, float]:
        if not isinstance(solution_str, str):
            raise ConfigError(
                f"The 'solution_str' parameter of compute_score must be the decoded response "
                f"(a str). Got {type(solution_str).__name__}."
            )
        episode = {
            **kwargs,
            "data_source": data_source,
            "completion": solution_str,
            "text": completion_text(solution_str),
            "ground_truth": ground_truth,
            "extra_info": extra_info,
        }
        result = self.stack.score(episode)
        if self.log is not None:
            self.log.write(self.stack, [episode], [result])
        score = self.none_score if result.total is None else float(result.total)
        return {"score": score, "acc": score, **flat_record(self.stack, result, self.none_score)}

    def batch(
        self,
        data_sources: Sequence[Any],
        solution_strs: Sequence[str],
        ground_truths: Sequence[Any],
        extra_infos: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> list[dict[str, float]]:
        """verl's ``batch`` reward manager form: one call, lists in, one dict per sample out."""
        n = len(solution_strs)
        infos = [None] * n if extra_infos is None else list(extra_infos)
        if not len(data_sources) == len(ground_truths) == len(infos) == n:
            raise ConfigError(
                "The 'data_sources', 'solution_strs', 'ground_truths' and 'extra_infos' "
                f"parameters of compute_score_batch must have equal lengths. Got "
                f"{len(data_sources)}, {n}, {len(ground_truths)}, {len(infos)}."
            )
        return [
            self(ds, s, gt, info, **kwargs)
            for ds, s, gt, info in zip(data_sources, solution_strs, ground_truths, infos)
        ]


@validate_params({"none_score": [Interval(float, None, None)]})
def make_compute_score(
    stack_or_fn: Target,
    *,
    name: str | None = None,
    none_score: float = 0.0,
    log_path: str | os.PathLike[str] | None = None,
) -> VerlScore:
    """A verl ``compute_score`` for ``stack_or_fn`` (a stack or ``fn(episode) -> float | None``).

    ``none_score``: the score verl receives when the episode cannot be scored (``masked=1``).
    ``log_path``: a JSONL file that gets one record per scored sample, with the real ``None``
    (:mod:`rewardkit.integrations.samplelog`), which ``rewardkit calibrate --rewards`` reads.
    """
    stack, name = resolve(stack_or_fn, name, "make_compute_score")
    fill = float(none_score)
    warn_if_fill_outranks(stack, fill, "none_score", "make_compute_score")
    return VerlScore(
        stack,
        name,
        fill,
        open_log(log_path, trainer="verl", name=name, func="make_compute_score"),
    )


@lru_cache(maxsize=32)
def _resolve(reward: str, none_score: float, log_path: str | None = None) -> VerlScore:
    module, sep, attr = reward.partition(":")
    if not sep or not module or not attr:
        raise ConfigError(
            f"The 'reward' parameter of compute_score must be 'package.module:attribute' naming "
            f"a RewardStack or a function episode -> float | None. Got {reward!r}."
        )
    try:
        obj: Any = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(
            f"The 'reward' parameter of compute_score names {reward!r}, which cannot be "
            f"imported: {exc}."
        ) from None
    return make_compute_score(obj, none_score=none_score, log_path=log_path)


def _reward(reward: Any, none_score: Any, log_path: Any = None) -> VerlScore:
    fill = check_fill(none_score, "none_score", "compute_score")
    if isinstance(log_path, os.PathLike):
        log_path = os.fspath(log_path)
    if isinstance(reward, str):
        return _resolve(reward, fill, log_path)
    if reward is None:
        raise ConfigError(
            "The 'reward' parameter of compute_score is required: set "
            "reward.custom_reward_function.reward_kwargs.reward to 'package.module:attribute'. "
            "Got None."
        )
    return make_compute_score(reward, none_score=fill, log_path=log_path)


@validate_params({"none_score": [Interval(float, None, None)]})
def compute_score(
    data_source: Any = None,
    solution_str: str | None = None,
    ground_truth: Any = None,
    extra_info: Any = None,
    *,
    reward: Any = None,
    none_score: float = 0.0,
    log_path: str | None = None,
    **kwargs: Any,
) -> dict[str, float]:
    """verl's ``compute_score`` signature; ``reward`` (from ``reward_kwargs``) names the stack,
    ``log_path`` (also from ``reward_kwargs``) the sample log."""
    return _reward(reward, none_score, log_path)(
        data_source, solution_str, ground_truth, extra_info, **kwargs
    )


@validate_params({"none_score": [Interval(float, None, None)]})
def compute_score_batch(
    data_sources: Sequence[Any],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None,
    *,
    reward: Any = None,
    none_score: float = 0.0,
    log_path: str | None = None,
    **kwargs: Any,
) -> list[dict[str, float]]:
    """For verl's legacy ``batch`` reward manager (``verl.workers.reward_manager``); the
    reward-loop managers of verl ≥ 0.8 call :func:`compute_score` per sample."""
    return _reward(reward, none_score, log_path).batch(
        data_sources, solution_strs, ground_truths, extra_infos, **kwargs
    )


@validate_params({"none_score": [Interval(float, None, None)]})
def compute_score_prime(
    data_source: Any = None,
    solution_str: str | None = None,
    ground_truth: Any = None,
    extra_info: Any = None,
    *,
    reward: Any = None,
    none_score: float = 0.0,
    log_path: str | None = None,
    **kwargs: Any,
) -> float:
    """For verl's PRIME manager, which calls ``evaluation_func(task, completion, reference,
    extra_info)`` positionally in a process pool and keeps ``float(result)`` (a dict makes it
    fail, and any failure there becomes 0.0 silently): the score alone. Load it with
    ``pkg://rewardkit.integrations.verl`` so that it pickles into the pool."""
    out = _reward(reward, none_score, log_path)(
        data_source, solution_str, ground_truth, extra_info, **kwargs
    )
    return float(out["score"])
