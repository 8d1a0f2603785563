"""The FHIR hidden verifier as a reward stack: the trajectory is in the completion.

Usage::

    from rewardkit.integrations.fhir import fhir_stack, completion_actions
    stack = fhir_stack("fhir/anc-threshold-v1", column="task")
    episode = {"text": '{"tool": "search_patients", "args": {...}}\\n{"answer": {...}}',
               "task": {"seed": 0, "options": {"trap": "none", "variant": 3}}}
    stack.score(episode).total          # the verdict's total, exactly as the environment gives it

The trajectory is ``episode["completion"]`` when it is a list of chat messages, else
``episode["text"]`` (what every adapter fills: TRL's completion text, verl's
``solution_str``, OpenRLHF's response without end-of-turn tokens). It is replayed in a fresh
episode of the environment (``reset(seed, options)`` from
the task field, every action through ``step`` until the episode ends, then ``finalize``), and
the result mirrors the hidden verifier's :class:`~rewardkit.envs.Verdict`: its gates and
weighted components under the verifier's own names, so the total is the verdict's total, plus
logged metrics (weight 0): ``soft_total`` (what the soft score would have been without the
gates), ``answered`` (1.0 when the agent gave an answer), ``steps`` and ``format_errors``.

The task field (``column``) holds ``{"seed": int, "options": {...}, "env_id": ...}`` (``options``
and ``env_id`` optional; ``env_id`` must be registered and keep the verifier's part names) or
the same as a JSON string (verl's ``ground_truth``, OpenRLHF's labels are often strings). A
task that cannot re-create the environment makes the sample unscorable (total ``None``, the
reason under ``errors["replay"]``); it never raises.

How a completion becomes actions (:func:`completion_actions`): the text is read left to right;
a JSON object is one action; a JSON list is one action per element; anything else (prose, a
JSON string, a broken or truncated object) runs to the end of its line and is *one* action,
which the environment's strict parser turns into an error observation and a format penalty.
Lines that are only a Markdown code fence are skipped. A conversational completion is read
message by message: each assistant message's content, then its ``tool_calls`` (``{"function":
{"name", "arguments"}}`` → ``{"tool": name, "args": arguments}``). A completion with no action
at all is played as one empty action (the red-team library's "empty output"). Actions after
the episode ended (an answer, the step or budget limit) are not played, as in the environment.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from .._json import JsonMixin
from ..envs.core import Env, Verdict
from ..envs.registry import make
from ..errors import ConfigError
from ..stack import Component, Gate, GateOutcome, RewardResult, RewardStack

__all__ = ["FhirReplayStack", "Replay", "completion_actions", "fhir_stack", "parse_task"]

DEFAULT_ENV = "fhir/anc-threshold-v1"
METRICS = ("soft_total", "answered", "steps", "format_errors")  # weight-0 components
_TASK_KEYS = ("env_id", "options", "seed")
_WS = re.compile(r"\s*")
_FENCE = re.compile(r"```[\w+-]*[ \t]*(?:\n|$)")
_DECODER = json.JSONDecoder()


# --- completion → actions ----------------------------------------------------------------------
def _line_end(text: str, i: int) -> int:
    j = text.find("\n", i)
    return len(text) if j < 0 else j


def _text_actions(text: str) -> Iterator[str]:
    """Action texts in ``text``, each handed to the environment as it was written (the strict
    parser judges it: duplicate keys, NaN, huge numbers are its business, not ours)."""
    i, n = 0, len(text)
    in_list = need_sep = False
    while True:
        i = _WS.match(text, i).end()  # type: ignore[union-attr]  # \s* always matches
        if i >= n:
            return
        c = text[i]
        if in_list:
            if c == "]":
                in_list = False
                i += 1
                continue
            if need_sep:
                if c == ",":
                    need_sep = False
                    i += 1
                    continue
                in_list = False  # a broken list: the rest of the line is one bad action
                end = _line_end(text, i)
                yield text[i:end]
                i = end
                continue
        elif c == "[":
            in_list, need_sep = True, False
            i += 1
            continue
        elif c == "`" and (m := _FENCE.match(text, i)):
            i = m.end()
            continue
        if c == "{" or in_list:
            try:
                _, end = _DECODER.raw_decode(text, i)
            except (ValueError, RecursionError):  # broken, truncated or absurdly deep JSON
                in_list = False
                end = _line_end(text, i)
            else:
                need_sep = in_list
            yield text[i:end]
            i = end
        else:
            end = _line_end(text, i)
            yield text[i:end]
            i = end


def _tool_call_action(call: Any) -> Any:
    fn = call.get("function", call) if isinstance(call, Mapping) else None
    if not isinstance(fn, Mapping):
        return json.dumps(call, default=str) if call is not None else "null"
    name, args = fn.get("name"), fn.get("arguments", {})
    head = '{"tool": ' + json.dumps(name, default=str) + ', "args": '
    if isinstance(args, str):  # raw argument text: the environment's parser sees it verbatim
        return head + args + "}"
    return {"tool": name, "args": args}


def completion_actions(completion: Any) -> Iterator[Any]:
    """The actions of one completion (text, or chat messages), lazily, in order."""
    if isinstance(completion, (bytes, bytearray)):
        completion = completion.decode("utf-8", "replace")
    if isinstance(completion, str):
        yield from _text_actions(completion)
        return
    if not isinstance(completion, Sequence):
        yield json.dumps(completion, default=str)  # not text: one malformed action
        return
    for m in completion:
        if not isinstance(m, Mapping) or m.get("role", "assistant") != "assistant":
            continue  # tool results, user turns: not the agent's actions
        content = m.get("content")
        if isinstance(content, str):
            yield from _text_actions(content)
        elif isinstance(content, Sequence):  # content blocks: the text ones
            yield from _text_actions(
                "".join(
                    str(b.get("text", ""))
                    for b in content
                    if isinstance(b, Mapping) and "text" in b
                )
            )
        calls = m.get("tool_calls")
        if isinstance(calls, Sequence) and not isinstance(calls, str):
            for call in calls:
                yield _tool_call_action(call)


# --- the task field ------------------------------------------------------------------------------
def parse_task(value: Any, column: str, default_env: str) -> tuple[str, int, dict[str, Any]]:
    """``(env_id, seed, options)`` from a task field; ValueError naming the field otherwise."""
    where = f"The task field {column!r}"
    if isinstance(value, (str, bytes)):
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError(f"{where} is not JSON: {str(value)[:60]!r}") from None
    if not isinstance(value, Mapping):
        raise ValueError(
            f"{where} must be an object with 'seed' (int) and optional 'options', 'env_id'. "
            f"Got {type(value).__name__}."
        )
    extra = sorted(set(value) - set(_TASK_KEYS))
    if extra:
        raise ValueError(f"{where} has unknown key {extra[0]!r}; accepted: {list(_TASK_KEYS)}.")
    seed = value.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"{where} needs 'seed', a non-negative int. Got {seed!r}.")
    # None is "not given": a datasets / Arrow column of task objects fills every key another
    # row has with None (options {"trap": "page2"} in one row, {"variant": 3} in the next).
    options = value.get("options")
    options = {} if options is None else options
    if not isinstance(options, Mapping):
        raise ValueError(f"{where} has 'options' that is not an object. Got {options!r}.")
    env_id = value.get("env_id")
    env_id = default_env if env_id is None else env_id
    if not isinstance(env_id, str) or not env_id:
        raise ValueError(f"{where} has 'env_id' that is not an environment id. Got {env_id!r}.")
    return env_id, seed, {k: v for k, v in options.items() if v is not None}


# --- replay ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Replay(JsonMixin):
    """One completion played through the environment: the verdict and what was played."""

    verdict: Verdict
    actions: tuple[Any, ...]
    format_errors: int


def _play(env: Env, seed: int, options: dict[str, Any], completion: Any) -> Replay:
    env.reset(seed=seed, options=options)
    played: list[Any] = []
    for action in completion_actions(completion):
        played.append(action)
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            break  # the episode is over; later actions are never played
    if not played:  # nothing at all: the red-team library's "empty output"
        played.append("")
        env.step("")
    verdict = env.finalize()
    episode = getattr(env, "episode", None)
    errors = episode().n_format_errors if callable(episode) else 0
    return Replay(verdict, tuple(played), errors)


def _verdict_part(name: str, kind: str, r: Replay) -> Any:
    """A gate or component read from the replayed verdict (a verifier crash stays a crash).
    Module-level and bound with ``partial`` so that the stack pickles (verl, Ray workers)."""
    v = r.verdict
    if name in v.errors:
        raise RuntimeError(f"hidden verifier: {v.errors[name]}")
    if kind == "gate":
        return GateOutcome(name not in v.gate_failures, tuple(v.gate_failures.get(name, ())))
    return v.components[name]


def _soft_total(r: Replay) -> float | None:
    return r.verdict.soft_total


def _answered(r: Replay) -> float:
    return float(r.verdict.terminated)


def _steps(r: Replay) -> float:
    return float(r.verdict.n_steps)


def _format_errors(r: Replay) -> float:
    return float(r.format_errors)


_METRIC_FNS = {
    "soft_total": _soft_total,
    "answered": _answered,
    "steps": _steps,
    "format_errors": _format_errors,
}


class FhirReplayStack(RewardStack):
    """A stack that replays each episode's completion in the environment (see the module)."""

    def __init__(
        self, env_id: str, column: str, env_kwargs: Mapping[str, Any], verifier: RewardStack
    ) -> None:
        self.env_id, self.column, self.env_kwargs = env_id, column, dict(env_kwargs)
        super().__init__(
            gates=[Gate(g.name, partial(_verdict_part, g.name, "gate")) for g in verifier.gates],
            components=[
                *(
                    Component(
                        c.name,
                        partial(_verdict_part, c.name, "component"),
                        weight=c.weight,
                        required=c.required,
                        range=c.range,
                    )
                    for c in verifier.components
                ),
                *(Component(m, _METRIC_FNS[m], weight=0.0) for m in METRICS),
            ],
            fail_value=verifier.fail_value,
            renormalize=verifier.renormalize,
            ordering=verifier.ordering,
            version=f"replay:{env_id}:{verifier.version}",
        )
        self._parts = ([g.name for g in verifier.gates], [c.name for c in verifier.components])
        self._local = threading.local()  # one environment per thread (OpenRLHF scores in threads)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_local", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._local = threading.local()

    def _env(self, env_id: str) -> Env:
        envs: dict[str, Env] = self._local.__dict__.setdefault("envs", {})
        if env_id not in envs:
            env = make(env_id, **self.env_kwargs)
            parts = (
                [g.name for g in env.stack.gates],
                [c.name for c in env.stack.components],
            )
            if parts != self._parts:
                raise ValueError(
                    f"environment {env_id!r} has verifier parts {parts}, not those of "
                    f"{self.env_id!r} {self._parts}; use one reward function per verifier"
                )
            envs[env_id] = env
        return envs[env_id]

    def replay(self, episode: Any) -> Replay:
        """Play ``episode["completion"]`` in the task of ``episode[column]``; raises on a task
        that cannot re-create the environment (``score`` records that as data)."""
        if not isinstance(episode, Mapping) or self.column not in episode:
            got = sorted(episode) if isinstance(episode, Mapping) else type(episode).__name__
            raise KeyError(f"episode has no task field {self.column!r} (fields: {got})")
        env_id, seed, options = parse_task(episode[self.column], self.column, self.env_id)
        completion = episode.get("completion")
        if not isinstance(completion, Sequence) or isinstance(completion, str):
            # text: the adapters' ``text`` (OpenRLHF's has the end-of-turn tokens stripped)
            completion = episode.get("text", completion)
        return _play(self._env(env_id), seed, options, "" if completion is None else completion)

    def score(self, episode: Any) -> RewardResult:
        try:
            replay = self.replay(episode)
        except Exception as exc:  # an unusable task is an unscorable sample, never a crash
            if self.on_error == "raise":
                raise
            return RewardResult(
                total=None,
                hard_failed=False,
                gate_failures={},
                gates=dict.fromkeys((g.name for g in self.gates), None),
                components=dict.fromkeys((c.name for c in self.components), None),
                excluded=tuple(c.name for c in self.components),
                errors={"replay": f"{type(exc).__name__}: {exc}"},
                version=self.version,
                config_hash=self.config_hash,
            )
        return super().score(replay)


def fhir_stack(
    env_id: str = DEFAULT_ENV,
    *,
    column: str = "task",
    env_kwargs: Mapping[str, Any] | None = None,
) -> FhirReplayStack:
    """The hidden verifier of ``env_id`` as a stack over ``{"completion", column}`` episodes.

    ``env_kwargs`` go to ``make(env_id, ...)`` (``world_seed``, ``budget``, ``max_steps``...).
    """
    fn = "fhir_stack"
    if not isinstance(column, str) or not column:
        raise ConfigError(
            f"The 'column' parameter of {fn} must be a non-empty string. Got {column!r}."
        )
    if env_kwargs is not None and not isinstance(env_kwargs, Mapping):
        raise ConfigError(
            f"The 'env_kwargs' parameter of {fn} must be a mapping or None. Got {env_kwargs!r}."
        )
    env = make(env_id, **(env_kwargs or {}))  # an unknown id fails here, with "did you mean"
    verifier = getattr(env, "stack", None)
    if not isinstance(verifier, RewardStack):
        raise ConfigError(
            f"The 'env_id' parameter of {fn} must name an environment with a hidden verifier "
            f"stack (env.stack). Got {env_id!r}."
        )
    return FhirReplayStack(env_id, column, env_kwargs or {}, verifier)
