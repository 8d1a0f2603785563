"""What makes each fork cheaper must not change what a fork carries or what a child writes.

- the child's records are spelled by ``record_line``, not ``json.dumps``: byte for byte the same
  text, for every value a record can hold (the zygote checks records on exactly that spelling);
- the zygote's read and cell buffers are not inherited (MADV_DONTFORK): a child that reaches
  one faults instead of reading what an earlier program left;
- the zygote rehearses the child's test loop before its first fork: the alarm and its handler
  are put back as they were, and nothing is imported that the zygote kept out;
- the zygote's script is a launcher that imports ``_worker`` from its compiled file: compiling
  ``_worker.py`` as the script left ~2 MiB of the compiler's freed memory in every zygote.
"""

from __future__ import annotations

import faulthandler
import hashlib
import json
import os
import py_compile
import signal
import sys
from importlib.util import cache_from_source

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardkit.sandbox import Sandbox, Status, TestCase, _child, _pool, _worker

TEXTS = st.text(st.characters(codec=None, categories=None), max_size=40)  # lone surrogates too
SCALARS = st.one_of(
    st.integers(),
    st.integers(min_value=-(10**300), max_value=10**300),
    st.floats(),  # nan and inf too: those go through json.dumps
    TEXTS,
)


@settings(database=None, deadline=None, max_examples=400)
@given(st.lists(SCALARS, max_size=6))
def test_a_record_line_is_json_dumps_byte_for_byte(rec):
    assert _child.record_line(rec) == (json.dumps(rec) + "\n").encode()


@settings(database=None, deadline=None, max_examples=300)
@given(
    st.integers(min_value=0, max_value=10**6),
    st.sampled_from("VHEUTM"),
    st.floats(min_value=0, max_value=1e6),
    st.floats(min_value=0, max_value=1e6),
    TEXTS,
)
def test_every_cell_record_a_child_writes_is_a_record_to_the_zygote(i, kind, dur, cpu, text):
    if kind == "H":  # a value too large to send: its sha256
        text = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    line = _child.record_line([i, kind, dur, cpu, text])
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    buf = bytearray(line)
    assert _child.is_cell_line(buf, 0, len(line) - 1, i) == (kind, cpu)
    assert _child.is_cell_line(buf, 0, len(line) - 1, i + 1) is None  # another test's index


@pytest.mark.parametrize(
    "rec",
    [["R", 0.001953125], ["X", "S", "SyntaxError"], ["X", "E", "missing entry point f"]],
)
def test_the_other_record_shapes_are_read_as_such(rec):
    line = _child.record_line(rec)
    buf = bytearray(line)
    if rec[0] == "R":
        assert _child.is_ready_line(buf, 0, len(line) - 1) == rec[1]
    else:
        kind, p0, p1 = _child.is_row_line(buf, 0, len(line) - 1)
        assert kind == rec[1] and bytes(buf[p0:p1]) == json.dumps(rec[2])[1:-1].encode()


def _child_reads(buf) -> int:
    """Fork; the child reads the buffer's first byte and exits 0 with it.  The status."""
    pid = os.fork()
    if pid == 0:
        try:
            faulthandler.disable()  # pytest's: it would print a traceback of the fault
            os._exit(0 if buf[0] == 0x5A else 3)
        finally:
            os._exit(4)
    return os.waitpid(pid, 0)[1]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="MADV_DONTFORK is Linux's")
def test_the_zygotes_buffers_are_not_inherited():
    """A page the zygote's buffer holds is neither copied into a child's page tables nor
    readable there: the child faults (SIGSEGV) instead of reading the 'Z' the zygote wrote."""
    buf = _worker._private(1 << 16)
    buf[0] = 0x5A
    status = _child_reads(buf)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSEGV, status
    plain = bytearray(b"Z")  # the same read of memory a fork does copy: the check can pass
    status = _child_reads(plain)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status


def test_the_rehearsal_puts_the_alarm_back_and_imports_nothing_new():
    def mine(signum, frame):  # pragma: no cover - never fires
        raise AssertionError("the rehearsal's alarm fired")

    before = signal.signal(signal.SIGALRM, mine)
    modules = set(sys.modules)
    try:
        _worker.rehearse()
        assert signal.getsignal(signal.SIGALRM) is mine
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        assert set(sys.modules) - modules == set()
    finally:
        signal.signal(signal.SIGALRM, before)


def _ready_rss_kb(monkeypatch, script: str) -> int:
    monkeypatch.setattr(_pool, "WORKER", _pool.WORKER.with_name(script))
    with Sandbox(timeout_s=1.0, workers=1) as box:
        assert box._pool is not None
        table = box.run(["def f(x):\n    return x\n"], [TestCase("(3,)", "3")], entry_point="f")
        assert table.status[0, 0] == Status.PASS
        return box._pool.workers[0].rss_kb  # the zygote's resident set as it said "ready"


def test_the_zygote_does_not_compile_its_own_module(monkeypatch):
    """Every fork copies the page table of all the zygote holds and every child's exit tears it
    down: the pool starts a launcher that imports ``_worker`` from its compiled file (written by
    the sandbox process's own import, or by pip).  Removal: ``_worker.py`` run as the script, as
    before, compiled at each start, holds 2.0-2.2 MiB more when it is ready (measured: 14.3-14.5
    against 12.2-12.4 MiB, bubblewrap and Landlock)."""
    assert _pool.WORKER.name == "_zygote.py"
    source = _worker.__file__
    cached = cache_from_source(source)
    if not os.path.exists(cached):  # bytecode not written here (PYTHONDONTWRITEBYTECODE)
        if not os.access(os.path.dirname(source), os.W_OK):
            pytest.skip("no compiled _worker here, and none can be written beside it")
        py_compile.compile(source, cfile=cached, doraise=True)
    launched = _ready_rss_kb(monkeypatch, "_zygote.py")
    compiled_at_start = _ready_rss_kb(monkeypatch, "_worker.py")
    assert launched <= compiled_at_start - 1024, (launched, compiled_at_start)
