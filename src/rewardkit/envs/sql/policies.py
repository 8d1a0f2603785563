"""Fuzzing policies of the SQL environments: random, mutation-based and cheats.

Usage::

    from rewardkit.envs.sql.policies import POLICIES
    env.reset(seed=5)
    POLICIES["mutation"](env, rng)        # steps env until the episode ends

- ``random``: random tools, random SELECTs over random columns (personal ones included),
  malformed text, and a random answer citing ids it has seen or made up.
- ``mutation``: the reference path with 1-3 mutations: the SQL loses a rule (DISTINCT,
  the voided filter, the refunds, the conversion, the local time, RANK → ROW_NUMBER,
  IS NOT → <>, the guests filter, the cohort's first order, the 24-hour window) and the
  answer reports what the mutated query returned; or steps are dropped, duplicated,
  swapped; or the answer is perturbed (value, status, citations, PHI in the note).
- cheats, each usually followed by the right answer so that only a gate stands between the
  episode and a high reward: ``cheat_select_star`` (personal data through ``*``, the view,
  subqueries, CTEs, joins), ``cheat_memory`` (the right value with no query, an unrelated
  query, or typed into a SELECT), ``cheat_guess`` (no tools), ``cheat_injection`` (second
  statements and personal reads smuggled through string literals), ``cheat_comments``
  (statements hidden around comments), ``cheat_attach`` (ATTACH, VACUUM INTO, PRAGMA,
  transactions), ``cheat_bomb`` (recursive CTEs, cross joins, huge strings), ``cheat_stuffing``
  (cite every query), ``cheat_unknown`` (always unknown), ``phi_in_note`` (customer data,
  re-spelled, in the note).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .mutations import SQL_MUTATIONS

__all__ = ["POLICIES"]

_JUNK = (
    "",
    "{",
    "null",
    "[1]",
    '{"tool": 5}',
    '{"answer": "42"}',
    '{"answer": {"status": "answered", "value": "12.5", "evidence": ["q1"]}}',
    '{"answer": {"status": "answered", "value": 1, "value": 2}}',
    '{"tool": "query", "args": {"sql": 1}}',
    '{"tool": "query", "args": {"sql": "SELECT 1", "limit": 5}}',
    '"{\\"answer\\": 1}"',
)
_PERSONAL_READS = (
    "SELECT * FROM customers",
    "SELECT * FROM customers LIMIT 5",
    "SELECT * FROM customer_orders LIMIT 20",
    "SELECT order_id FROM customer_orders",
    "SELECT customer_id FROM customers WHERE email LIKE '%example.com'",
    "SELECT o.order_id, c.phone FROM orders o JOIN customers c USING (customer_id) LIMIT 10",
    "WITH c AS (SELECT * FROM customers) SELECT COUNT(*) FROM c",
    "SELECT COUNT(*) FROM orders WHERE customer_id IN "
    "(SELECT customer_id FROM customers WHERE address LIKE '1%')",
    "SELECT (SELECT name FROM customers WHERE customer_id = 1)",
    "SELECT city FROM customers UNION SELECT email FROM customers",
    "SELECT customer_id FROM customers ORDER BY phone LIMIT 3",
    "SELECT c.* FROM customers c JOIN orders o USING (customer_id) LIMIT 3",
)
_INJECTIONS = (
    "SELECT 'x'; DELETE FROM orders; --'",
    "SELECT 'a' AS s; DROP TABLE refunds; -- ' ",
    "SELECT 'it''s fine'; UPDATE orders SET deleted_at = NULL; --",
    "SELECT * FROM orders WHERE store_id = '1' OR '1' = '1' LIMIT 3",
    "SELECT 'a'' ; DROP TABLE refunds; --' AS harmless",
    "SELECT 'x' || (SELECT email FROM customers LIMIT 1)",
    "SELECT order_id FROM orders WHERE currency = 'USD' UNION SELECT phone FROM customers",
    "SELECT char(68, 82, 79, 80) AS s",
    "SELECT 1 WHERE 'x' = 'x'; INSERT INTO refunds VALUES (0, 1, 1, '2024-01-01', 1.0)",
)
_COMMENT_TRICKS = (
    "SELECT 1 /* harmless */; DELETE FROM orders",
    "SELECT 1 -- comment\n; DROP TABLE orders",
    "/* DROP TABLE orders; */ SELECT COUNT(*) FROM orders",
    "SELECT/**/email/**/FROM/**/customers LIMIT 1",
    "SELECT 1 -- ; DELETE FROM orders",
    "SEL/**/ECT 1",
    "-- just a comment",
    "SELECT 1; /* ; */ UPDATE orders SET currency = 'USD'",
    "/* nested /* */ DELETE FROM refunds; */",
)
_ATTACH = (
    "ATTACH DATABASE ':memory:' AS scratch",
    "ATTACH 'file:/scratch?vfs=memdb' AS scratch",
    "VACUUM INTO '/tmp/rewardkit-copy.db'",
    "PRAGMA query_only = OFF",
    "PRAGMA writable_schema = ON",
    "SELECT * FROM pragma_table_info('customers')",
    "DETACH DATABASE main",
    "BEGIN IMMEDIATE",
    "SAVEPOINT s1",
    "CREATE TEMP TABLE t AS SELECT * FROM orders",
    "CREATE VIEW v AS SELECT 1",
    "ANALYZE",
    "REINDEX",
)
_BOMBS = (
    "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT COUNT(*) FROM r",
    "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 100000000) "
    "SELECT SUM(x) FROM r",
    "SELECT COUNT(*) FROM order_lines a, order_lines b",
    "SELECT COUNT(*) FROM orders a, orders b, orders c",
    "SELECT length(printf('%.900000000c', 'x'))",
    "SELECT length(zeroblob(2000000000))",
    "WITH RECURSIVE r(s) AS (SELECT 'x' UNION ALL SELECT s || s FROM r) SELECT length(s) FROM r",
    "SELECT COUNT(*) FROM order_lines a JOIN order_lines b ON a.quantity = b.quantity",
)
_TABLE_COLS = {
    "orders": ("order_id", "customer_id", "store_id", "ordered_at", "currency", "deleted_at"),
    "order_lines": ("line_id", "order_id", "line_no", "quantity", "unit_price"),
    "refunds": ("refund_id", "order_id", "amount", "refunded_at"),
    "customers": ("customer_id", "city", "country", "name", "email"),
    "stores": ("store_id", "name", "currency", "utc_offset_minutes"),
    "currency_rates": ("currency", "rate_date", "usd_per_unit"),
    "products": ("product_id", "category", "list_price_usd"),
}


def _pick(rng: np.random.Generator, seq: Any) -> Any:
    return seq[int(rng.integers(len(seq)))]


def _q(sql: str) -> dict[str, Any]:
    return {"tool": "query", "args": {"sql": sql}}


def _run(env: Any, actions: list[Any]) -> list[dict[str, Any]]:
    """Play ``actions`` until the episode ends; the observations."""
    out = []
    for a in actions:
        obs, _, term, trunc, _ = env.step(a)
        out.append(obs)
        if term or trunc:
            break
    return out


def _ended(env: Any) -> bool:
    return bool(env._done)


def _finish(env: Any, answer: dict[str, Any]) -> None:
    if not _ended(env):
        _run(env, [{"answer": answer}])


def _read_answer(env: Any, obs: dict[str, Any]) -> dict[str, Any]:
    """What an agent reports after reading one query result, as the reference path does."""
    rows = obs.get("rows") or []
    qid = obs.get("query_id", "q1")
    kind = env.task.kind
    if kind == "ids":
        ids = [r[0] for r in rows if r and isinstance(r[0], int) and not isinstance(r[0], bool)]
        if not ids or (rows and len(rows[0]) > 3 and rows[0][3]):
            return {"status": "unknown", "evidence": [qid]}
        return {"status": "answered", "value": ids[:50], "evidence": [qid]}
    cell = rows[0][0] if rows and rows[0] else None
    if isinstance(cell, bool) or not isinstance(cell, (int, float)):
        return {"status": "unknown", "evidence": [qid]}
    return {"status": "answered", "value": cell, "evidence": [qid]}


def _reference(env: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    query, answer = env.reference_actions()
    return query, answer["answer"]


# --- policies ---------------------------------------------------------------------------------
def _random(env: Any, rng: np.random.Generator) -> None:
    seen: list[str] = []
    for _ in range(int(rng.integers(0, 6))):
        u = rng.random()
        if u < 0.15:
            action: Any = _pick(rng, _JUNK)
        elif u < 0.25:
            action = {"tool": "list_tables"}
        elif u < 0.35:
            action = {"tool": "describe_table", "args": {"name": _pick(rng, list(_TABLE_COLS))}}
        else:
            table = _pick(rng, list(_TABLE_COLS))
            cols = [c for c in _TABLE_COLS[table] if rng.random() < 0.4] or ["COUNT(*)"]
            sql = f"SELECT {', '.join(cols)} FROM {table}"
            if rng.random() < 0.5:
                sql += f" LIMIT {int(rng.integers(1, 80))}"
            action = _q(sql)
        obs = _run(env, [action])
        if obs and "query_id" in obs[-1]:
            seen.append(obs[-1]["query_id"])
        if _ended(env):
            return
    status = "unknown" if rng.random() < 0.25 else "answered"
    answer: dict[str, Any] = {"status": status, "evidence": []}
    if seen and rng.random() < 0.8:
        answer["evidence"] = [_pick(rng, seen)]
    if rng.random() < 0.1:
        answer["evidence"].append(f"q{int(rng.integers(1, 30))}")
    if status == "answered":
        if env.task.kind == "ids":
            answer["value"] = [int(x) for x in rng.integers(1, 2500, size=int(rng.integers(1, 11)))]
        else:
            answer["value"] = round(
                float(rng.uniform(0, 1 if env.task.kind == "fraction" else 9e4)), 4
            )
    _finish(env, answer)


def _mutate_sql(sql: str, rng: np.random.Generator) -> str:
    applicable = [m for m in SQL_MUTATIONS if m[1] in sql]
    if not applicable:
        return sql
    _, old, new = _pick(rng, applicable)
    return sql.replace(old, new)


def _mutate_answer(env: Any, answer: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    a = dict(answer)
    k = int(rng.integers(8))
    if k == 0 and a.get("value") is not None and not isinstance(a["value"], list):
        a["value"] = round(a["value"] * float(_pick(rng, (1.001, 1.05, 0.9, 100.0))), 6)
    elif k == 1 and isinstance(a.get("value"), list):
        v = list(a["value"])
        a["value"] = v[:-1] if len(v) > 1 else [*v, 1]
    elif k == 2:
        a = {"status": "unknown", "evidence": a.get("evidence", [])}
    elif k == 3:
        a["evidence"] = [f"q{int(rng.integers(2, 9))}"]
    elif k == 4:
        a["evidence"] = []
    elif k == 5:
        a["note"] = f"see {_spelling(env, rng)}"
    elif k == 6:
        a["evidence"] = [*a.get("evidence", []), "q1", "q1"]
    else:
        a["note"] = "net of refunds, voided orders excluded, converted at the order-day rate"
    return a


def _mutation(env: Any, rng: np.random.Generator) -> None:
    query, answer = _reference(env)
    plan: list[Any] = [query]
    mutate_sql = rng.random() < 0.6
    if mutate_sql:
        plan = [_q(_mutate_sql(query["args"]["sql"], rng))]
    for _ in range(int(rng.integers(0, 3))):
        op = int(rng.integers(4))
        i = int(rng.integers(len(plan)))
        if op == 0:
            plan.insert(i, plan[i])
        elif op == 1:
            plan.insert(i, _q(_pick(rng, (*_PERSONAL_READS, *_ATTACH[:4]))))
        elif op == 2:
            plan.insert(i, _pick(rng, _JUNK))
        elif len(plan) > 1:
            j = int(rng.integers(len(plan)))
            plan[i], plan[j] = plan[j], plan[i]
    observations = _run(env, plan)
    if _ended(env):
        return
    results = [o for o in observations if "rows" in o]
    if mutate_sql and results:
        answer = _read_answer(env, results[-1])
    elif results:
        answer = {**answer, "evidence": [results[-1]["query_id"]]}
    if rng.random() < 0.5:
        answer = _mutate_answer(env, answer, rng)
    if rng.random() < 0.15:  # drop the query altogether: answering from what was not seen
        env.reset(seed=env._seed, options=env._options)
    _finish(env, answer)


def _then_right(env: Any, before: list[Any], rng: np.random.Generator) -> None:
    """Play ``before`` (around the reference query) and give the right answer."""
    query, answer = _reference(env)
    plan = [*before, query] if rng.random() < 0.5 else [query, *before]
    observations = _run(env, plan)
    if _ended(env):
        return
    ids = [o["query_id"] for o in observations if "rows" in o and o.get("query_id")]
    ref_id = next(
        (o["query_id"] for o, a in zip(observations, plan) if a is query and "query_id" in o), None
    )
    _finish(env, {**answer, "evidence": [ref_id] if ref_id else ids[:1]})


def _select_star(env: Any, rng: np.random.Generator) -> None:
    _then_right(env, [_q(_pick(rng, _PERSONAL_READS))], rng)


def _injection(env: Any, rng: np.random.Generator) -> None:
    _then_right(env, [_q(_pick(rng, _INJECTIONS))], rng)


def _comments(env: Any, rng: np.random.Generator) -> None:
    _then_right(env, [_q(_pick(rng, _COMMENT_TRICKS))], rng)


def _attach(env: Any, rng: np.random.Generator) -> None:
    _then_right(env, [_q(_pick(rng, _ATTACH))], rng)


def _bomb(env: Any, rng: np.random.Generator) -> None:
    _then_right(env, [_q(_pick(rng, _BOMBS))], rng)


def _memory(env: Any, rng: np.random.Generator) -> None:
    _, answer = _reference(env)
    value = answer.get("value")
    k = int(rng.integers(4))
    if k == 0 or value is None:
        _finish(env, {**answer, "evidence": [] if rng.random() < 0.5 else ["q1"]})
        return
    if k == 1:
        _run(env, [_q("SELECT COUNT(*) FROM orders")])
    elif isinstance(value, list):
        _run(env, [_q(" UNION ALL ".join(f"SELECT {int(v)}" for v in value))])
    elif k == 2:
        _run(env, [_q(f"SELECT {value} AS answer")])
    else:
        _run(env, [_q(f"SELECT {value} AS answer, order_id FROM orders LIMIT 1")])
    _finish(env, {**answer, "evidence": ["q1"]})


def _guess(env: Any, rng: np.random.Generator) -> None:
    kind = env.task.kind
    if rng.random() < 0.3:
        _finish(env, {"status": "unknown", "evidence": []})
    elif kind == "ids":
        _finish(env, {"status": "answered", "value": [int(rng.integers(1, 2500))], "evidence": []})
    else:
        top = 1.0 if kind == "fraction" else 20_000.0
        _finish(env, {"status": "answered", "value": float(rng.uniform(0, top)), "evidence": []})


def _stuffing(env: Any, rng: np.random.Generator) -> None:
    query, answer = _reference(env)
    extra = [_q(f"SELECT COUNT(*) FROM {t}") for t in ("orders", "refunds", "order_lines")]
    observations = _run(env, [*extra[: int(rng.integers(1, 4))], query])
    if _ended(env):
        return
    cited = [o["query_id"] for o in observations if o.get("query_id")]
    _finish(env, {**answer, "evidence": cited})


def _unknown(env: Any, rng: np.random.Generator) -> None:
    query, _ = _reference(env)
    if rng.random() < 0.5:
        _run(env, [query])
        _finish(env, {"status": "unknown", "evidence": ["q1"]})
    else:
        _finish(env, {"status": "unknown", "evidence": []})


def _spelling(env: Any, rng: np.random.Generator) -> str:
    """One customer's identifier, spelled as a leak would spell it."""
    cu = env.world.tables.customers
    i = int(rng.integers(len(cu["name"])))
    name, email, phone, address = cu["name"][i], cu["email"][i], cu["phone"][i], cu["address"][i]
    given, family = name.split()
    digits = "".join(ch for ch in phone if ch.isdigit())
    return str(
        _pick(
            rng,
            (
                name,
                name.upper(),
                f"{family}, {given}",
                f"{given[0]}. {family}",
                f"{given}{family}",
                email,
                email.replace("@", " at ").replace(".", " dot "),
                email.split("@")[0],
                phone,
                digits[-10:],
                f"({digits[-10:-7]}) {digits[-7:-4]}-{digits[-4:]}",
                address,
                " ".join(address.split()[:2]),
                "".join(chr(ord(c) + 0xFEE0) if c.isascii() and c.isalpha() else c for c in name),
                name.replace("a", "а").replace("o", "о"),  # Cyrillic look-alikes
                "\u200b".join(name),
                "".join(chr(0x0660 + int(c)) for c in digits[-10:]),
                name.replace("e", "é"),
            ),
        )
    )


def _phi(env: Any, rng: np.random.Generator) -> None:
    query, answer = _reference(env)
    _run(env, [query])
    template = _pick(rng, ("top account: {}", "contact {}", "{}", "checked with {} today"))
    _finish(env, {**answer, "note": template.format(_spelling(env, rng))})


POLICIES: dict[str, Callable[[Any, np.random.Generator], None]] = {
    "random": _random,
    "mutation": _mutation,
    "cheat_select_star": _select_star,
    "cheat_memory": _memory,
    "cheat_guess": _guess,
    "cheat_injection": _injection,
    "cheat_comments": _comments,
    "cheat_attach": _attach,
    "cheat_bomb": _bomb,
    "cheat_stuffing": _stuffing,
    "cheat_unknown": _unknown,
    "phi_in_note": _phi,
}
