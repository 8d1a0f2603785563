"""Strict parsing of the SQL environments' actions: a tool call or a final answer, as JSON.

Usage::

    from rewardkit.envs.sql.actions import parse_sql_action
    a = parse_sql_action('{"tool": "query", "args": {"sql": "SELECT 1"}}')
    a.kind, a.tool, a.args                  # 'tool', 'query', {'sql': 'SELECT 1'}

Accepted shapes::

    {"tool": NAME, "args": {...}}
    {"answer": {"status": "answered" | "unknown",
                "value": number | [customer_id, ...] | null,
                "evidence": ["q1", ...], "note": "free text"}}
    # a list may also be given as "ids": [customer_id, ...] (typed tool calls: the TRL
    # adapter's answer tool has value: number and ids: list of int)

``answered`` needs a value; ``unknown`` must not have one. Parser tricks are rejected exactly
as in ``envs.actions`` (duplicate keys, extra keys, NaN / Infinity, numbers beyond ±1e9, JSON
inside a string, numbers written as strings, booleans as numbers): a rejected action is data
(``kind == "invalid"``), never an exception.
"""

from __future__ import annotations

from typing import Any

from ..actions import ParsedAction, parse_action

__all__ = ["MAX_EVIDENCE", "MAX_IDS", "STATUSES", "parse_sql_action"]

STATUSES = ("answered", "unknown")
MAX_EVIDENCE = 20
MAX_IDS = 50
_KEYS = {"status", "value", "ids", "evidence", "note"}


def _answer(ans: Any) -> dict[str, Any]:
    if not isinstance(ans, dict):
        raise ValueError(f"'answer' must be an object; got {type(ans).__name__}")
    extra = sorted(set(ans) - _KEYS)
    if extra:
        raise ValueError(f"answer has unknown key {extra[0]!r}; accepted: {sorted(_KEYS)}")
    if "ids" in ans:  # the list answer under its own key (typed tools: value is a number)
        if ans.get("value") is not None:
            raise ValueError("give either 'value' or 'ids', not both")
        ans = {**{k: v for k, v in ans.items() if k != "ids"}, "value": ans["ids"]}
        if not isinstance(ans["value"], list):
            raise ValueError("answer 'ids' must be a list of integer ids")
    status = ans.get("status")
    if status not in STATUSES:
        raise ValueError(f"answer 'status' must be one of {list(STATUSES)}; got {status!r}"[:200])
    value = ans.get("value")
    if isinstance(value, list):
        if not 0 < len(value) <= MAX_IDS or not all(
            isinstance(x, int) and not isinstance(x, bool) for x in value
        ):
            raise ValueError(f"answer 'value' as a list must hold 1-{MAX_IDS} integer ids")
        value = [int(x) for x in value]
    elif value is not None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(
                f"answer 'value' must be a number, a list of ids or null; got {value!r}"[:200]
            )
        value = float(value)
    if status == "answered" and value is None:
        raise ValueError("an 'answered' answer needs a 'value'")
    if status == "unknown" and value is not None:
        raise ValueError("an 'unknown' answer must not have a 'value'")
    evidence = ans.get("evidence", [])
    if (
        not isinstance(evidence, list)
        or len(evidence) > MAX_EVIDENCE
        or not all(isinstance(e, str) and 0 < len(e) <= 20 for e in evidence)
    ):
        raise ValueError(f"answer 'evidence' must be a list of at most {MAX_EVIDENCE} query ids")
    note = ans.get("note", "")
    if not isinstance(note, str) or len(note) > 1000:
        raise ValueError("answer 'note' must be a string of at most 1000 characters")
    return {"status": status, "value": value, "evidence": list(evidence), "note": note}


def parse_sql_action(raw: Any) -> ParsedAction:
    """Parse one action (JSON text, bytes or a decoded dict) with the SQL answer; never
    raises."""
    return parse_action(raw, answer=_answer)
