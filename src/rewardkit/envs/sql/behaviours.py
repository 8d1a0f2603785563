"""Scripted behaviours for ``rewardkit sweep`` on the SQL environments.

Usage::

    from rewardkit.envs.sql.behaviours import BEHAVIOURS
    actions = BEHAVIOURS["over_call"](env)       # after env.reset(...)

concise (the reference path), over_call (the query four times), explore_first (list and
describe tables first), never_call (a number with no query: fabricated), always_unknown,
look_then_unknown, cite_everything (three unrelated queries cited beside the right one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["BEHAVIOURS"]


def _q(sql: str) -> dict[str, Any]:
    return {"tool": "query", "args": {"sql": sql}}


def _concise(env: Any) -> list[Any]:
    return list(env.reference_actions())


def _over_call(env: Any) -> list[Any]:
    query, answer = env.reference_actions()
    return [query, query, query, query, {"answer": {**answer["answer"], "evidence": ["q4"]}}]


def _explore_first(env: Any) -> list[Any]:
    query, answer = env.reference_actions()
    looks = [{"tool": "list_tables"}] + [
        {"tool": "describe_table", "args": {"name": t}} for t in ("orders", "order_lines")
    ]
    return [*looks, query, answer]


def _never_call(env: Any) -> list[Any]:
    kind = env.task.kind
    value: Any = [1] if kind == "ids" else (0.5 if kind == "fraction" else 1000.0)
    return [{"answer": {"status": "answered", "value": value, "evidence": []}}]


def _always_unknown(env: Any) -> list[Any]:
    return [{"answer": {"status": "unknown", "evidence": []}}]


def _look_then_unknown(env: Any) -> list[Any]:
    query, _ = env.reference_actions()
    return [query, {"answer": {"status": "unknown", "evidence": ["q1"]}}]


def _cite_everything(env: Any) -> list[Any]:
    query, answer = env.reference_actions()
    extra = [_q(f"SELECT COUNT(*) FROM {t}") for t in ("orders", "refunds", "order_lines")]
    return [*extra, query, {"answer": {**answer["answer"], "evidence": ["q1", "q2", "q3", "q4"]}}]


BEHAVIOURS: dict[str, Callable[[Any], list[Any]]] = {
    "concise": _concise,
    "over_call": _over_call,
    "explore_first": _explore_first,
    "never_call": _never_call,
    "always_unknown": _always_unknown,
    "look_then_unknown": _look_then_unknown,
    "cite_everything": _cite_everything,
}
