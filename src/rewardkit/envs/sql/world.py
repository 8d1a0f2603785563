"""The seeded retail database in SQLite, and the task scenarios whose traps are decisive.

Usage::

    from rewardkit.envs.sql.world import build_world
    w = build_world(seed=0)            # cached per process; about 0.3 s the first time
    w.uri                              # read-only URI of the in-memory database
    w.content_hash                     # sha256 of the database bytes (enters every lineage)
    w.scenarios[("revenue", "refunds", 0)].params      # {'store': 4, 'month': 17}

The database lives in SQLite's in-memory ``memdb`` VFS under a name derived from its content,
so every connection of the process shares one copy and agents open it read-only
(``mode=ro``); the builder's connection keeps it alive. Tables: ``stores``, ``customers``
(personal data: name, email, phone, address), ``products``, ``orders``, ``order_lines``,
``refunds``, ``currency_rates``; one view, ``customer_orders``, that exposes customer names
and emails next to their orders.

Scenarios: for every family, trap and variant, a task (store and month, quarter and N, …)
where mishandling that trap changes the answer (``Facts`` with ``mishandle=trap``), checked
here when the world is built; a world in which a trap cannot be made decisive is an error,
never a silently easier task.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from ...errors import ConfigError
from .data import (
    CATEGORIES,
    CURRENCIES,
    DATA_END_DAY,
    EPOCH,
    STORES,
    Tables,
    add_order,
    day_string,
    generate,
)
from .schema import INDEXES, PERSONAL_COLUMNS, SCHEMA, VIEWS
from .truth import N_MONTHS, N_QUARTERS, Facts

__all__ = [
    "FAMILY_TRAPS",
    "PERSONAL_COLUMNS",
    "SCHEMA",
    "VIEWS",
    "Scenario",
    "World",
    "build_world",
]

FAMILY_TRAPS: dict[str, tuple[str, ...]] = {
    "revenue": (
        "refunds",
        "soft_deleted",
        "duplicate_lines",
        "currency",
        "timezone",
        "unanswerable",
    ),
    "top-customers": (
        "null_group",
        "ties",
        "refunds",
        "soft_deleted",
        "duplicate_lines",
        "currency",
        "unanswerable",
    ),
    "retention": ("soft_deleted", "first_order", "date_boundary", "unanswerable"),
    "refund-rate": (
        "null_category",
        "duplicate_lines",
        "currency",
        "soft_deleted",
        "unanswerable",
    ),
}
MONEY_MARGIN = 1.0  # a decisive trap moves a USD answer by more than this
FRACTION_MARGIN = 0.0005  # … or a fraction by more than this (5 × its tolerance)


@dataclass(frozen=True)
class Scenario:
    """One task: its parameters, the truth, and what mishandling its trap gives instead."""

    family: str
    trap: str
    variant: int
    params: dict[str, Any]
    truth: Any  # float, list of customer ids, or None (unknown is right)
    mishandled: Any


@dataclass(frozen=True, eq=False)
class World:
    seed: int
    uri: str  # read-only URI for agents
    content_hash: str
    tables: Tables
    facts: Facts
    scenarios: dict[tuple[str, str, int], Scenario]
    variants: int
    build_s: float
    _keepalive: Any  # the builder connection: the memdb database lives while it is open


def _ts_text(seconds: np.ndarray) -> list[str]:
    stamps = EPOCH + seconds.astype("timedelta64[s]")
    return [s.replace("T", " ") for s in np.datetime_as_string(stamps, unit="s")]


def _plant_ties(t: Tables, *, rng: np.random.Generator, n_ties: int) -> list[tuple[int, int]]:
    """Make the N-th and (N+1)-th customers of a quarter tie to the cent (an extra USD order
    for the (N+1)-th); returns the (quarter, N) pairs."""
    quarters = [q for q in range(N_QUARTERS) if not Facts(t)._quarter_missing[q]]
    chosen = [int(q) for q in rng.permutation(quarters)[:n_ties]]
    web = next(i for i, s in enumerate(STORES) if s[5] == "USD" and s[6] == 0)
    product = int(np.flatnonzero(t.products["category"] >= 0)[0])
    planted = []
    for q in chosen:
        n = int((3, 5, 10)[int(rng.integers(3))])
        rows, cents = Facts(t).customer_cents(q)
        gap = int(cents[n - 1] - cents[n])
        if gap > 0:
            start = np.datetime64(f"{2023 + q // 4}-{3 * (q % 4) + 1:02d}-01", "D")
            lo = int((start - EPOCH).astype(np.int64))
            ts = lo * 86_400 + int(rng.integers(5 * 86_400, 80 * 86_400))
            add_order(
                t,
                customer=int(rows[n]),
                store=web,
                ts=ts,
                product=product,
                qty=1,
                price=gap / 100,
            )
        planted.append((q, n))
    return planted


def _write_db(t: Tables, name: str) -> sqlite3.Connection:
    con = sqlite3.connect(f"file:/{name}?vfs=memdb", uri=True, check_same_thread=False)
    for table, cols in SCHEMA.items():
        body = ", ".join(f"{c} {typ}" for c, typ, _ in cols)
        con.execute(f"CREATE TABLE {table} ({body})")
    for view, (sql, _) in VIEWS.items():
        con.execute(f"CREATE VIEW {view} AS {sql}")
    con.executemany("INSERT INTO stores VALUES (?, ?, ?, ?, ?, ?, ?)", [s[:7] for s in STORES])
    cu = t.customers
    con.executemany(
        "INSERT INTO customers VALUES (?, ?, ?, ?, ?, ?, ?)",
        zip(
            range(1, len(cu["name"]) + 1),
            cu["name"],
            cu["email"],
            cu["phone"],
            cu["address"],
            cu["city"],
            cu["country"],
        ),
    )
    p = t.products
    con.executemany(
        "INSERT INTO products VALUES (?, ?, ?, ?)",
        (
            (i + 1, f"SKU-{i + 1:05d}", CATEGORIES[c] if c >= 0 else None, float(pr))
            for i, (c, pr) in enumerate(zip(p["category"].tolist(), p["price_usd"].tolist()))
        ),
    )
    o = t.orders
    when = _ts_text(o["ts"])
    voided_at = _ts_text(o["ts"] + 3 * 86_400)
    con.executemany(
        "INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?)",
        (
            (
                i + 1,
                c + 1 if c >= 0 else None,
                s + 1,
                when[i],
                STORES[s][5],
                voided_at[i] if v else None,
            )
            for i, (c, s, v) in enumerate(
                zip(o["customer"].tolist(), o["store"].tolist(), o["voided"].tolist())
            )
        ),
    )
    ln = t.lines
    con.executemany(
        "INSERT INTO order_lines VALUES (?, ?, ?, ?, ?, ?)",
        zip(
            range(1, len(ln["order"]) + 1),
            (ln["order"] + 1).tolist(),
            ln["line_no"].tolist(),
            (ln["product"] + 1).tolist(),
            ln["qty"].tolist(),
            ln["price"].tolist(),
        ),
    )
    r = t.refunds
    con.executemany(
        "INSERT INTO refunds VALUES (?, ?, ?, ?, ?)",
        zip(
            range(1, len(r["order"]) + 1),
            (r["order"] + 1).tolist(),
            r["line_no"].tolist(),
            _ts_text(r["ts"]),
            r["amount"].tolist(),
        ),
    )
    days = [day_string(d) for d in range(DATA_END_DAY)]
    con.executemany(
        "INSERT INTO currency_rates VALUES (?, ?, ?)",
        (
            (cur, days[d], float(t.rates[c, d]))
            for c, cur in enumerate(CURRENCIES)
            for d in range(DATA_END_DAY)
            if not np.isnan(t.rates[c, d])
        ),
    )
    for stmt in INDEXES:
        con.execute(stmt)
    con.commit()
    return con


def _differs(a: Any, b: Any, margin: float) -> bool:
    if a is None or b is None:
        return (a is None) != (b is None)
    if isinstance(a, list):
        return bool(a != b)
    return bool(abs(a - b) > margin)


def _candidates(f: Facts, family: str, trap: str, ties: list[tuple[int, int]]) -> list[dict]:
    """Every parameter set of ``family`` that may realise ``trap`` (checked by the caller)."""
    quarters = [q for q in range(N_QUARTERS) if not f._quarter_missing[q]]
    if family == "revenue":
        months = range(N_MONTHS, N_MONTHS + 2) if trap == "unanswerable" else range(1, N_MONTHS - 1)
        out = [{"store": s + 1, "month": m} for s in range(len(STORES)) for m in months]
        if trap == "unanswerable":  # the rate gap
            out += [
                {"store": s + 1, "month": m}
                for s in range(len(STORES))
                for m in range(1, N_MONTHS - 1)
            ]
        return out
    if family == "top-customers":
        if trap == "ties":
            return [{"quarter": q, "n": n} for q, n in ties]
        qs = [N_QUARTERS, N_QUARTERS + 1, *(q for q in range(N_QUARTERS) if q not in quarters)]
        pool = qs if trap == "unanswerable" else quarters
        tied = set(ties)
        return [{"quarter": q, "n": n} for q in pool for n in (3, 5, 10, 20) if (q, n) not in tied]
    if family == "retention":
        return [{"month": m, "days": d} for m in range(N_MONTHS) for d in (14, 30, 45, 60, 90)]
    scopes = ("outside",) if trap == "null_category" else ("in", "outside")
    pool = (
        [*quarters, *(q for q in range(N_QUARTERS) if q not in quarters)]
        if trap == "unanswerable"
        else quarters
    )
    return [
        {"quarter": q, "category": c, "scope": s}
        for q in pool
        for c in range(len(CATEGORIES))
        for s in scopes
    ]


def _answer(f: Facts, family: str, params: dict[str, Any], mishandle: str | None) -> Any:
    if family == "revenue":
        return f.revenue(params["store"], params["month"], mishandle)
    if family == "top-customers":
        return f.top_customers(params["quarter"], params["n"], mishandle)
    if family == "retention":
        return f.retention(params["month"], params["days"], mishandle)
    return f.refund_rate(params["quarter"], params["category"], params["scope"], mishandle)


def _past_data(params: dict[str, Any]) -> bool:
    if "quarter" in params:
        return bool(params["quarter"] >= N_QUARTERS)
    return bool(params["month"] >= N_MONTHS)


def _pick(
    f: Facts, family: str, trap: str, variants: int, seed: int, ties: list[tuple[int, int]]
) -> list[Scenario]:
    margin = MONEY_MARGIN if family == "revenue" else FRACTION_MARGIN
    cands = _candidates(f, family, trap, ties)
    fam_i = list(FAMILY_TRAPS).index(family)
    order = np.random.default_rng([seed, 29, fam_i, FAMILY_TRAPS[family].index(trap)]).permutation(
        len(cands)
    )
    found: list[tuple[dict[str, Any], Any, Any]] = []
    for k in order:
        params = cands[int(k)]
        truth = _answer(f, family, params, None)
        if (truth is None) != (trap == "unanswerable"):
            continue
        wrong = _answer(f, family, params, trap)
        if not _differs(truth, wrong, margin):
            continue
        if family == "top-customers" and truth is not None and trap != "ties":
            n = params["n"]
            if len(truth) != n:  # a tie at the cut-off belongs to the ties trap only
                continue
        found.append((params, truth, wrong))
        if trap != "unanswerable" and len(found) == variants:
            break
        n_past = sum(1 for x in found if _past_data(x[0]))
        if min(n_past, len(found) - n_past) >= (variants + 1) // 2:
            break
    if trap == "unanswerable":  # alternate the two causes: past the data, a missing rate
        past = [x for x in found if _past_data(x[0])]
        gap = [x for x in found if not _past_data(x[0])]
        found = [x for pair in zip(gap, past) for x in pair] + gap[len(past) :] + past[len(gap) :]
    if len(found) < variants:
        raise ConfigError(
            f"The sql world of seed {seed} has only {len(found)} decisive {family}/{trap} tasks; "
            f"{variants} were asked for (the 'variants' parameter of build_world)."
        )
    return [
        Scenario(family, trap, v, dict(params), truth, wrong)
        for v, (params, truth, wrong) in enumerate(found[:variants])
    ]


@lru_cache(maxsize=4)
def build_world(seed: int = 0, *, variants: int = 6) -> World:
    """The database and scenarios for ``seed`` (cached per process)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"The 'seed' parameter of build_world must be an int >= 0. Got {seed!r}.")
    if isinstance(variants, bool) or not isinstance(variants, int) or not 1 <= variants <= 12:
        raise ConfigError(
            f"The 'variants' parameter of build_world must be an int in [1, 12]. Got {variants!r}."
        )
    t0 = time.perf_counter()
    t = generate(seed)
    ties = _plant_ties(t, rng=np.random.default_rng([seed, 23]), n_ties=variants)
    name = f"rewardkit-sql-{seed}-{variants}-{id(t):x}"
    con = _write_db(t, name)
    digest = "sha256:" + hashlib.sha256(con.serialize()).hexdigest()
    facts = Facts(t)
    scenarios = {}
    for family, traps in FAMILY_TRAPS.items():
        for trap in traps:
            for sc in _pick(facts, family, trap, variants, seed, ties):
                scenarios[(family, trap, sc.variant)] = sc
    return World(
        seed=seed,
        uri=f"file:/{name}?vfs=memdb&mode=ro",
        content_hash=digest,
        tables=t,
        facts=facts,
        scenarios=scenarios,
        variants=variants,
        build_s=time.perf_counter() - t0,
        _keepalive=con,
    )
