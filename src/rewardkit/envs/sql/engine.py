"""A read-only SQLite session whose every access is seen by an authorizer and whose work is
counted in VM steps.

Usage::

    from rewardkit.envs.sql.engine import ReadOnlySession
    s = ReadOnlySession(world.uri)
    run = s.run("SELECT store_id, COUNT(*) FROM orders GROUP BY store_id")
    run.ok, run.columns, run.rows, run.truncated, run.vm_steps
    run.events            # every authorizer call: ('read', 'orders', 'store_id', …), …

Read-only three independent ways (each alone refuses a write; a test removes the other two):
1. the connection is opened with a ``mode=ro`` URI;
2. ``PRAGMA query_only = ON`` is set before anything else runs;
3. an authorizer callback allows only SELECT, column reads, recursive CTEs and functions
   outside a deny list (``random``, ``randomblob``, ``load_extension``, and ``printf`` /
   ``format``, whose one call with a huge width works for seconds inside a single VM step).
Besides, ``ATTACH`` is limited to 0 databases, and string / SQL / expression sizes are capped.

The authorizer also *records* every call, allowed or denied, column by column: SQLite reports
a read of each column a statement names, also through ``*``, views (with the view's name),
subqueries, CTEs and joins, at compile time, so a refused or failing statement is still seen.
A text with several statements is refused, but each statement is compiled (never run) first so
the authorizer sees it too; a statement's leading keyword is recorded as a second, lexical
witness (``WRITE_KEYWORDS``: a bare ``REINDEX`` reaches no authorizer callback).

Work: a progress handler is called every ``TICK`` VM instructions and aborts the statement
past ``max_vm_steps``; ``vm_steps`` = ticks × ``TICK``, deterministic for a given SQLite
version and database (no wall clock). Results of a text are cached per session: the database
cannot change, so the same text gives the same rows, steps and events.
"""

from __future__ import annotations

import contextlib
import math
import re
import sqlite3
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..._json import JsonMixin

__all__ = [
    "DEFENCES",
    "READ_KEYWORDS",
    "WRITE_KEYWORDS",
    "AuthEvent",
    "QueryRun",
    "ReadOnlySession",
    "reads_clock",
    "split_statements",
]

TICK = 1_000  # VM instructions per progress-handler call
DEFENCES = ("uri", "query_only", "authorizer")
READ_KEYWORDS = frozenset({"SELECT", "WITH", "VALUES", "EXPLAIN"})
# Statements that change a database, its schema, its attachments or the session's settings;
# a text whose statement starts with one is a write attempt even when no authorizer call
# happens (a bare REINDEX on a database without indexes) or the statement does not compile.
WRITE_KEYWORDS = frozenset(
    {
        "INSERT", "UPDATE", "DELETE", "REPLACE", "UPSERT", "CREATE", "DROP", "ALTER", "ATTACH",
        "DETACH", "PRAGMA", "BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE",
        "ANALYZE", "REINDEX", "VACUUM",
    }
)  # fmt: skip
MAX_CELL_CHARS = 200
DENIED_FUNCTIONS = frozenset(
    {
        "random",
        "randomblob",
        "printf",  # one call with a huge width builds a huge string in one VM step
        "format",
        # substring search by byte compare at every offset: |X| x |Y| work in one VM step
        # (instr of 10 kB strings over 30,000 rows ran 30 s on 213,000 steps)
        "instr",
        "replace",
        "load_extension",
        "changes",
        "total_changes",
        "current_timestamp",  # the clock: a result must not depend on when it runs (replay)
        "current_date",
        "current_time",
        "last_insert_rowid",
        "sqlite_compileoption_get",
        "sqlite_compileoption_used",
        "sqlite_offset",
        "fts3_tokenizer",
        "readfile",
        "writefile",
        "edit",
    }
)
_ALLOWED = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE}
_ACTIONS = (  # noqa: SIM905 (SQLite's authorizer action codes 1 … 33, in order)
    "create_index create_table create_temp_index create_temp_table create_temp_trigger "
    "create_temp_view create_trigger create_view delete drop_index drop_table "
    "drop_temp_index drop_temp_table drop_temp_trigger drop_temp_view drop_trigger "
    "drop_view insert pragma read select transaction update attach detach alter_table "
    "reindex analyze create_vtable drop_vtable function savepoint recursive"
).split()
_NAMES = dict(enumerate(_ACTIONS, start=1))
_LIMITS = (
    (sqlite3.SQLITE_LIMIT_ATTACHED, 0),
    (sqlite3.SQLITE_LIMIT_LENGTH, 1_000_000),  # bytes of one string or blob
    (sqlite3.SQLITE_LIMIT_SQL_LENGTH, 20_000),
    (sqlite3.SQLITE_LIMIT_EXPR_DEPTH, 200),
    (sqlite3.SQLITE_LIMIT_COMPOUND_SELECT, 50),
    (sqlite3.SQLITE_LIMIT_FUNCTION_ARG, 16),
    (sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 200),
)


@dataclass(frozen=True)
class AuthEvent(JsonMixin):
    """One authorizer call: the action ("read", "insert", "pragma", …), its table / column or
    other arguments, the view or trigger it came through, and whether it was allowed. A row
    of the environment's ledger: immutable, and ``to_json()`` writes it for inspection."""

    action: str
    table: str | None
    column: str | None
    via: str | None
    allowed: bool


@dataclass(frozen=True)
class QueryRun(JsonMixin):
    """What one query text did: its rows (at most ``max_rows``), steps, and every access.
    Immutable (a run is cached and shared between identical query texts)."""

    sql: str
    ok: bool
    error: str | None
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    truncated: bool
    vm_steps: int
    events: tuple[AuthEvent, ...]
    keywords: tuple[str, ...]  # leading keyword of each statement of the text


def split_statements(sql: str) -> list[str]:
    """The statements of ``sql`` (split at ';' outside strings, quoted names and comments);
    a statement that is only comments or blanks is dropped."""
    out: list[str] = []
    start, i, n = 0, 0, len(sql)
    content = False
    while i < n:
        ch = sql[i]
        if ch in "'\"`[":
            close = "]" if ch == "[" else ch
            j = i + 1
            while j < n:
                if sql[j] == close:
                    if close != "]" and j + 1 < n and sql[j + 1] == close:
                        j += 2
                        continue
                    break
                j += 1
            i, content = j + 1, True
        elif sql.startswith("--", i):
            j = sql.find("\n", i)
            i = n if j < 0 else j + 1
        elif sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif ch == ";":
            if content:
                out.append(sql[start : i + 1])
            start, content, i = i + 1, False, i + 1
        else:
            content = content or not ch.isspace()
            i += 1
    if content:
        out.append(sql[start:])
    return out


# The clock through the date functions: 'now' as an argument, or a call with no time value.
_CLOCK = re.compile(
    r"'\s*now\s*'|\b(?:date|time|datetime|julianday|unixepoch)\s*\(\s*\)"
    r"|\bstrftime\s*\(\s*'(?:[^']|'')*'\s*\)",
    re.IGNORECASE,
)


def reads_clock(stmt: str) -> bool:
    """True when ``stmt`` asks SQLite for the current time (``date('now')``, ``datetime()``,
    ``strftime('%s')``, ``unixepoch()``): its result would differ between a run and its
    replay. A lexical witness: a 'now' built at run time (``'n' || 'ow'``) is not seen."""
    return _CLOCK.search(stmt) is not None


def _keyword(stmt: str) -> str:
    """The leading keyword of one statement (comments skipped), upper case; "" if none."""
    i, n = 0, len(stmt)
    while i < n:
        if stmt[i].isspace() or stmt[i] == "(":
            i += 1
        elif stmt.startswith("--", i):
            j = stmt.find("\n", i)
            i = n if j < 0 else j + 1
        elif stmt.startswith("/*", i):
            j = stmt.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            j = i
            while j < n and (stmt[j].isalnum() or stmt[j] == "_"):
                j += 1
            return stmt[i:j].upper()
    return ""


def _cell(x: Any) -> Any:
    """A result cell as the agent sees it (JSON-able, bounded)."""
    if isinstance(x, float) and not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    if isinstance(x, bytes):
        x = "x'" + x[: MAX_CELL_CHARS // 2].hex() + "'"
    if isinstance(x, str) and len(x) > MAX_CELL_CHARS:
        return x[:MAX_CELL_CHARS] + "…"
    return x


class ReadOnlySession:
    """A read-only connection to ``uri`` (see the module docstring). ``defences`` chooses
    which of the three read-only layers are on (all by default; tests remove some)."""

    def __init__(
        self,
        uri: str,
        *,
        max_rows: int = 50,
        max_vm_steps: int = 2_000_000,
        defences: Iterable[str] = DEFENCES,
        cache_size: int = 4_096,
    ) -> None:
        self.defences = frozenset(defences)
        unknown = sorted(self.defences - set(DEFENCES))
        if unknown:
            raise ValueError(f"unknown defence {unknown[0]!r}; accepted: {list(DEFENCES)}")
        self.max_rows = max_rows
        self.max_vm_steps = max_vm_steps
        if "uri" not in self.defences:
            uri = uri.replace("&mode=ro", "").replace("?mode=ro&", "?").replace("?mode=ro", "")
        elif "mode=ro" not in uri:
            uri += ("&" if "?" in uri else "?") + "mode=ro"
        self.con = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
        if "query_only" in self.defences:
            self.con.execute("PRAGMA query_only = ON")
        for limit, value in _LIMITS:
            self.con.setlimit(limit, value)
        self._events: list[AuthEvent] = []
        self._ticks = 0
        self.con.set_authorizer(self._authorize)
        self.con.set_progress_handler(self._progress, TICK)
        self._cache: OrderedDict[str, QueryRun] = OrderedDict()
        self._cache_size = cache_size
        self.cache_hits = 0

    # --- callbacks ----------------------------------------------------------------------------
    def _authorize(
        self, action: int, a1: str | None, a2: str | None, db: str | None, via: str | None
    ) -> int:
        name = _NAMES.get(action, str(action))
        if action == sqlite3.SQLITE_FUNCTION:
            ok = (a2 or "").lower() not in DENIED_FUNCTIONS
            self._events.append(AuthEvent(name, None, a2, via, ok))
        elif action == sqlite3.SQLITE_READ:
            ok = True
            self._events.append(AuthEvent(name, a1, a2, via, ok))
        else:
            ok = action in _ALLOWED
            self._events.append(AuthEvent(name, a1, a2, via, ok))
        if ok or "authorizer" not in self.defences:
            return sqlite3.SQLITE_OK
        return sqlite3.SQLITE_DENY

    def _progress(self) -> int:
        self._ticks += 1
        return 1 if self._ticks * TICK > self.max_vm_steps else 0

    # --- queries ------------------------------------------------------------------------------
    def run(self, sql: str) -> QueryRun:
        """Run one query text (cached by text)."""
        hit = self._cache.get(sql)
        if hit is not None:
            self._cache.move_to_end(sql)
            self.cache_hits += 1
            return hit
        out = self._run(sql)
        self._cache[sql] = out
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return out

    def _run(self, sql: str) -> QueryRun:
        self._events, self._ticks = [], 0
        statements = split_statements(sql)
        keywords = tuple(_keyword(s) for s in statements)
        if len(statements) != 1:
            for s in statements:  # compile, never run: the authorizer sees every statement
                with contextlib.suppress(sqlite3.Error, ValueError, OverflowError):
                    self.con.execute(s if _keyword(s) == "EXPLAIN" else "EXPLAIN " + s).close()
            err = "empty query" if not statements else "one statement per query"
            return self._done(sql, False, f"{err}; got {len(statements)}", keywords)
        if reads_clock(statements[0]):
            msg = "the current time ('now') is refused: a result must not depend on when it runs"
            return self._done(sql, False, msg, keywords)
        cur = None
        try:
            cur = self.con.execute(statements[0])
            raw = cur.fetchmany(self.max_rows + 1)
            columns = tuple(d[0] for d in cur.description or ())
        except sqlite3.OperationalError as exc:
            msg = str(exc)
            if msg == "interrupted":
                msg = f"query stopped: it exceeded its work budget of {self.max_vm_steps} VM steps"
            return self._done(sql, False, msg, keywords)
        except (sqlite3.Error, ValueError, OverflowError, MemoryError) as exc:
            return self._done(sql, False, f"{type(exc).__name__}: {exc}"[:300], keywords)
        finally:
            if cur is not None:
                cur.close()
        rows = tuple(tuple(_cell(x) for x in r) for r in raw[: self.max_rows])
        return self._done(
            sql, True, None, keywords, columns, rows, truncated=len(raw) > self.max_rows
        )

    def _done(
        self,
        sql: str,
        ok: bool,
        error: str | None,
        keywords: tuple[str, ...],
        columns: tuple[str, ...] = (),
        rows: tuple[tuple[Any, ...], ...] = (),
        *,
        truncated: bool = False,
    ) -> QueryRun:
        return QueryRun(
            sql=sql,
            ok=ok,
            error=error,
            columns=columns,
            rows=rows,
            truncated=truncated,
            vm_steps=self._ticks * TICK,
            events=tuple(self._events),
            keywords=keywords,
        )

    def catalog(self) -> list[tuple[str, str]]:
        """(name, 'table' | 'view') of the schema, read by the environment, not the agent."""
        self._events = []
        rows = self.con.execute(
            "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name"
        ).fetchall()
        self._events = []
        return [(str(n), str(t)) for n, t in rows]

    def close(self) -> None:
        self.con.close()
