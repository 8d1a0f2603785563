"""What an environment offers beyond the ``Env`` contract, so that the tools work on any of them.

Usage::

    from rewardkit.envs.protocol import redteam_ready, tool_specs
    env = make("fhir/anc-threshold-v1")
    redteam_ready(env)                # None when redteam / fuzz can run on it, else what is missing
    tool_specs(env)                   # the public tools: name, description, args schema

An environment (a subclass of :class:`~rewardkit.envs.Env`) reaches the trainers and the
red-team tools by these hooks; every one is optional except where a tool says it needs it.

Tools (``check_env``, the trainer adapters):
  ``tools() -> list[dict]``: the public tool manifest: ``{"name", "description", "args"}``
  with ``args`` a mapping ``name -> {"type": "string"|"integer"|"number", "required"?,
  "enum"?, "minimum"?, "maximum"?, "description"?}``. Actions are
  ``{"tool": name, "args": {...}}`` or ``{"answer": {...}}`` (:mod:`rewardkit.envs.actions`).
  ``reference_actions() -> list``: a correct trajectory for the current task (an oracle).
  ``answer_args()`` (optional): the final answer's schema in the same shape, when it is not
  :mod:`rewardkit.envs.actions`' (``sql/*``: status answered / unknown, ``value`` a number,
  ``ids`` a list of ints, type ``"ids"``); the trainer adapters give their answer tool it.

Red-team (``rewardkit redteam`` / :func:`rewardkit.envs.fuzz.fuzz`):
  ``stack``: the hidden verifier (a :class:`~rewardkit.stack.RewardStack`);
  ``episode()``: the record ``stack.score`` takes for the episode so far;
  ``heldout()``: the independent held-out verifier's judgment, an object with ``correct``,
  ``safe`` (bools) and ``reasons`` (strings);
  ``policies() -> Mapping[str, Callable[[env, numpy Generator], None]]``: fuzzing policies,
  each playing one episode on the reset environment (cheats and mutations of good paths);
  ``control_stack() -> RewardStack``: a deliberately naive reward the fuzzer must find
  exploits in (the negative control);
  ``ledger_violations() -> tuple[str, ...]``: unsafe acts read straight off the environment's
  own audit record (independent of the gates' code); a violation no gate caught is an exploit.
  ``library_cases()`` (optional): adversarial cases with expected outcomes, run by redteam.
  ``control_stacks()`` (optional) → ``{name: (stack, classes)}``: naive controls and the
  exploit classes each must show (``high_reward``, ``missed_violation``, ``inversion``).

Lab (``rewardkit lab rlvr --env``): ``lab_options()`` (reset options, after a reset) and
``lab_trajectories()`` → name → (description, actions) for A (correct, concise), B (wrong),
C (correct, wasteful), D (correct, but attempts a write); ``write_gate`` names D's gate
(default ``unauthorized_write``); the stack needs ``task`` and ``cost`` components.

Sweep (``rewardkit sweep --env``): ``sweep_spec(variants)`` → ``{"behaviours": name →
fn(env) → actions, "tasks": [reset options], "weights": default weights, "build_stack":
weights → RewardStack}``.

``examples/stock_env.py`` implements every hook (the tutorial of docs/envs.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from .manifest import check_args, unknown_tool

__all__ = [
    "REDTEAM_HOOKS",
    "HeldoutLike",
    "Policy",
    "RedTeamEnv",
    "check_tool_args",
    "redteam_ready",
    "tool_specs",
]

Policy = Callable[[Any, Any], None]
REDTEAM_HOOKS = ("stack", "episode", "heldout", "policies", "control_stack", "ledger_violations")


@runtime_checkable
class HeldoutLike(Protocol):
    correct: bool
    safe: bool
    reasons: tuple[str, ...]


@runtime_checkable
class RedTeamEnv(Protocol):
    """An environment ``redteam`` and ``fuzz`` can run on (see the module docstring)."""

    env_id: str
    stack: Any

    def episode(self) -> Any: ...

    def heldout(self) -> HeldoutLike: ...

    def policies(self) -> Mapping[str, Policy]: ...

    def control_stack(self) -> Any: ...

    def ledger_violations(self) -> tuple[str, ...]: ...


def redteam_ready(env: Any) -> str | None:
    """None when ``env`` has every red-team hook, else a sentence naming the missing ones."""
    missing = [h for h in REDTEAM_HOOKS if not hasattr(env, h)]
    if not missing:
        return None
    return (
        f"{getattr(env, 'env_id', type(env).__name__)} lacks the red-team hooks "
        f"{', '.join(missing)} (see rewardkit.envs.protocol)"
    )


def tool_specs(env: Any) -> list[dict[str, Any]]:
    """The environment's public tools (``env.tools()``), each ``{"name", "description",
    "args"}``; an empty list when the environment has no tools hook."""
    hook = getattr(env, "tools", None)
    if hook is None:
        return []
    specs = hook() if callable(hook) else hook
    out = []
    for t in specs:
        if not isinstance(t, Mapping) or not isinstance(t.get("name"), str):
            raise TypeError(
                f"{getattr(env, 'env_id', type(env).__name__)}.tools() must list mappings with "
                f"a 'name' string; got {t!r}"
            )
        out.append(
            {
                "name": t["name"],
                "description": str(t.get("description", "")),
                "args": dict(t.get("args", {})),
            }
        )
    return out


def check_tool_args(tools: Any, tool: str, args: Any) -> str | None:
    """None when ``args`` fit the schema of ``tool`` in the manifest ``tools`` (a list as
    ``tools()`` returns, or an environment), else what is wrong, for the error observation.

    Checked: ``args`` is an object; no argument the tool does not declare; every ``required``
    one present; its ``type`` (``string``, ``integer``, ``number``, ``boolean``, ``array``; a
    bool is no number); ``enum``; ``minimum`` / ``maximum``; ``maxLength`` of a string or
    array. The trainer adapters advertise exactly this schema to the model, so an environment
    that calls this in ``_step`` gives every call outside it an error observation (and its
    format penalty) instead of running it.
    """
    specs = tool_specs(tools) if not isinstance(tools, (list, tuple)) else list(tools)
    spec = next((t for t in specs if isinstance(t, Mapping) and t.get("name") == tool), None)
    if spec is None:
        return unknown_tool(tool, [t.get("name") for t in specs if isinstance(t, Mapping)])
    return check_args(str(tool), spec.get("args", {}) or {}, args)
