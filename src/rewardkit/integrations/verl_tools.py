"""An environment in verl's multi-turn tool agent loop (``ToolAgentLoop`` + ``BaseTool``).

Usage::

    from rewardkit.integrations.verl_tools import tool_config, task_extra_info
    tool_config("fhir/anc-threshold-v1", "fhir_tools.yaml")     # verl's tool config file
    row["extra_info"] = task_extra_info("fhir/anc-threshold-v1", {"seed": 3, "options": {}})
    row["reward_model"] = {"style": "rule", "ground_truth": canonical task JSON}

    actor_rollout_ref.rollout.multi_turn.enable=True
    actor_rollout_ref.rollout.multi_turn.tool_config_path=fhir_tools.yaml
    reward.custom_reward_function.path=pkg://rewardkit.integrations.verl_tools
    reward.custom_reward_function.name=compute_score

verl's contract (0.9, ``experimental/agent_loop/tool_agent_loop.py``, ``tools/base_tool.py``,
``tools/tool_registry.py``): tools are ``BaseTool`` subclasses named by ``class_name`` in a
YAML file, each built with its ``config`` and OpenAI ``tool_schema``; for every call the loop
runs ``create(create_kwargs=extra_info["tools_kwargs"][name]["create_kwargs"])``, then
``execute(instance_id, arguments, agent_data=...)`` → ``(ToolResponse, reward, metrics)``,
then ``release``. ``agent_data`` is the trajectory's own object, so the environment episode
lives there (one per trajectory, shared by all its tools). Non-``None`` tool rewards are
collected in ``tool_rewards``, which reaches ``compute_score`` as
``extra_info["tool_rewards"]`` (the naive, dapo, gdpo, rate_limited and remote managers merge
``tool_extra_fields`` into ``extra_info``).

Here every call returns, as its reward, the hidden verifier's score of the episode so far
(the verdict's total once the ``answer`` tool ended it), so :func:`compute_score` takes the
*last* tool reward: exactly the score of the episode the model played. A trajectory that
called no tool is scored as the empty episode of its task (from ``ground_truth``). A ``None``
score is sent as ``none_score`` with ``masked = 1``. Arguments reach the environment as the
model wrote them; a wrong one is the environment's error observation and penalty.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._json import canonical_json, write_atomic
from .._validation import Interval, validate_params
from ..errors import ConfigError
from ._common import check_fill
from .session import ANSWER_ARGS, ANSWER_TOOL, EnvSession

__all__ = ["EnvTool", "compute_score", "openai_schema", "task_extra_info", "tool_config"]

_SESSIONS = "_rewardkit_sessions"  # attribute of verl's AgentData: env id → EnvSession


def openai_schema(
    name: str, description: str, args: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """A manifest tool as verl's ``OpenAIFunctionToolSchema`` dict."""
    props: dict[str, Any] = {}
    for arg, spec in args.items():
        prop: dict[str, Any] = {"type": str(spec.get("type", "string"))}
        desc = spec.get("description")
        if desc:
            prop["description"] = str(desc)
        if spec.get("enum"):
            prop["enum"] = list(spec["enum"])
        props[arg] = prop
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description or name,
            "parameters": {
                "type": "object",
                "properties": props,
                "required": [a for a, s in args.items() if s.get("required")],
            },
        },
    }


def tool_config(env_id: str, path: str | Path | None = None, **env_kwargs: Any) -> dict[str, Any]:
    """verl's tool config for ``env_id``: one ``EnvTool`` per manifest tool plus ``answer``;
    written as YAML (JSON is YAML) to ``path`` when given."""
    session = EnvSession(env_id, env_kwargs)
    tools = [
        *session.tools,
        {
            "name": ANSWER_TOOL,
            "description": "Give the final answer; this ends the episode.",
            "args": ANSWER_ARGS,
        },
    ]
    cfg = {
        "tools": [
            {
                "class_name": "rewardkit.integrations.verl_tools.EnvTool",
                "config": {"type": "native", "env_id": env_id, "env_kwargs": dict(env_kwargs)},
                "tool_schema": openai_schema(t["name"], t["description"], t["args"]),
            }
            for t in tools
        ]
    }
    if path is not None:
        write_atomic(Path(path), canonical_json(cfg) + "\n")
    return cfg


def task_extra_info(
    env_id: str, task: Mapping[str, Any], tools: list[str] | None = None
) -> dict[str, Any]:
    """``extra_info`` of a dataset row: ``tools_kwargs`` handing the task to every tool."""
    names = (
        tools
        if tools is not None
        else [t["name"] for t in EnvSession(env_id).tools] + [ANSWER_TOOL]
    )
    create = {"create_kwargs": {"task": canonical_json(dict(task))}}
    return {"tools_kwargs": {n: create for n in names}}


def _score(session: EnvSession, none_score: float) -> float:
    env: Any = session.env
    if session.done or getattr(env, "stack", None) is None:
        total = session.verdict().total
    else:
        total = env.stack.score(env.episode()).total
    return none_score if total is None else float(total)


try:  # verl is optional: the class exists when verl is installed
    from verl.tools.base_tool import BaseTool as _BaseTool
    from verl.tools.schemas import ToolResponse as _ToolResponse
except ImportError:  # pragma: no cover - exercised in the trainer-package test environment
    _BaseTool = object
    _ToolResponse = None


class EnvTool(_BaseTool):
    """One tool of a rewardkit environment for verl's tool agent loop (see the module)."""

    def __init__(self, config: dict, tool_schema: Any) -> None:
        if _ToolResponse is None:
            raise ConfigError("rewardkit.integrations.verl_tools.EnvTool needs verl installed.")
        for key in ("env_id",):
            if key not in config:
                raise ConfigError(
                    f"The verl tool config of EnvTool needs {key!r}. Got {sorted(config)}."
                )
        super().__init__(config, tool_schema)
        self.env_id = str(config["env_id"])
        self.env_kwargs = dict(config.get("env_kwargs") or {})
        self.none_score = check_fill(config.get("none_score", 0.0), "none_score", "EnvTool")
        self._tasks: dict[str, Any] = {}

    async def create(self, instance_id: str | None = None, **kwargs: Any) -> tuple[str, Any]:
        instance_id, response = await super().create(instance_id)
        create_kwargs = kwargs.get("create_kwargs") or {}
        if "task" not in create_kwargs:
            raise ConfigError(
                f"The verl tool {self.name!r} got no task: each row's extra_info must hold "
                f"tools_kwargs.{self.name}.create_kwargs.task (see task_extra_info)."
            )
        self._tasks[instance_id] = create_kwargs["task"]
        return instance_id, response

    async def execute(
        self, instance_id: str, parameters: dict[str, Any], **kwargs: Any
    ) -> tuple[Any, float, dict]:
        agent_data = kwargs.get("agent_data")
        if agent_data is None:
            raise ConfigError("verl's tool agent loop passes agent_data; EnvTool got none.")
        sessions = agent_data.__dict__.setdefault(_SESSIONS, {})
        session = sessions.get(self.env_id)
        if session is None:
            session = sessions[self.env_id] = EnvSession(self.env_id, self.env_kwargs)
            session.start(self._tasks[instance_id])
        if not isinstance(parameters, dict):
            parameters = {"__not_an_object__": json.dumps(parameters)}
        if self.name == ANSWER_TOOL:
            text = session.answer(parameters)
        else:
            text = session.call(self.name, parameters)
        return _ToolResponse(text=text), _score(session, self.none_score), {}

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        self._tasks.pop(instance_id, None)


@validate_params({"env_id": ["str", None], "none_score": [Interval(float, None, None)]})
def compute_score(
    data_source: Any = None,
    solution_str: str | None = None,
    ground_truth: Any = None,
    extra_info: Any = None,
    *,
    env_id: str | None = None,
    none_score: float = 0.0,
    **kwargs: Any,
) -> dict[str, float]:
    """The episode's score for verl's reward managers: the last tool reward (the verifier's
    score of the episode as played), else the empty episode of the task in ``ground_truth``.
    ``env_id`` defaults to ``data_source``. Keys: ``score``, ``acc``, ``tool_calls``."""
    fill = float(none_score)
    rewards = list((extra_info or {}).get("tool_rewards") or [])
    if rewards:
        score = float(rewards[-1])
    else:
        eid = env_id or data_source
        if not isinstance(eid, str):
            raise ConfigError(f"The 'env_id' of verl_tools.compute_score is needed. Got {eid!r}.")
        session = EnvSession(eid)
        session.start(ground_truth, column="ground_truth")
        total = session.verdict().total
        score = fill if total is None else float(total)
    return {"score": score, "acc": score, "tool_calls": float(len(rewards))}
