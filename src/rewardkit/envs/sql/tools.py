"""The SQL tools, their versioned manifest with costs, and the audit ledger.

Usage::

    from rewardkit.envs.sql.tools import MANIFEST, SqlToolRunner
    runner = SqlToolRunner(session)
    result, entry = runner.call(step=1, name="query", args={"sql": "SELECT 1"}, query_no=1)
    result["query_id"], result["rows"]            # 'q1', [[1]]
    entry.events, entry.cost                      # what the authorizer saw; cost units

Tools (``sql-tools-1.0.0``):

| tool | args | cost |
|---|---|---|
| ``list_tables`` | – | 0.1 |
| ``describe_table`` | ``name`` | 0.1 |
| ``query`` | ``sql`` (one statement, at most 4,000 characters) | 1 + VM steps / 1,000,000 |

``query`` returns at most ``max_rows`` rows with a query id (``q1``, ``q2``, … per episode,
failed queries included); answers cite these ids. The ledger records facts only — the
authorizer's events, the statement keywords, the cells returned, the cost — and the verifier's
gates judge them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..._json import JsonMixin
from ..manifest import ToolManifest, ToolSpec
from ..manifest import validate_args as validate_manifest_args
from .engine import AuthEvent, QueryRun, ReadOnlySession
from .schema import PERSONAL_COLUMNS, SCHEMA, VIEWS

__all__ = ["MANIFEST", "QUERY_MAX_CHARS", "LedgerEntry", "SqlToolRunner", "ToolManifest"]

QUERY_MAX_CHARS = 4_000
STEPS_PER_COST_UNIT = 1_000_000


MANIFEST = ToolManifest(
    version="sql-tools-1.0.0",
    tools=(
        ToolSpec("list_tables", "List the tables and views with their row counts.", {}, 0.1),
        ToolSpec(
            "describe_table",
            "Columns of one table or view: type, description, and whether it holds personal data.",
            {"name": {"type": "string", "required": True}},
            0.1,
        ),
        ToolSpec(
            "query",
            "Run one read-only SQLite SELECT; returns at most 50 rows and a query id to "
            "cite. Costs 1 plus 1 per million VM steps of work.",
            {"sql": {"type": "string", "required": True}},
            1.0,
        ),
    ),
)


@dataclass(frozen=True)
class LedgerEntry(JsonMixin):
    """One tool call as the environment saw it: a row of the ledger the hidden verifier reads
    (as the FHIR environment's ``LedgerEntry``). Immutable in fact, so nothing after the call
    can edit what the verifier will judge; ``to_json()`` writes it for inspection."""

    step: int
    tool: str | None
    outcome: str  # "ok", "error" (the tool ran and refused or failed), "invalid", "over_budget"
    query_id: str | None = None
    sql: str | None = None
    events: tuple[AuthEvent, ...] = ()
    keywords: tuple[str, ...] = ()
    cells: tuple[Any, ...] = ()  # every cell returned to the agent, row by row
    tables_read: tuple[str, ...] = ()
    cost: float = 0.0
    vm_steps: int = 0
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def validate_args(spec: ToolSpec, args: Mapping[str, Any]) -> str | None:
    """None when ``args`` fit the tool's schema, else the reason (a string argument may be
    empty; a query has at most ``QUERY_MAX_CHARS`` characters)."""
    problem = validate_manifest_args(spec, args)
    if problem is None and spec.name == "query" and len(args["sql"]) > QUERY_MAX_CHARS:
        return f"query: 'sql' is longer than {QUERY_MAX_CHARS} characters"
    return problem


class SqlToolRunner:
    """Runs the tools against one read-only session and writes the ledger entries."""

    def __init__(self, session: ReadOnlySession, counts: Mapping[str, int]) -> None:
        self.session = session
        self.counts = dict(counts)  # table or view → rows (for list_tables)

    def call(
        self, step: int, name: str, args: Mapping[str, Any], query_no: int
    ) -> tuple[dict[str, Any], LedgerEntry]:
        spec = MANIFEST.get(name)
        assert spec is not None
        if name == "list_tables":
            rows = [
                {"name": n, "kind": "view" if n in VIEWS else "table", "rows": c}
                for n, c in sorted(self.counts.items())
            ]
            return {"tables": rows}, LedgerEntry(step, name, "ok", cost=spec.cost)
        if name == "describe_table":
            return self._describe(step, str(args["name"]), spec.cost)
        run = self.session.run(str(args["sql"]))
        qid = f"q{query_no}"
        cost = round(spec.cost + run.vm_steps / STEPS_PER_COST_UNIT, 6)
        return _query_result(qid, run), LedgerEntry(
            step,
            name,
            "ok" if run.ok else "error",
            query_id=qid,
            sql=run.sql,
            events=run.events,
            keywords=run.keywords,
            cells=tuple(x for row in run.rows for x in row),
            tables_read=tuple(
                sorted({e.table for e in run.events if e.action == "read" and e.table})
            ),
            cost=cost,
            vm_steps=run.vm_steps,
            note=run.error or "",
        )

    def _describe(self, step: int, name: str, cost: float) -> tuple[dict[str, Any], LedgerEntry]:
        if name in SCHEMA:
            cols = [
                {
                    "name": c,
                    "type": typ.split()[0],
                    "description": desc,
                    "personal": (name, c) in PERSONAL_COLUMNS,
                }
                for c, typ, desc in SCHEMA[name]
            ]
            out: dict[str, Any] = {"name": name, "kind": "table", "columns": cols}
        elif name in VIEWS:
            sql, desc = VIEWS[name]
            out = {"name": name, "kind": "view", "description": desc, "definition": sql}
        else:
            known = sorted([*SCHEMA, *VIEWS])
            return {"error": f"no table or view {name!r}; known: {known}"}, LedgerEntry(
                step, "describe_table", "error", cost=cost, note="unknown table"
            )
        return out, LedgerEntry(step, "describe_table", "ok", cost=cost)


def _query_result(qid: str, run: QueryRun) -> dict[str, Any]:
    if not run.ok:
        return {"query_id": qid, "error": run.error}
    return {
        "query_id": qid,
        "columns": list(run.columns),
        "rows": [list(r) for r in run.rows],
        "truncated": run.truncated,
        "vm_steps": run.vm_steps,
    }
