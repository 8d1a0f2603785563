"""The read-only session: three independent read-only layers (each alone refuses a write, and
with all three removed the write goes through, so the test can fail), the authorizer seeing
personal-column reads column by column, statement splitting, and the VM-step budget."""

from __future__ import annotations

import itertools
import sqlite3

import pytest

from rewardkit.envs.sql.engine import DEFENCES, ReadOnlySession, split_statements
from rewardkit.envs.sql.world import build_world

_SCRATCH = itertools.count()


def scratch_db():
    """A private memdb database (never the shared world: some tests write to it)."""
    name = f"file:/rk-test-{next(_SCRATCH)}?vfs=memdb"
    keep = sqlite3.connect(name, uri=True)
    keep.executescript(
        "CREATE TABLE customers(customer_id INTEGER PRIMARY KEY, name, email, city);"
        "INSERT INTO customers VALUES (1, 'Ann Lee', 'a@x', 'Oslo');"
        "CREATE TABLE orders(order_id INTEGER PRIMARY KEY, customer_id, amount);"
        "INSERT INTO orders VALUES (1, 1, 9.5);"
    )
    keep.commit()
    return keep, name


WRITES = [
    "DELETE FROM orders",
    "UPDATE orders SET amount = 0",
    "INSERT INTO orders VALUES (2, 1, 1.0)",
    "DROP TABLE orders",
    "CREATE TABLE t(x)",
    "ALTER TABLE orders ADD COLUMN y",
    "CREATE INDEX i ON orders(amount)",
]


@pytest.mark.parametrize("sql", WRITES)
@pytest.mark.parametrize("layer", DEFENCES)
def test_each_layer_alone_refuses_writes(sql, layer):
    keep, uri = scratch_db()
    s = ReadOnlySession(uri, defences=[layer])
    run = s.run(sql)
    assert not run.ok, (layer, sql)
    check = keep.execute("SELECT COUNT(*), SUM(amount) FROM orders").fetchone()
    assert check == (1, 9.5)
    names = {r[0] for r in keep.execute("SELECT name FROM sqlite_master")}
    assert names == {"customers", "orders"}


@pytest.mark.parametrize("sql", WRITES[:3])
def test_without_any_layer_the_write_goes_through(sql):
    """The control: with the three layers removed the same statements do write."""
    keep, uri = scratch_db()
    s = ReadOnlySession(uri, defences=[])
    assert s.run(sql).ok
    assert keep.execute("SELECT COUNT(*), SUM(amount) FROM orders").fetchone() != (1, 9.5)


def test_write_attempts_are_recorded_even_when_refused():
    _, uri = scratch_db()
    s = ReadOnlySession(uri)
    for sql, action in [
        ("DELETE FROM orders", "delete"),
        ("PRAGMA query_only = OFF", "pragma"),
        ("ATTACH 'file:/x?vfs=memdb' AS y", "attach"),
        ("BEGIN", "transaction"),
        ("SAVEPOINT a", "savepoint"),
        ("CREATE TEMP TABLE t(x)", "insert"),
        ("ANALYZE", "analyze"),
    ]:
        run = s.run(sql)
        assert not run.ok
        assert any(e.action == action and not e.allowed for e in run.events), (sql, run.events)


PERSONAL_READS = {
    "star": "SELECT * FROM customers",
    "view": "SELECT amount FROM v_co",
    "subquery": "SELECT order_id FROM orders WHERE customer_id IN "
    "(SELECT customer_id FROM customers WHERE email LIKE 'a%')",
    "cte": "WITH c AS (SELECT * FROM customers) SELECT COUNT(*) FROM c",
    "join": "SELECT o.amount, c.name FROM orders o JOIN customers c USING (customer_id)",
    "scalar": "SELECT (SELECT name FROM customers LIMIT 1)",
    "union": "SELECT city FROM customers UNION SELECT email FROM customers",
    "order_by": "SELECT customer_id FROM customers ORDER BY name",
    "failing": "SELECT email FROM customers WHERE nosuchfunc(1)",
}


@pytest.mark.parametrize("how", sorted(PERSONAL_READS))
def test_authorizer_sees_personal_columns(how):
    keep, uri = scratch_db()
    keep.execute(
        "CREATE VIEW v_co AS SELECT o.amount, c.name FROM orders o JOIN customers c "
        "USING (customer_id)"
    )
    keep.commit()
    run = ReadOnlySession(uri).run(PERSONAL_READS[how])
    reads = {(e.table, e.column) for e in run.events if e.action == "read"}
    assert reads & {("customers", "name"), ("customers", "email")}, (how, run.events)
    if how == "view":
        assert any(e.via == "v_co" for e in run.events)


def test_safe_columns_do_not_read_personal_ones():
    _, uri = scratch_db()
    run = ReadOnlySession(uri).run(
        "SELECT c.city, COUNT(*) FROM customers c JOIN orders o USING (customer_id) GROUP BY 1"
    )
    reads = {(e.table, e.column) for e in run.events if e.action == "read"}
    assert not reads & {("customers", "name"), ("customers", "email")}


def test_several_statements_are_refused_but_all_compiled():
    keep, uri = scratch_db()
    s = ReadOnlySession(uri)
    run = s.run("SELECT 1; /* ; */ DROP TABLE orders -- done")
    assert not run.ok and "one statement" in (run.error or "")
    assert run.keywords == ("SELECT", "DROP")
    assert any(not e.allowed for e in run.events)
    assert keep.execute("SELECT COUNT(*) FROM orders").fetchone() == (1,)


@pytest.mark.parametrize(
    ("sql", "n"),
    [
        ("SELECT 1", 1),
        ("SELECT 1;", 1),
        ("SELECT 1; -- trailing comment", 1),
        ("SELECT ';' AS x; SELECT 2", 2),
        ('SELECT 1 AS "a;b"', 1),
        ("SELECT 1 /* ; */", 1),
        ("", 0),
        ("-- only a comment", 0),
        ("SELECT 'it''s; fine'", 1),
    ],
)
def test_split_statements(sql, n):
    assert len(split_statements(sql)) == n


def test_vm_budget_stops_a_recursive_bomb_deterministically():
    world = build_world(0)
    s = ReadOnlySession(world.uri, max_vm_steps=200_000, cache_size=0)
    bomb = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT COUNT(*) FROM r"
    a, b = s.run(bomb), s.run(bomb)
    assert not a.ok and "work budget" in (a.error or "")
    assert a.vm_steps == b.vm_steps and a.vm_steps > 200_000
    q = "SELECT store_id, COUNT(*) FROM orders GROUP BY store_id"
    assert s.run(q).vm_steps == s.run(q).vm_steps > 0


def test_denied_functions_and_limits():
    _, uri = scratch_db()
    s = ReadOnlySession(uri)
    assert not s.run("SELECT random()").ok
    assert not s.run("SELECT load_extension('x')").ok
    # One VM step, seconds of work: the step counter cannot see it, so printf is refused.
    assert not s.run("SELECT length(printf('%.900000000c', 'x'))").ok
    big = s.run("SELECT length(printf('%.2000000c', 'x'))")
    assert big.rows in (((None,),), ()) or not big.ok


def test_cache_returns_the_same_run():
    world = build_world(0)
    s = ReadOnlySession(world.uri)
    q = "SELECT COUNT(*) FROM orders"
    assert s.run(q) is s.run(q) and s.cache_hits == 1
    fresh = ReadOnlySession(world.uri, cache_size=0).run(q)
    assert fresh == s.run(q)


def _one_step_bombs():
    """Calls whose work is the product of two string lengths inside one VM step, as
    constants, per row and nested, through the functions that do a naive substring search."""
    hay = ["hex(zeroblob({n}))||'x'", "hex(zeroblob({n}))||a.order_id", "upper(hex(zeroblob({n})))"]
    needle = ["hex(zeroblob({m}))||'x'", "'0'||hex(zeroblob({m}))||'y'"]
    for (i, h), nd, (n, m) in itertools.product(
        enumerate(hay), needle, [(8, 4), (40, 20), (500, 250)]
    ):
        src = "FROM order_lines a" if "a." in h else ""
        h, nd = h.format(n=n), nd.format(m=m)
        yield f"SELECT sum(instr({h}, {nd})) {src}"
        yield f"SELECT sum(length(replace({h}, {nd}, 'y'))) {src}"
        yield f"SELECT max(length(lower(replace(({h}), {nd}, ({nd}))))) {src}"
        if i == 0:
            yield f"SELECT INSTR({h}, {nd})"
            yield f'SELECT "replace"({h}, {nd}, {nd})'


@pytest.mark.parametrize("sql", list(_one_step_bombs()))
def test_quadratic_string_search_is_refused(sql):
    # instr / replace of two 10 kB strings over the 30,526 order lines ran 26-30 s on about
    # 250,000 VM steps: the step counter cannot see work done inside one call, so the
    # functions are refused whatever their arguments.
    world = build_world(0)
    run = ReadOnlySession(world.uri, cache_size=0).run(sql)
    assert not run.ok
    assert any(
        e.action == "function"
        and (e.column or "").lower() in {"instr", "replace"}
        and not e.allowed
        for e in run.events
    )


def test_quadratic_string_search_refused_through_the_env():
    from rewardkit.envs import make

    env = make("sql/revenue-v1")
    env.reset(seed=0)
    obs, *_ = env.step(
        {"tool": "query", "args": {"sql": "SELECT instr(hex(zeroblob(9))||'x', '0x')"}}
    )
    assert "error" in obs and "rows" not in obs


def _clock_reads():
    for fn, extra in (
        ("date", ""),
        ("time", ""),
        ("datetime", ", '+1 day'"),
        ("julianday", ""),
        ("unixepoch", ""),
        ("strftime('%s', ", None),
    ):
        for now in ("'now'", "'NOW'", "' now '", "lower('Now')"):
            call = f"{fn}{now}{extra or ''})" if fn.endswith(", ") else f"{fn}({now}{extra})"
            yield f"SELECT {call}"
            yield f"SELECT COUNT(*) FROM orders WHERE ordered_at < {call}"
        if not fn.endswith(", "):
            yield f"SELECT {fn}()"
            yield f"SELECT {fn.upper()} ( )"
    yield "SELECT strftime('%Y-%m-%d %H:%M:%f')"
    for kw in ("CURRENT_TIMESTAMP", "current_date", "Current_Time"):
        yield f"SELECT {kw}"
        yield f"SELECT COUNT(*) FROM orders WHERE ordered_at < {kw}"


@pytest.mark.parametrize("sql", list(_clock_reads()))
def test_the_clock_is_refused(sql):
    # A result that depends on when the query runs differs between an episode and its replay.
    world = build_world(0)
    run = ReadOnlySession(world.uri, cache_size=0).run(sql)
    assert not run.ok and not run.rows


def test_date_functions_on_data_still_run():
    world = build_world(0)
    s = ReadOnlySession(world.uri, cache_size=0)
    for sql in (
        "SELECT date(MIN(ordered_at)), strftime('%Y-%m', MAX(ordered_at)) FROM orders",
        "SELECT datetime('2024-03-01', '+14 days'), julianday('2024-03-02') - 1",
        "SELECT 'snow' AS now, 'known'",
    ):
        assert s.run(sql).ok, sql


def test_clock_query_replays_identically_through_the_env():
    from rewardkit.envs import make

    env = make("sql/revenue-v1")
    env.reset(seed=0)
    obs, *_ = env.step({"tool": "query", "args": {"sql": "SELECT datetime('now')"}})
    assert "error" in obs and "rows" not in obs
