"""A rewardkit reward as a TRL reward function (``GRPOTrainer`` / ``RLOOTrainer``).

Usage::

    from trl import GRPOConfig, GRPOTrainer
    from rewardkit.integrations.trl import reward_func

    f = reward_func(stack, name="anc")     # or reward_func(fn) for fn(episode) -> float | None
    trainer = GRPOTrainer(model=..., reward_funcs=[f], args=GRPOConfig(...), train_dataset=ds)
    # logs rewards/anc/mean and std, and through log_metric: anc/<component>,
    # anc/<component>/frac_none, anc/gate/<gate>, anc/frac_hard_failed, anc/frac_unscorable,
    # anc/frac_errors

TRL's contract (``GRPOTrainer._calculate_rewards``, TRL ≥ 1.0): the function is called with
keywords only, ``prompts``, ``completions``, ``completion_ids`` and one list per dataset column
(each aligned with the completions), plus ``trainer_state``, ``log_extra`` and ``log_metric``.
It returns one float or ``None`` per completion; ``None`` is TRL's "cannot score", turned into
NaN and left out of the baseline (an all-``None`` row is masked cleanly from TRL 1.6 on). The
name shown in ``rewards/<name>/mean`` is the callable's ``__name__``, which stays fixed.

Every completion becomes an episode dict (see :mod:`rewardkit.integrations._common`):
``prompt``, ``completion`` (text, or the list of chat messages for conversational data),
``text`` (the assistant text), ``completion_ids`` and every dataset column under its own name.
A crashing component is recorded in the stack's result (``last_results``) and the completion's
reward is ``None``; it never kills the batch. Metrics are means over this process's slice: TRL
averages them over processes and logging steps and drops NaN (a component that could score no
sample in a batch logs NaN, never 0).
"""

from __future__ import annotations

import asyncio
import math
import os
import re
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from .._completion import completion_text
from .._validation import Interval, validate_params
from ..errors import ConfigError, RewardkitWarning
from ..levels import DEFAULT_MAPPING, LevelMapping
from ..stack import RewardResult, RewardStack
from ._common import Target, resolve
from .levels import LEVELS_PARAMS, levels_stack
from .samplelog import SampleLog, open_log

__all__ = [
    "AsyncTRLReward",
    "TRLReward",
    "async_reward_func",
    "MixedNoneWarning",
    "mixed_none_warning",
    "environment",
    "fhir_reward_func",
    "levels_reward_func",
    "reward_func",
    "verdict_metrics",
]


class MixedNoneWarning(RewardkitWarning):
    """A rewardkit reward that can return None is one of several TRL reward functions."""


def mixed_none_warning(
    name: str, names: Sequence[str], weights: Sequence[float], aggregation: str
) -> str | None:
    """The warning for reward ``name`` among TRL's ``names`` (with ``weights``) under
    ``multi_objective_aggregation``, or None when its ``None`` keeps TRL's meaning ("cannot
    score": the row leaves the baseline), i.e. when no other function has a nonzero weight."""
    others = [n for n, w in zip(names, weights) if n != name and w != 0]
    if not others:
        return None
    if aggregation == "normalize_then_sum":
        effect = (
            "a None from it becomes 0 after its per-group z-score, i.e. the group's mean for "
            "that function (neither pushed up nor down), while the row stays in the baseline"
        )
    else:
        effect = (
            "TRL sums a None from it as 0 (nansum) whenever another function scored the row, "
            "so an unscorable episode ranks like a zero-reward one in its group"
        )
    return (
        f"The rewardkit reward {name!r} is one of several TRL reward functions "
        f"({', '.join(others)}); under multi_objective_aggregation={aggregation!r} {effect}. "
        f"Only a row where every function returns None is left out. Put the parts in one "
        f"RewardStack as components (one reward function) to keep None meaning 'cannot score'."
    )


def _warn_if_mixed(holder: Any, name: str) -> None:
    """Warn once (per ``holder``) when TRL's trainer, found on the call stack, mixes the reward
    ``name`` with other reward functions of nonzero weight."""
    if getattr(holder, "_mixed_checked", False):
        return
    holder._mixed_checked = True
    frame = sys._getframe(1)
    for _ in range(8):
        frame = frame.f_back  # type: ignore[assignment]
        if frame is None:
            return
        trainer: Any = frame.f_locals.get("self")
        if hasattr(trainer, "reward_func_names") and hasattr(
            trainer, "multi_objective_aggregation"
        ):
            rows = [
                (n, float(w))
                for f, n, w in zip(
                    trainer.reward_funcs,
                    trainer.reward_func_names,
                    trainer.reward_weights.tolist(),
                )
                if not getattr(f, "_rewardkit_metrics_only", False)
            ]
            msg = mixed_none_warning(
                name,
                [n for n, _ in rows],
                [w for _, w in rows],
                str(trainer.multi_objective_aggregation),
            )
            if msg is not None:
                warnings.warn(msg, MixedNoneWarning, stacklevel=3)
            return


# Keyword arguments TRL passes that are not per-completion dataset columns.
_TRAINER_KWARGS = ("trainer_state", "log_extra", "log_metric")
# Episode fields the adapter fills itself; a dataset column of that name would be shadowed.
_DERIVED = ("completion", "text")


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else math.nan


class TRLReward:
    """The callable :func:`reward_func` returns. ``last_results`` holds the latest batch's
    :class:`~rewardkit.stack.RewardResult` objects (errors and gate reasons included)."""

    def __init__(
        self,
        stack: RewardStack,
        name: str,
        *,
        log_components: bool = True,
        log: SampleLog | None = None,
    ) -> None:
        self.stack = stack
        self.__name__ = name  # TRL's get_callable_name reads __name__: rewards/<name>/mean
        self.__qualname__ = name
        self.log_components = log_components
        self.log = log  # one JSONL record per scored sample (log_path=)
        self.last_results: tuple[RewardResult, ...] = ()

    def _record(
        self,
        episodes: Sequence[dict[str, Any]],
        results: Sequence[RewardResult],
        kwargs: dict[str, Any],
    ) -> None:
        if self.log is not None:
            step = getattr(kwargs.get("trainer_state"), "global_step", None)
            self.log.write(
                self.stack, episodes, results, step=step if isinstance(step, int) else None
            )

    def __repr__(self) -> str:
        return f"TRLReward(name={self.__name__!r}, stack={self.stack!r})"

    def episodes(
        self,
        prompts: Sequence[Any] | None,
        completions: Sequence[Any],
        completion_ids: Sequence[Any] | None,
        columns: dict[str, Any],
    ) -> list[dict[str, Any]]:
        """The episode dicts for one call (exposed so that users can check what a stack sees)."""
        fn = f"reward function {self.__name__!r}"
        if isinstance(completions, str) or not isinstance(completions, Sequence):
            raise ConfigError(
                f"The 'completions' parameter of {fn} must be a list (one entry per "
                f"completion). Got {type(completions).__name__}."
            )
        n = len(completions)
        per_row: dict[str, Sequence[Any] | None] = {"prompt": prompts, "completion_ids": None}
        if completion_ids is not None:
            per_row["completion_ids"] = completion_ids
        for key, values in columns.items():
            if key in _DERIVED:
                raise ConfigError(
                    f"The dataset column {key!r} passed to {fn} collides with the episode "
                    f"field {key!r} that the adapter derives from the completion; rename the "
                    f"column (reserved: {', '.join(_DERIVED)})."
                )
            per_row[key] = values
        for key, values in per_row.items():
            if values is None:
                continue
            if isinstance(values, str) or not isinstance(values, Sequence) or len(values) != n:
                got = len(values) if isinstance(values, Sequence) else type(values).__name__
                raise ConfigError(
                    f"The {key!r} parameter of {fn} must be a list with one entry per "
                    f"completion ({n}), as TRL passes dataset columns. Got {got}."
                )
        episodes = []
        for i, c in enumerate(completions):
            ep: dict[str, Any] = {
                k: (None if v is None else v[i]) for k, v in per_row.items() if k != "prompt"
            }
            ep["prompt"] = None if prompts is None else prompts[i]
            ep["completion"] = c
            ep["text"] = completion_text(c)
            episodes.append(ep)
        return episodes

    def __call__(
        self,
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] | None = None,
        completion_ids: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        episodes = self._episodes_of_call(prompts, completions, completion_ids, kwargs)
        return self._totals(episodes, self.stack.score_batch(episodes), kwargs)

    def _episodes_of_call(
        self,
        prompts: Sequence[Any] | None,
        completions: Sequence[Any] | None,
        completion_ids: Sequence[Any] | None,
        kwargs: dict[str, Any],
    ) -> list[dict[str, Any]]:
        """The episodes of one call from TRL (its keywords checked)."""
        if completions is None:
            raise ConfigError(
                f"The 'completions' parameter of reward function {self.__name__!r} is required "
                f"(TRL passes it as a keyword). Got None."
            )
        _warn_if_mixed(self, self.__name__)
        columns = {k: v for k, v in kwargs.items() if k not in _TRAINER_KWARGS}
        return self.episodes(prompts, completions, completion_ids, columns)

    def _totals(
        self,
        episodes: list[dict[str, Any]],
        results: Sequence[RewardResult],
        kwargs: dict[str, Any],
    ) -> list[float | None]:
        """Keep and log the results of one call; the totals TRL gets."""
        self.last_results = tuple(results)
        self._record(episodes, results, kwargs)
        log_metric: Callable[[str, float], None] | None = kwargs.get("log_metric")
        if log_metric is not None and self.log_components:
            for key, value in self.metrics(results).items():
                log_metric(key, value)
        return [r.total for r in results]

    def metrics(self, results: Sequence[RewardResult]) -> dict[str, float]:
        """The scalars logged through ``log_metric``; the key set is fixed by the stack (all
        processes must log the same keys), a mean over no value is NaN (TRL drops it)."""
        p = self.__name__
        n = len(results)
        out: dict[str, float] = {}
        for c in self.stack.components:
            vals = [r.components[c.name] for r in results]
            present = [v for v in vals if v is not None]
            out[f"{p}/{c.name}"] = _mean(present)
            out[f"{p}/{c.name}/frac_none"] = (n - len(present)) / n if n else math.nan
        for g in self.stack.gates:
            passed = [r.gates[g.name] for r in results if r.gates.get(g.name) is not None]
            out[f"{p}/gate/{g.name}"] = _mean([float(v) for v in passed if v is not None])
        out[f"{p}/frac_hard_failed"] = _mean([float(r.hard_failed) for r in results])
        out[f"{p}/frac_unscorable"] = _mean([float(r.total is None) for r in results])
        out[f"{p}/frac_errors"] = _mean([float(bool(r.errors)) for r in results])
        return out


def reward_func(
    stack_or_fn: Target,
    *,
    name: str | None = None,
    log_components: bool = True,
    log_path: str | os.PathLike[str] | None = None,
) -> TRLReward:
    """A TRL reward function scoring each completion with ``stack_or_fn``.

    ``stack_or_fn``: a :class:`~rewardkit.stack.RewardStack`, or ``fn(episode) -> float | None``
    (then wrapped as a one-component stack). ``name``: the stable ``__name__`` TRL logs under
    (default: the function's ``__name__``, or ``rewardkit_<stack version>``). ``log_path``: a
    JSONL file that gets one record per scored completion (:mod:`rewardkit.integrations.samplelog`),
    which ``rewardkit calibrate --rewards`` reads.
    """
    stack, name = resolve(stack_or_fn, name, "reward_func")
    log = open_log(log_path, trainer="trl", name=name, func="reward_func")
    return TRLReward(stack, name, log_components=log_components, log=log)


class AsyncTRLReward(TRLReward):
    """An ``async`` TRL reward function: TRL runs it on its event loop together with the other
    async reward functions (``asyncio.gather``), and at most ``max_concurrency`` episodes are
    scored at once, each in a worker thread (for components that call an LLM judge or a
    sandbox over the network)."""

    def __init__(
        self,
        stack: RewardStack,
        name: str,
        *,
        max_concurrency: int,
        log_components: bool = True,
        log: SampleLog | None = None,
    ) -> None:
        super().__init__(stack, name, log_components=log_components, log=log)
        self.max_concurrency = max_concurrency

    async def __call__(  # type: ignore[override]
        self,
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] | None = None,
        completion_ids: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        episodes = self._episodes_of_call(prompts, completions, completion_ids, kwargs)
        limit = asyncio.Semaphore(self.max_concurrency)

        async def one(ep: dict[str, Any]) -> RewardResult:
            async with limit:
                return await asyncio.to_thread(self.stack.score, ep)

        results = list(await asyncio.gather(*(one(ep) for ep in episodes)))
        return self._totals(episodes, results, kwargs)


@validate_params({"max_concurrency": [Interval(int, 1, 10_000)], "log_components": ["boolean"]})
def async_reward_func(
    stack_or_fn: Target,
    *,
    name: str | None = None,
    max_concurrency: int = 8,
    log_components: bool = True,
    log_path: str | os.PathLike[str] | None = None,
) -> AsyncTRLReward:
    """Like :func:`reward_func`, but ``async``: for stacks whose components wait on an LLM judge
    or a remote service. ``max_concurrency``: episodes scored at once (a positive int)."""
    stack, name = resolve(stack_or_fn, name, "async_reward_func")
    log = open_log(log_path, trainer="trl", name=name, func="async_reward_func")
    return AsyncTRLReward(
        stack, name, max_concurrency=max_concurrency, log_components=log_components, log=log
    )


@validate_params(LEVELS_PARAMS)
def levels_reward_func(
    *,
    column: str = "step_levels",
    recipe: Literal["A", "B", "C"] = "B",
    mapping: LevelMapping = DEFAULT_MAPPING,
    gamma: float = 0.30,
    session: bool = False,
    name: str | None = None,
) -> TRLReward:
    """A TRL reward from step judgments in a dataset column, scored with ``score_trajectory``.

    Each row of ``column`` holds the judged steps of the completion (ints, ``{"level",
    "review"}`` dicts or :class:`~rewardkit.levels.Step`); see :func:`levels_stack`. A fully
    masked trajectory gives ``None``, never 0.
    """
    stack = levels_stack(
        column=column, recipe=recipe, mapping=mapping, gamma=gamma, session=session
    )
    return reward_func(stack, name=name or f"levels_{recipe}")


def fhir_reward_func(
    env_id: str = "fhir/anc-threshold-v1",
    *,
    name: str | None = None,
    column: str = "task",
    env_kwargs: Mapping[str, Any] | None = None,
    log_components: bool = True,
) -> TRLReward:
    """A TRL reward that replays each completion's actions in ``env_id`` and returns the hidden
    verifier's total (``None`` when the row's task cannot re-create the environment).

    The completion is the trajectory (JSON lines or a JSON list of ``{"tool", "args"}`` /
    ``{"answer"}`` objects, or assistant messages holding them); the dataset column ``column``
    holds ``{"seed": int, "options": {...}}`` (see :mod:`rewardkit.integrations.fhir`).
    ``name`` defaults to the id in word characters (``fhir_anc_threshold_v1``). Logged: every
    gate (``<name>/gate/<gate>``), component and ``soft_total`` / ``answered`` / ``steps`` /
    ``format_errors``.
    """
    from .fhir import fhir_stack  # the environments load only when this reward is asked for

    stack = fhir_stack(env_id, column=column, env_kwargs=env_kwargs)
    if name is None:
        name = re.sub(r"\W+", "_", env_id).strip("_")
    return reward_func(stack, name=name, log_components=log_components)


def environment(
    env_id: str,
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    task_column: str = "task",
    name: str | None = None,
) -> type:
    """A class for ``GRPOTrainer(environment_factory=...)``: the environment's tools as typed,
    documented methods, ``reset(**row)`` → the task's prompt, ``get_reward()`` → the hidden
    verifier's total (None when it cannot score). See :mod:`rewardkit.integrations.trl_env`."""
    from .trl_env import environment as _environment

    return _environment(env_id, env_kwargs=env_kwargs, task_column=task_column, name=name)


def verdict_metrics(prefix: str, verdicts: Sequence[Any], gates: Sequence[str]) -> dict[str, float]:
    """``log_metric`` scalars of a batch of environment verdicts: ``<prefix>/<component>`` and
    ``/frac_none``, ``<prefix>/gate/<gate>`` (pass rate), ``frac_hard_failed``,
    ``frac_unscorable``, ``frac_errors``; a mean over no value is NaN (TRL drops it)."""
    n = len(verdicts)
    out: dict[str, float] = {}
    names = list(verdicts[0].components) if verdicts else []
    for c in names:
        present = [v.components.get(c) for v in verdicts if v.components.get(c) is not None]
        out[f"{prefix}/{c}"] = _mean([float(x) for x in present])
        out[f"{prefix}/{c}/frac_none"] = (n - len(present)) / n if n else math.nan
    for g in gates:
        out[f"{prefix}/gate/{g}"] = _mean([float(g not in v.gate_failures) for v in verdicts])
    out[f"{prefix}/frac_hard_failed"] = _mean([float(v.hard_failed) for v in verdicts])
    out[f"{prefix}/frac_unscorable"] = _mean([float(v.total is None) for v in verdicts])
    out[f"{prefix}/frac_errors"] = _mean([float(bool(v.errors)) for v in verdicts])
    return out
