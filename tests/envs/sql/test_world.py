"""The retail database: determinism, size, the schema's personal columns, and every trap
realised and decisive, checked against the held-out verifier's SQL (an independent oracle)."""

from __future__ import annotations

import sqlite3

import pytest

from rewardkit.envs.sql.data import generate
from rewardkit.envs.sql.heldout import HeldoutJudge
from rewardkit.envs.sql.tasks import make_task
from rewardkit.envs.sql.truth import Facts
from rewardkit.envs.sql.world import (
    FAMILY_TRAPS,
    FRACTION_MARGIN,
    MONEY_MARGIN,
    PERSONAL_COLUMNS,
    build_world,
)
from rewardkit.envs.sql.world import (
    _answer as answer_of,
)
from rewardkit.errors import ConfigError


@pytest.fixture(scope="module")
def world():
    return build_world(0)


def test_deterministic_and_cached(world):
    assert build_world(0) is world
    again = generate(0)
    for table in ("orders", "lines", "refunds"):
        for col, arr in world.tables.__dict__[table].items():
            base = again.__dict__[table][col]
            assert (arr[: len(base)] == base).all(), (table, col)  # ties append orders only
    other = build_world(1)
    assert other.content_hash != world.content_hash


def test_tens_of_thousands_of_rows(world):
    con = sqlite3.connect(world.uri, uri=True)
    counts = {
        t: con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
        for t in ("customers", "orders", "order_lines", "refunds", "currency_rates", "products")
    }
    assert counts["order_lines"] > 25_000 and sum(counts.values()) > 40_000, counts
    # The traps exist in the data as written in the data dictionary.
    q = con.execute
    assert q("SELECT COUNT(*) FROM orders WHERE deleted_at IS NOT NULL").fetchone()[0] > 100
    assert q("SELECT COUNT(*) FROM orders WHERE customer_id IS NULL").fetchone()[0] > 100
    assert q("SELECT COUNT(*) FROM products WHERE category IS NULL").fetchone()[0] > 0
    dup = (
        "SELECT COUNT(*) FROM (SELECT 1 FROM order_lines GROUP BY order_id, line_no "
        "HAVING COUNT(*) > 1)"
    )
    assert q(dup).fetchone()[0] > 100
    assert q("SELECT COUNT(DISTINCT currency) FROM orders").fetchone()[0] == 6


def test_read_only_uri_cannot_write(world):
    con = sqlite3.connect(world.uri, uri=True)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        con.execute("DELETE FROM orders")


def test_personal_columns_are_the_customers_identifiers():
    assert {("customers", c) for c in ("name", "email", "phone", "address")} == PERSONAL_COLUMNS


def test_every_trap_realised_and_decisive(world):
    """For every family × trap × variant: mishandling the trap changes the answer (the arrays'
    Facts), and the held-out verifier's own SQL gives the same truth as the arrays."""
    judge = HeldoutJudge(world)
    facts = Facts(world.tables)
    seen = set()
    for (family, trap, variant), sc in world.scenarios.items():
        seen.add((family, trap))
        margin = MONEY_MARGIN if family == "revenue" else FRACTION_MARGIN
        task = make_task(
            world,
            family,
            trap=trap,
            variant=variant,
            env_id="x/y-v1",
            budget=1,
            max_steps=1,
            max_rows=50,
        )
        truth = sc.truth
        sql_truth = judge.truth(task)
        if truth is None or isinstance(truth, list):
            assert sql_truth == truth, (family, trap, variant)
        else:
            assert sql_truth == pytest.approx(truth, abs=1e-6), (family, trap, variant)
        assert (truth is None) == (trap == "unanswerable")
        wrong = answer_of(facts, family, sc.params, trap)
        if truth is None or wrong is None or isinstance(truth, list):
            assert wrong != truth, (family, trap, variant)
        else:
            assert abs(wrong - truth) > margin, (family, trap, variant)
    assert seen == {(f, t) for f, traps in FAMILY_TRAPS.items() for t in traps}


def test_variants_out_of_range():
    with pytest.raises(ConfigError, match="'variants' parameter of build_world"):
        build_world(0, variants=0)


@pytest.mark.parametrize("seed", [1, 2, 3, 17])
def test_other_seeds_build_every_decisive_task(seed):
    w = build_world.__wrapped__(seed)
    assert len(w.scenarios) == sum(len(t) for t in FAMILY_TRAPS.values()) * 6
