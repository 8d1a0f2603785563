"""An environment as a TRL ``GRPOTrainer(environment_factory=...)`` class (multi-turn tool use).

Usage::

    from trl import GRPOConfig, GRPOTrainer
    from rewardkit.integrations.trl import environment

    Fhir = environment("fhir/anc-threshold-v1")          # a class; TRL makes one per rollout
    ds = Dataset.from_dict({"prompt": [[{"role": "user", "content": ""}]] * 8,
                            "task": [{"seed": s, "options": {}} for s in range(8)]})
    trainer = GRPOTrainer(model=..., train_dataset=ds, args=GRPOConfig(...),
                          environment_factory=Fhir, reward_funcs=[Fhir.metrics])

TRL's contract (``GRPOTrainer.__init__`` and ``_generate_and_score_completions``, TRL 1.16): the
factory is called with no argument and instances are pooled and reused; every public method of
the class (a function not starting with ``_``, other than ``reset`` and ``get_reward``) is a
tool, its JSON schema built by ``transformers.utils.get_json_schema`` from the signature's type
hints and the Google-style docstring; ``reset(**row)`` gets the whole dataset row and returns
text appended to the last user message; ``get_reward()`` is called once per rollout after
generation and is an extra reward source, weight 1, logged as ``rewards/<class name>/mean``.

Here: one method per tool of the environment's manifest (``env.tools()``), with its arguments
typed and documented (``enum`` values as ``(choices: [...])``), plus ``answer`` (the final
answer: status, value, unit, evidence, note). A method passes the arguments the model wrote to
the environment unchanged, so a wrong argument is the environment's error observation and
format penalty, not a Python ``TypeError`` TRL would swallow. ``reset`` picks the task from the
row's ``task`` column (``{"seed", "options"}`` or its JSON) and returns the task's prompt.
``get_reward`` returns the hidden verifier's total, ``None`` when it cannot score (TRL's
"cannot score"; see docs/integrations.md for what TRL does with it per aggregation mode).

TRL calls ``get_reward()`` without ``log_metric``, so the components, gates and rates are
logged by the weight-free companion ``Cls.metrics`` (a reward function that always returns
``None``, so it never changes a reward or the unscorable mask): pass it in ``reward_funcs``.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import ConfigError
from .session import ANSWER_ARGS, ANSWER_TOOL, EnvSession

__all__ = ["environment"]

_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list[str],
    "ids": list[int],
}


def _class_name(env_id: str) -> str:
    words = re.split(r"[^A-Za-z0-9]+", env_id)
    return "".join(w[:1].upper() + w[1:] for w in words if w) or "Environment"


def _arg_doc(name: str, schema: Mapping[str, Any]) -> str:
    desc = str(schema.get("description") or f"The {name} argument ({schema.get('type')})")
    lo, hi = schema.get("minimum"), schema.get("maximum")
    if lo is not None or hi is not None:
        desc += f", from {lo} to {hi}"
    if schema.get("enum"):
        desc += f" (choices: {json.dumps(list(schema['enum']))})"
    return desc


def _tool_method(name: str, description: str, args: Mapping[str, Mapping[str, Any]]) -> Any:
    """A method whose signature and docstring describe the tool; it passes what it gets on."""
    for arg in args:
        if not arg.isidentifier():
            raise ConfigError(
                f"The tool {name!r} has the argument {arg!r}, which is not a Python identifier; "
                f"TRL tools are methods, so rename the argument."
            )
    required = [a for a, s in args.items() if s.get("required")]
    optional = [a for a in args if a not in required]
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    for arg in required + optional:
        kind = _TYPES.get(str(args[arg].get("type")), str)
        hint = kind if arg in required else kind | None
        annotations[arg] = hint
        params.append(
            inspect.Parameter(
                arg,
                inspect.Parameter.KEYWORD_ONLY
                if arg in optional
                else inspect.Parameter.POSITIONAL_OR_KEYWORD,
                default=None if arg in optional else inspect.Parameter.empty,
                annotation=hint,
            )
        )
    annotations["return"] = str

    if name == ANSWER_TOOL:

        def method(self: Any, *positional: Any, **kwargs: Any) -> str:
            given = _bind(required, positional, kwargs)
            return self._session.answer({k: v for k, v in given.items() if v is not None})

    else:

        def method(self: Any, *positional: Any, **kwargs: Any) -> str:
            given = _bind(required, positional, kwargs)
            return self._session.call(name, {k: v for k, v in given.items() if v is not None})

    lines = [description.strip() or f"The {name} tool.", ""]
    if args:
        lines.append("Args:")
        lines += [f"    {a}: {_arg_doc(a, args[a])}" for a in required + optional]
        lines.append("")
    lines += ["Returns:", "    The environment's observation as JSON text."]
    method.__name__ = method.__qualname__ = name
    method.__doc__ = "\n".join(lines)
    method.__annotations__ = annotations
    method.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    return method


def _bind(
    required: Sequence[str], positional: Sequence[Any], kwargs: dict[str, Any]
) -> dict[str, Any]:
    given = dict(zip(required, positional))
    for k, v in kwargs.items():
        given[k] = v  # unknown names go to the environment, which rejects them as data
    return given


def environment(
    env_id: str,
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    task_column: str = "task",
    name: str | None = None,
) -> type:
    """A class for ``GRPOTrainer(environment_factory=...)`` over the registered ``env_id``.

    ``env_kwargs``: constructor arguments of the environment. ``task_column``: the dataset
    column holding each row's task. ``name``: the class name, which TRL logs the reward under
    (default: the id in CamelCase, ``FhirAncThresholdV1``).
    """
    probe = EnvSession(env_id, env_kwargs)  # validates the id, the kwargs and the tool names
    if not probe.tools:
        raise ConfigError(
            f"The environment {env_id!r} offers no tools() manifest (rewardkit.envs.protocol); "
            f"TRL's environment_factory needs the tools as methods."
        )
    cls_name = name or _class_name(env_id)
    if not cls_name.isidentifier():
        raise ConfigError(
            f"The 'name' parameter of environment must be an identifier. Got {name!r}."
        )
    kwargs = dict(env_kwargs or {})
    stack = getattr(probe.env, "stack", None)
    gates = tuple(g.name for g in getattr(stack, "gates", ()))

    def __init__(self: Any) -> None:
        self._session = EnvSession(env_id, kwargs)
        self.env = self._session.env  # the rewardkit environment: ledger, episode, snapshot

    def reset(self: Any, **row: Any) -> str:
        if task_column not in row:
            raise ConfigError(
                f"The dataset row has no task column {task_column!r} (columns: {sorted(row)}); "
                f"each row must say which task of {env_id} to play, e.g. "
                f'{{"seed": 0, "options": {{}}}}.'
            )
        return self._session.start(row[task_column], column=task_column)

    def get_reward(self: Any) -> float | None:
        total = self._session.verdict().total
        return None if total is None else float(total)

    namespace: dict[str, Any] = {
        "__init__": __init__,
        "__module__": __name__,
        "__doc__": f"TRL environment over {env_id} (rewardkit); tools: "
        + ", ".join([t["name"] for t in probe.tools] + [ANSWER_TOOL]),
        "reset": reset,
        "get_reward": get_reward,
        "env_id": env_id,
        "task_column": task_column,
        "metrics": _MetricsReward(cls_name, gates),
        "_verdict": lambda self: self._session.verdict(),
    }
    for t in probe.tools:
        namespace[t["name"]] = _tool_method(t["name"], t["description"], t["args"])
    answer_args = getattr(probe.env, "answer_args", None)  # an environment's own schema
    namespace[ANSWER_TOOL] = _tool_method(
        ANSWER_TOOL,
        "Give the final answer; this ends the episode.",
        answer_args() if callable(answer_args) else ANSWER_ARGS,
    )
    return type(cls_name, (), namespace)


class _MetricsReward:
    """The weight-free companion that logs the verdicts' components, gates and rates (a
    callable object, not a function, so that TRL does not take it for a tool)."""

    _rewardkit_metrics_only = True  # always None: never part of a reward (see trl.py)

    def __init__(self, prefix: str, gates: Sequence[str]) -> None:
        self.prefix, self.gates = prefix, tuple(gates)
        self.__name__ = self.__qualname__ = f"{prefix}_metrics"

    def __repr__(self) -> str:
        return f"<{self.__name__}>"

    def __call__(
        self,
        prompts: Any = None,
        completions: Any = None,
        environments: Sequence[Any] | None = None,
        log_metric: Callable[[str, float], None] | None = None,
        **kwargs: Any,
    ) -> list[None]:
        from .trl import _warn_if_mixed, verdict_metrics

        _warn_if_mixed(self, self.prefix)  # the environment's get_reward among other rewards?
        envs = list(environments or [])
        if log_metric is not None and envs:
            verdicts = [e._verdict() for e in envs]
            for key, value in verdict_metrics(self.prefix, verdicts, self.gates).items():
                log_metric(key, value)
        return [None] * (len(completions) if completions is not None else len(envs))
