"""One environment episode driven by a trainer's tool calls (shared by the multi-turn adapters).

Usage::

    from rewardkit.integrations.session import EnvSession
    s = EnvSession("fhir/anc-threshold-v1")
    prompt = s.start({"seed": 3, "options": {"trap": "page2"}})   # the task's prompt text
    s.call("search_patients", {"name": "Maria Lopez"})             # the observation, as JSON text
    s.answer({"status": "met", "value": 1.7, "evidence": ["o-1"]})
    s.verdict().total                                              # the hidden verifier's total

TRL's ``environment_factory`` class, verl's tools / agent loop and OpenRLHF's agent function all
drive an episode through this: a tool call becomes the action ``{"tool": name, "args": args}``
and is executed by the environment exactly as the model wrote it (an unknown argument or a
wrong type is the environment's error observation and format penalty, recorded in its ledger,
not an exception in the trainer); the final answer is ``{"answer": {...}}``. After the episode
ended (an answer, the step or budget limit) further calls are not executed: they get an error
text. The task comes from a dataset field: ``{"seed": int, "options": {...}}`` or its JSON
string (``env_id`` in it must equal the session's); a missing or malformed task is a
``ConfigError`` naming the field, never a silent default task.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._json import canonical_json
from ..envs.actions import ANSWER_STATUSES
from ..envs.core import Env, Verdict
from ..envs.protocol import tool_specs
from ..envs.registry import make
from ..errors import ConfigError
from .fhir import parse_task

__all__ = ["ANSWER_ARGS", "ANSWER_TOOL", "EnvSession", "task_from_row"]

ANSWER_TOOL = "answer"
# The final answer's arguments (rewardkit.envs.actions), as a tool's argument schema.
ANSWER_ARGS: dict[str, dict[str, Any]] = {
    "status": {
        "type": "string",
        "required": True,
        "enum": list(ANSWER_STATUSES),
        "description": "Whether the criterion is met, not met, or cannot be decided",
    },
    "value": {"type": "number", "description": "The value the decision rests on, if any"},
    "unit": {"type": "string", "description": "The unit of the value"},
    "evidence": {
        "type": "array",
        "description": "Ids of the records the answer rests on, as returned by the tools",
    },
    "note": {"type": "string", "description": "A short free-text note"},
}
ENDED = "the episode has ended; this call was not executed"


def task_from_row(row: Mapping[str, Any], column: str, env_id: str) -> tuple[int, dict[str, Any]]:
    """``(seed, options)`` from a dataset row's task field ``column``."""
    if column not in row:
        raise ConfigError(
            f"The dataset row has no task field {column!r} (columns: {sorted(row)}); each row "
            f'must say which task to play, e.g. {{"seed": 0, "options": {{}}}}.'
        )
    try:
        task_env, seed, options = parse_task(row[column], column, env_id)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if task_env != env_id:
        raise ConfigError(
            f"The task field {column!r} names the environment {task_env!r}, but this "
            f"adapter plays {env_id!r}."
        )
    return seed, options


class EnvSession:
    """A registered environment and the episode a trainer is playing in it."""

    def __init__(self, env_id: str, env_kwargs: Mapping[str, Any] | None = None) -> None:
        self.env_id = env_id
        self.env: Env = make(env_id, **dict(env_kwargs or {}))
        self.tools = tool_specs(self.env)
        names = [t["name"] for t in self.tools]
        if ANSWER_TOOL in names:
            raise ConfigError(
                f"The environment {env_id!r} has a tool named {ANSWER_TOOL!r}, which the "
                f"adapters reserve for the final answer; rename the tool."
            )
        self.started = False

    @property
    def done(self) -> bool:
        return bool(self.env._done) if self.started else True

    def start(self, task: Any, *, column: str = "task") -> str:
        """Reset to the task of a dataset field; the prompt text."""
        seed, options = task_from_row({column: task}, column, self.env_id)
        obs, _ = self.env.reset(seed=seed, options=options)
        self.started = True
        prompt = obs.get("prompt")
        if not isinstance(prompt, str):
            raise ConfigError(
                f"The environment {self.env_id!r} gives no 'prompt' text in its reset "
                f"observation; the multi-turn adapters need one."
            )
        return prompt

    def act(self, action: Any) -> str:
        """Play one action; the observation as canonical JSON text."""
        if not self.started:
            raise ConfigError(f"{self.env_id}: a tool was called before the task was chosen.")
        if self.done:
            return canonical_json({"error": ENDED})
        obs, _, _, _, _ = self.env.step(action)
        return canonical_json(obs)

    def call(self, tool: str, args: Mapping[str, Any]) -> str:
        return self.act({"tool": tool, "args": dict(args)})

    def answer(self, answer: Mapping[str, Any]) -> str:
        return self.act({"answer": dict(answer)})

    def verdict(self) -> Verdict:
        """The hidden verifier's verdict (an unfinished episode ends as truncated)."""
        if not self.started:
            raise ConfigError(f"{self.env_id}: the verdict was asked before the task was chosen.")
        return self.env.finalize()
