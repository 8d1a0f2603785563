"""Strict parsing of the actions an LLM emits: a tool call or a final answer, as JSON.

Usage::

    from rewardkit.envs.actions import parse_action
    a = parse_action('{"tool": "get_patient", "args": {"id": "p-1"}}')
    a.kind, a.tool, a.args          # 'tool', 'get_patient', {'id': 'p-1'}
    parse_action('{"answer": {"status": "met", "value": NaN}}').error
    # 'NaN is not a number a verifier can compare'

Accepted shapes (SPEC §6)::

    {"tool": NAME, "args": {...}}
    {"answer": {"status": "met"|"not_met"|"unknown", "value": number|null, "unit": str|null,
                "evidence": [resource ids], "note": str}}   # all but status optional

Parser tricks are rejected, never guessed at: duplicate keys, extra keys, NaN / Infinity,
numbers beyond ±1e9, JSON wrapped inside a string, numbers written as strings, booleans as
numbers. A rejected action is data (``kind == "invalid"`` with the reason), not an exception:
the environment turns it into an error observation and a format penalty.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ANSWER_STATUSES",
    "MAX_ABS_VALUE",
    "MAX_ACTION_CHARS",
    "ParsedAction",
    "parse_action",
]

ANSWER_STATUSES = ("met", "not_met", "unknown")
MAX_ABS_VALUE = 1e9
MAX_ACTION_CHARS = 65_536  # every valid action is far shorter (a note holds ≤ 1000 characters)
MAX_DEPTH = 32  # nesting of objects and arrays; a valid action needs 4
_UNENCODABLE = "invalid action: "  # how the environment records an action that is not JSON
_ANSWER_KEYS = {"status", "value", "unit", "evidence", "note"}
MAX_EVIDENCE = 50


@dataclass(frozen=True)
class ParsedAction:
    """``kind``: "tool" (``tool``, ``args``), "answer" (``answer``) or "invalid" (``error``)."""

    kind: str
    tool: str | None = None
    args: dict[str, Any] | None = None
    answer: dict[str, Any] | None = None
    error: str | None = None


class _Reject(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for k, v in pairs:
        if k in seen:
            raise _Reject(f"duplicate key {k!r}: ambiguous action")
        seen[k] = v
    return seen


def _no_constant(name: str) -> Any:
    raise _Reject(f"{name} is not a number a verifier can compare")


def _check_numbers(obj: Any, where: str, depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        raise _Reject(f"action is nested deeper than {MAX_DEPTH} levels")
    if isinstance(obj, float):
        if math.isnan(obj):
            raise _Reject(f"NaN at {where} is not a number a verifier can compare")
        if not math.isfinite(obj) or abs(obj) > MAX_ABS_VALUE:
            raise _Reject(f"number at {where} is out of range (|x| <= {MAX_ABS_VALUE:g})")
    elif isinstance(obj, int) and not isinstance(obj, bool):
        if abs(obj) > MAX_ABS_VALUE:
            raise _Reject(f"number at {where} is out of range (|x| <= {MAX_ABS_VALUE:g})")
    elif isinstance(obj, dict):
        for k, v in obj.items():
            if not isinstance(k, str):
                raise _Reject(f"key {k!r} at {where} is not a string")
            _check_numbers(v, f"{where}.{k}", depth + 1)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            _check_numbers(v, f"{where}[{i}]", depth + 1)
    elif obj is not None and not isinstance(obj, (str, bool)):
        raise _Reject(f"value at {where} is a {type(obj).__name__}, not JSON")


def _load(raw: Any) -> Any:
    if isinstance(raw, (bytes, bytearray)):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise _Reject("action is not UTF-8 text") from None
    if isinstance(raw, str):
        if raw.startswith(_UNENCODABLE):
            raise _Reject(raw.removeprefix(_UNENCODABLE))
        if len(raw) > MAX_ACTION_CHARS:
            raise _Reject(f"action of {len(raw)} characters; at most {MAX_ACTION_CHARS}")
        if not raw.strip():
            raise _Reject("empty action")
        try:
            obj = json.loads(raw, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
        except _Reject:
            raise
        except (ValueError, RecursionError) as exc:
            raise _Reject(f"not valid JSON ({str(exc)[:80]})") from None
    else:
        obj = raw
    _check_numbers(obj, "$")
    if isinstance(obj, str):
        raise _Reject(
            "action must be a JSON object; got a string (JSON inside a string is not unwrapped)"
        )
    if not isinstance(obj, dict):
        raise _Reject(f"action must be a JSON object; got {type(obj).__name__}")
    return obj


def _answer(ans: Any) -> dict[str, Any]:
    if not isinstance(ans, dict):
        raise _Reject(f"'answer' must be an object; got {type(ans).__name__}")
    extra = sorted(set(ans) - _ANSWER_KEYS)
    if extra:
        raise _Reject(f"answer has unknown key {extra[0]!r}; accepted: {sorted(_ANSWER_KEYS)}")
    status = ans.get("status")
    if status not in ANSWER_STATUSES:
        raise _Reject(f"answer 'status' must be one of {list(ANSWER_STATUSES)}; got {status!r}")
    value = ans.get("value")
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise _Reject(f"answer 'value' must be a number or null; got {value!r}")
    unit = ans.get("unit")
    if unit is not None and (not isinstance(unit, str) or len(unit) > 40):
        raise _Reject(
            f"answer 'unit' must be a string of at most 40 characters or null; got {unit!r}"
        )
    evidence = ans.get("evidence", [])
    if (
        not isinstance(evidence, list)
        or len(evidence) > MAX_EVIDENCE
        or not all(isinstance(e, str) and 0 < len(e) <= 100 for e in evidence)
    ):
        raise _Reject(
            f"answer 'evidence' must be a list of at most {MAX_EVIDENCE} resource "
            f"id strings; got {evidence!r}"[:200]
        )
    note = ans.get("note", "")
    if not isinstance(note, str) or len(note) > 1000:
        raise _Reject("answer 'note' must be a string of at most 1000 characters")
    return {
        "status": status,
        "value": None if value is None else float(value),
        "unit": unit,
        "evidence": list(evidence),
        "note": note,
    }


def parse_action(
    raw: Any, *, answer: Callable[[Any], dict[str, Any]] | None = None
) -> ParsedAction:
    """Parse one action (JSON text, bytes or an already-decoded dict); never raises.

    ``answer``: the environment's own answer parser (it raises ValueError with the reason;
    ``envs.sql`` has one); by default the answer shape of the module docstring."""
    read_answer = _answer if answer is None else answer
    try:
        obj = _load(raw)
        keys = set(obj)
        if keys == {"answer"}:
            return ParsedAction("answer", answer=read_answer(obj["answer"]))
        if keys in ({"tool", "args"}, {"tool"}):
            tool = obj["tool"]
            if not isinstance(tool, str) or not tool:
                raise _Reject(f"'tool' must be a tool name; got {tool!r}"[:200])
            args = obj.get("args", {})
            if not isinstance(args, dict):
                raise _Reject(f"'args' must be an object; got {type(args).__name__}")
            return ParsedAction("tool", tool=tool, args=args)
        raise _Reject(
            f"action must have exactly the keys ['tool', 'args'] or ['answer']; got {sorted(keys)}"[
                :200
            ]
        )
    except RecursionError:  # a pathological object handed in directly (not through Env.step)
        return ParsedAction("invalid", error=f"action is nested deeper than {MAX_DEPTH} levels")
    except (ValueError, TypeError) as exc:  # a rejection (_Reject is a ValueError)
        return ParsedAction("invalid", error=str(exc) or type(exc).__name__)
