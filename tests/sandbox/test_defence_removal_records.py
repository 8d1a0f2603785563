"""The record checks, three layers, each removed: a forged record sets cells it does not own.

A child's record passes three checks before it becomes a cell: the zygote's (``is_cell_line``:
exactly the child's own spelling, the index the next test's), the pool's (``_cells_of``: exact
ints, a test of the worker's current job) and the comparer's (``check_cell``: exact types and
ranges; a malformed record marks only its own cell).  ``test_integrity.py`` attacks them by
class with the checks in place; here each layer is shown to hold alone, and the attack to get
through without all three.  How a defence is removed: ``removal.py``.
"""

from __future__ import annotations

import platform

import pytest

from rewardkit.errors import RewardkitError
from rewardkit.sandbox import Sandbox, Status, _pool, table
from rewardkit.sandbox._compare import Malformed

from .removal import _start, weakened_worker
from .test_integrity import GOOD_VALUE, HONEST, TESTS, forger

pytestmark = pytest.mark.skipif(
    platform.machine() != "x86_64", reason="the workers' records are checked the same elsewhere"
)

# The forged record for test 1 carries that test's right answer under an index that equals 1
# without being the int 1: ``true`` is a numpy mask (the whole row), ``1.0`` no index at all.
FORGED = {
    "index true": f'[true, "V", 0.0, 0.0, {GOOD_VALUE}]',
    "index 1.0": f'[1.0, "V", 0.0, 0.0, {GOOD_VALUE}]',
}
ZYGOTE_LENIENT = """
import json
def equal_index(buf, start, end, expect_idx, value_cap=None):  # == instead of the exact spelling
    try:
        rec = json.loads(bytes(buf[start:end]))
    except ValueError:
        return None
    if type(rec) is list and len(rec) == 5 and rec[0] == expect_idx and type(rec[1]) is str:
        return rec[1], float(rec[3])
    return None
replace(_worker, "is_cell_line", equal_index)
"""


def _pool_lenient(rec, job):
    """``_cells_of`` with ``in`` (==) for the index instead of an exact int."""
    if not (type(rec) is list and len(rec) == 3 and rec[0] == "cells" and rec[1] == job.row):
        return None
    cells = rec[2]
    return (
        cells
        if all(type(c) is list and len(c) == 5 and c[0] in job.wanted for c in cells)
        else None
    )


def _parent_lenient(raw, m, k):
    """``check_cell`` counting fields only."""
    if len(raw) != 5:
        raise Malformed("fields")
    return tuple(raw)


LAYERS = ("zygote", "pool", "parent")


def _forged_rows(monkeypatch, open_dir, without: tuple[str, ...]) -> dict[str, object]:
    """Each forger beside two honest programs: its row's statuses, or the exception that lost
    the whole batch.  The honest rows must stay PASS whenever the batch survives."""
    if "zygote" in without:
        weakened_worker(monkeypatch, open_dir, ZYGOTE_LENIENT)
    if "pool" in without:
        monkeypatch.setattr(_pool, "_cells_of", _pool_lenient)
    if "parent" in without:
        monkeypatch.setattr(table, "check_cell", _parent_lenient)
    out: dict[str, object] = {}
    with _start(Sandbox(timeout_s=1.0, memory_mb=256, workers=2)) as box:
        for name, record in FORGED.items():
            try:
                t = box.run([HONEST, forger(record), HONEST], TESTS, entry_point="f")
            except (RewardkitError, IndexError, TypeError) as e:
                out[name] = type(e).__name__
                continue
            assert (t.status[0] == Status.PASS).all() and (t.status[2] == Status.PASS).all()
            out[name] = [Status(int(s)).name for s in t.status[1]]
    return out


@pytest.mark.parametrize(
    "kept", [LAYERS, ("zygote",), ("pool",), ("parent",), ()], ids=lambda k: "+".join(k) or "none"
)
def test_record_checks_each_layer_holds_alone_and_without_all_a_forged_index_takes_a_row(
    monkeypatch, open_dir, kept
):
    """The forger answers every test wrongly, but for test 1 writes the record above to its
    pipe itself and exits.  With any one layer in place its row has no PASS, and the honest rows
    beside it stay PASS (the zygote kills the child: CRASH; the pool replaces the worker that
    forwarded it: CRASH "worker lost" for the first cell of that line; the comparer drops a
    record it cannot place: CRASH "no record").  Without all three (each
    replaced by the same check with ``==`` for the index) ``true`` marks its whole row PASS,
    test 0's wrong answer included, and ``1.0`` makes ``Sandbox.run`` raise: the batch is
    lost."""
    rows = _forged_rows(monkeypatch, open_dir, tuple(x for x in LAYERS if x not in kept))
    if kept:
        for row in rows.values():
            assert isinstance(row, list) and "PASS" not in row and row[-1] == "FAIL", rows
        return
    assert rows["index true"][:2] == ["PASS", "PASS"], rows  # type: ignore[index]
    assert rows["index 1.0"] in ("IndexError", "TypeError"), rows
