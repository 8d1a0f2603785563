"""Twin databases: the same schema and stores filled from other seeds, to tell a result cell
that comes from the data from one that a query computed out of typed-in numbers.

Usage::

    from rewardkit.envs.sql.twins import data_independent
    data_independent(world, "SELECT 427080 / 100.0 + 0 * store_id FROM orders LIMIT 1", 0, 4270.8)
    # True: the first cell is 4270.8 on every twin too, whatever the data
    data_independent(world, "SELECT SUM(quantity) FROM order_lines", 0, 61234)   # False

``fabricated_result`` asks this of the cell that an answer value matched: a cell that keeps its
value, at its place, on two databases with other data is arithmetic on constants (the answer
typed in, laundered: ``4270.79 + 0.01``, ``427080 / 100.0``), not a result read from the data.
Two twins make a chance equality of an honest result (a count that happens to agree) about
as rare as the square of one.
"""

from __future__ import annotations

from functools import lru_cache

from .data import generate
from .engine import ReadOnlySession
from .world import World, _write_db

__all__ = ["TWIN_OFFSETS", "data_independent"]

TWIN_OFFSETS = (1_000_003, 2_000_029)  # twin seeds: the world's seed plus each offset


@lru_cache(maxsize=4)
def _twins(seed: int) -> tuple[tuple[object, ReadOnlySession], ...]:
    out = []
    for off in TWIN_OFFSETS:
        name = f"rewardkit-sql-twin-{seed}-{off}"
        con = _write_db(generate(seed + off), name)  # kept alive with the session
        out.append((con, ReadOnlySession(f"file:/{name}?vfs=memdb&mode=ro")))
    return tuple(out)


def _same(a: object, b: object) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(a)))
    return a == b


def data_independent(world: World, sql: str, index: int, cell: object) -> bool:
    """True when the ``index``-th cell (row by row) of ``sql``'s result on ``world`` (``cell``)
    is the same on every twin of ``world``'s database."""
    for _, session in _twins(world.seed):
        run = session.run(sql)
        cells = [x for row in run.rows for x in row]
        if not run.ok or index >= len(cells) or not _same(cell, cells[index]):
            return False
    return True
