"""The time budget's defences, each removed: a program that outlives its budget gets a PASS.

A test's budget is first an alarm inside the child (``setitimer``), which the program owns: it
can ignore, block, catch or cancel it.  Behind it the zygote holds two rules of its own: the
watchdog kills a child silent for longer than budget + margin, and a record read later than
``late`` after the previous one is a TIMEOUT whatever it says.  How a defence is removed:
``removal.py``.
"""

from __future__ import annotations

import pytest

from rewardkit.sandbox import Sandbox, Status

from .removal import HELD, _start, weakened_worker

BUDGET_S = 0.25  # watchdog at 0.25 + (0.25 + 0.25 * 0.25) = 0.5625 s, ``late`` at 0.3625 s
SLOW_S = 1.2  # each program answers this long after it starts: far past both
# Ways a program keeps running past its alarm (each then answers 'held', the expected value).
DEFEAT = {
    "SIGALRM ignored": "signal.signal(signal.SIGALRM, signal.SIG_IGN)",
    "a handler that returns": "signal.signal(signal.SIGALRM, lambda *a: None)",
    "SIGALRM blocked": "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})",
    "the timer cancelled (setitimer 0)": "signal.setitimer(signal.ITIMER_REAL, 0)",
    "the timer cancelled (alarm 0)": "signal.alarm(0)",
    "the budget exception caught": "pass",  # the sleep below catches every exception
}
SLOW = (
    "import signal, time\n"
    "def f(x):\n    end = time.monotonic() + SLOW\n    DEFEAT\n"
    "    while time.monotonic() < end:\n        try:\n"
    "            time.sleep(max(0.0, end - time.monotonic()))\n"
    "        except BaseException:\n            pass\n"
    "    return 'held'\n"
)
SLOW_IMPORT = (  # the same at import: the record that the module ran comes late
    "import signal, time\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
    "end = time.monotonic() + SLOW\nwhile time.monotonic() < end:\n    try:\n"
    "        time.sleep(max(0.0, end - time.monotonic()))\n    except BaseException:\n"
    "        pass\ndef f(x):\n    return 'held'\n"
)
PROGRAMS = {
    **{name: SLOW.replace("DEFEAT", d) for name, d in DEFEAT.items()},
    "SIGALRM ignored by the module's own code": SLOW_IMPORT,
}
NO_WATCHDOG = """
init = _worker.Zygote.__init__
def without_watchdog(self, cfg):  # the margin beyond the budget made endless
    init(self, cfg)
    if not hasattr(self, "margin"):
        raise SystemExit("Zygote has no margin")
    self.margin = 1e6
replace(_worker.Zygote, "__init__", without_watchdog)
"""
NO_LATE_RULE = "replace(_worker, 'LATE_S', 1e6)  # any record, however late, is an answer"


def _slow_outcomes() -> dict[str, tuple[Status, str]]:
    programs = [src.replace("SLOW", str(SLOW_S)) for src in PROGRAMS.values()]
    # Sleeping programs take no CPU: a worker each, so the run lasts one program's time.
    box = Sandbox(timeout_s=BUDGET_S, memory_mb=256, workers=len(programs))
    with _start(box) as b:
        t = b.run(programs, HELD, entry_point="f")
    return {
        name: (Status(int(t.status[i, 0])), str(t.detail[i, 0])) for i, name in enumerate(PROGRAMS)
    }


@pytest.mark.parametrize("removed", ["nothing", "the watchdog", "the late-answer rule", "both"])
def test_watchdog_and_late_rule_each_hold_alone_and_without_both_a_slow_program_passes(
    monkeypatch, open_dir, removed
):
    """Seven programs defeat their in-child alarm (SIGALRM ignored, blocked or handled, the
    timer cancelled two ways, the budget exception caught; one while its module runs) and
    answer correctly 1.2 s after they start, about five times their budget.  With the
    watchdog (killed at budget + margin, 0.64 s before the answer) or with the late-answer rule
    (an answer, or the record that the module ran, read later than ``late`` after the previous
    record is a TIMEOUT) each is a TIMEOUT.  Without both (the margin made endless
    in the zygote; ``LATE_S`` so large that no answer is late) each gets a PASS: a program that
    ignores the budget out-ranks an honest one that kept to it and timed out."""
    patch = {"the watchdog": NO_WATCHDOG, "the late-answer rule": NO_LATE_RULE,
             "both": NO_WATCHDOG + NO_LATE_RULE}.get(removed)  # fmt: skip
    if patch:
        weakened_worker(monkeypatch, open_dir, patch)
    out = _slow_outcomes()
    want = Status.PASS if removed == "both" else Status.TIMEOUT
    assert {name: s for name, (s, _) in out.items()} == dict.fromkeys(PROGRAMS, want), out


# ------------------------------------------------- what never answers: the watchdog, the line cap
NEVER = {
    "never answers (SIGALRM ignored)": (
        "import signal, time\ndef f(x):\n    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
        "    time.sleep(30)\n    return 'held'\n"
    ),
    "a record line that never ends": (
        "import os\ndef f(x):\n    while True:\n        os.write(3, b'9' * 65536)\n"
    ),
}
NO_LINE_CAP = "replace(_worker, 'LINE_CAP', 1 << 40)  # a record line may be any length\n"
STALL_S = 3.0  # the pool's check for a silent worker, shortened from 3 * (budget+margin) + 10 s


@pytest.mark.parametrize("removed", ["nothing", "the watchdog", "the line cap", "both"])
def test_without_the_watchdog_what_never_answers_holds_its_worker_until_the_stall_check(
    monkeypatch, open_dir, removed
):
    """A program that ignores its alarm and sleeps, and one that writes a record line without
    end.  The watchdog kills the first at budget + margin (TIMEOUT); the 1 MiB line cap kills
    the second (CRASH, protocol violation), and without the cap the zygote's fixed read buffer
    fills, the child blocks and the watchdog kills it (TIMEOUT).  Without the watchdog, nothing
    in the zygote stops the sleeper, nor, without the cap as well, the writer: each holds its
    worker until the pool's check for a silent worker (shortened here to 3 s) kills the whole
    worker — CRASH "worker lost", and a fresh worker is started."""
    patch = {"the watchdog": NO_WATCHDOG, "the line cap": NO_LINE_CAP,
             "both": NO_WATCHDOG + NO_LINE_CAP}.get(removed)  # fmt: skip
    if patch:
        weakened_worker(monkeypatch, open_dir, patch)
    with _start(Sandbox(timeout_s=BUDGET_S, memory_mb=256, workers=len(NEVER))) as b:
        b._pool.stall_s = STALL_S  # type: ignore[union-attr]
        t = b.run(list(NEVER.values()), HELD, entry_point="f")
    got = {name: (Status(int(t.status[i, 0])), str(t.detail[i, 0])) for i, name in enumerate(NEVER)}
    lost, timeout = (Status.CRASH, "worker lost"), (Status.TIMEOUT, "")
    cut = (Status.CRASH, "protocol violation")
    sleeper = lost if removed in ("the watchdog", "both") else timeout
    writer = {"nothing": cut, "the watchdog": cut, "the line cap": timeout, "both": lost}
    assert got == dict(zip(NEVER, [sleeper, writer[removed]])), got
