"""Tool manifests of the tool environments: the tools an agent may call, their argument
schemas and costs, and the check of a call's arguments against them.

Usage::

    from rewardkit.envs.manifest import ToolManifest, ToolSpec, validate_args
    MANIFEST = ToolManifest("my-tools-1.0.0", (ToolSpec("lookup", "Find a record.",
                            {"id": {"type": "string", "required": True}}, 1.0),))
    MANIFEST.get("lookup").cost, MANIFEST.hash         # 1.0, "sha256:…" (enters task lineage)
    validate_args(MANIFEST.get("lookup"), {"id": 5})   # "argument 'id' of lookup must be a …"

An argument schema is ``{"type": "string" | "integer" | "number" | "boolean" | "array",
"required"?, "enum"?, "minimum"?, "maximum"?, "maxLength"?, "description"?}``; the same check
serves environments that describe their tools as plain dicts
(:func:`rewardkit.envs.protocol.check_tool_args`). Each family (``envs.fhir``, ``envs.sql``)
declares its own manifest and may add fields to :class:`ToolSpec` in a subclass; the
manifest's hash covers them all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._json import JsonMixin, content_hash

__all__ = ["ToolManifest", "ToolSpec", "check_args", "validate_args"]


@dataclass(frozen=True)
class ToolSpec(JsonMixin):
    """One tool: argument schema (name → {"type", "required"?, "enum"?, …}), cost per call."""

    name: str
    description: str
    args: Mapping[str, Mapping[str, Any]]
    cost: float


@dataclass(frozen=True)
class ToolManifest(JsonMixin):
    """The versioned set of tools an environment offers; its hash enters the task lineage."""

    version: str
    tools: tuple[ToolSpec, ...]

    def get(self, name: str) -> ToolSpec | None:
        return next((t for t in self.tools if t.name == name), None)

    @property
    def hash(self) -> str:
        h = self.__dict__.get("_hash")
        if h is None:  # computed once: the manifest is frozen
            h = content_hash(self.to_dict())
            object.__setattr__(self, "_hash", h)
        return h

    def public(self) -> list[dict[str, Any]]:
        """What an agent sees of each tool: name, description, argument schema, cost (fresh
        plain dicts, so a caller may edit them)."""
        return [
            {"name": t.name, "description": t.description, "args": _plain(t.args), "cost": t.cost}
            for t in self.tools
        ]

    def unknown_tool(self, name: str) -> str:
        """The error observation of a call to a tool the manifest does not have."""
        return unknown_tool(name, [t.name for t in self.tools])


def unknown_tool(name: Any, names: list[Any]) -> str:
    """The error observation of a call to a tool that is not among ``names``."""
    return f"unknown tool {str(name)[:60]!r}; the manifest has {names}"


def _plain(args: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    return {
        k: {f: list(v) if isinstance(v, (list, tuple)) else v for f, v in s.items()}
        for k, s in args.items()
    }


_KINDS: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
}


def check_args(
    tool: str,
    schema: Mapping[str, Mapping[str, Any]],
    args: Any,
    *,
    nonempty_strings: bool = False,
    max_chars: int | None = None,
) -> str | None:
    """None when ``args`` fit the argument ``schema`` of ``tool``, else what is wrong (the
    error observation): ``args`` is an object; no argument the tool does not declare; every
    ``required`` one present; its ``type`` (a bool is no number); ``enum``; ``minimum`` /
    ``maximum``; ``maxLength`` of a string or array. ``nonempty_strings`` / ``max_chars``: the
    environment's own limits on every string argument (beyond the schema)."""
    if not isinstance(args, Mapping):
        return f"'args' of {tool} must be an object; got {type(args).__name__}"
    unknown = sorted(str(a) for a in args if a not in schema)
    if unknown:
        return f"{tool} has no argument {unknown[0][:60]!r}; accepted: {sorted(schema)}"
    for name, rule in schema.items():
        if name not in args:
            if rule.get("required"):
                return f"{tool} needs the argument {name!r}"
            continue
        value, kind = args[name], str(rule.get("type", "string"))
        allowed = _KINDS.get(kind)
        if allowed is not None and (
            not isinstance(value, allowed) or (kind != "boolean" and isinstance(value, bool))
        ):
            return (
                f"argument {name!r} of {tool} must be {'an' if kind[0] in 'aei' else 'a'} "
                f"{kind}; got {type(value).__name__}"
            )
        if nonempty_strings and value == "":
            return f"argument {name!r} of {tool} must be a non-empty string"
        enum = rule.get("enum")
        if enum and value not in enum:
            return f"argument {name!r} of {tool} must be one of {list(enum)}; got {_brief(value)}"
        lo, hi = rule.get("minimum"), rule.get("maximum")
        if isinstance(value, (int, float)) and (
            (lo is not None and value < lo) or (hi is not None and value > hi)
        ):
            return f"argument {name!r} of {tool} must be in [{lo}, {hi}]; got {_brief(value)}"
        most = rule.get("maxLength", max_chars if isinstance(value, str) else None)
        if most is not None and isinstance(value, (str, list)) and len(value) > most:
            return f"argument {name!r} of {tool} is longer than {most} ({len(value)})"
    return None


def validate_args(
    spec: ToolSpec, args: Any, *, nonempty_strings: bool = False, max_chars: int | None = None
) -> str | None:
    """:func:`check_args` against the tool ``spec``."""
    return check_args(
        spec.name, spec.args, args, nonempty_strings=nonempty_strings, max_chars=max_chars
    )


def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:80] + "…"
