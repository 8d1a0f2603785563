"""Tool manifests of the tool environments: the tools an agent may call, their argument
schemas and costs, and the check of a call's arguments against them.

Usage::

    from rewardkit.envs.manifest import ToolManifest, ToolSpec, validate_args
    MANIFEST = ToolManifest("my-tools-1.0.0", (ToolSpec("lookup", "Find a record.",
                            {"id": {"type": "string", "required": True}}, 1.0),))
    MANIFEST.get("lookup").cost, MANIFEST.hash         # 1.0, "sha256:…" (enters task lineage)
    validate_args(MANIFEST.get("lookup"), {"id": ""})  # "argument 'id' of lookup must be …"

An argument schema is ``{"type": "string" | "integer" | "number", "required"?, "enum"?,
"minimum"?, "maximum"?}``. Each family (``envs.fhir``, ``envs.sql``) declares its own manifest
and may add fields to :class:`ToolSpec` in a subclass; the manifest's hash covers them all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._json import JsonMixin, content_hash

__all__ = ["ToolManifest", "ToolSpec", "validate_args"]


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
        return f"unknown tool {name!r}; the manifest has {[t.name for t in self.tools]}"


def _plain(args: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    return {
        k: {f: list(v) if isinstance(v, (list, tuple)) else v for f, v in s.items()}
        for k, s in args.items()
    }


def validate_args(
    spec: ToolSpec, args: Any, *, min_chars: int = 1, max_chars: int | None = 200
) -> str | None:
    """None when ``args`` fit the tool's schema, else what is wrong (for the error observation).

    A string argument must have ``min_chars`` to ``max_chars`` characters (None: no limit)."""
    if not isinstance(args, Mapping):
        return f"'args' of {spec.name} must be an object; got {type(args).__name__}"
    unknown = sorted(set(args) - set(spec.args))
    if unknown:
        return f"{spec.name} has no argument {unknown[0]!r}; accepted: {sorted(spec.args)}"
    for name, schema in spec.args.items():
        if name not in args:
            if schema.get("required"):
                return f"{spec.name} needs the argument {name!r}"
            continue
        v, kind = args[name], schema["type"]
        ok = (
            (
                kind == "string"
                and isinstance(v, str)
                and min_chars <= len(v)
                and (max_chars is None or len(v) <= max_chars)
            )
            or (kind == "integer" and isinstance(v, int) and not isinstance(v, bool))
            or (kind == "number" and isinstance(v, (int, float)) and not isinstance(v, bool))
        )
        if not ok:
            what = f"non-empty {kind}" if min_chars > 0 else kind
            return f"argument {name!r} of {spec.name} must be a {what}; got {v!r}"
        if "enum" in schema and v not in schema["enum"]:
            return f"argument {name!r} of {spec.name} must be one of {schema['enum']}; got {v!r}"
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            return f"argument {name!r} of {spec.name} must be in [{lo}, {hi}]; got {v!r}"
    return None
