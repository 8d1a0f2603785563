"""The machinery of the defence-removal tests (``test_defence_removal*.py``).

The attack suite (``test_attacks.py``) asserts that every attack is held.  A check that cannot
fail is not a check, so the removal tests weaken one defence at a time in-process and run the
same attack programs (``attacks.py``) against it: the attack must now succeed, while the same
attack with the defence in place is held.  Nothing changes the sandbox's code or its public API:

- parent-side defences (the seccomp allow-list, compiled in the test process; the readable
  paths; the parent's payload checks; the uid of each worker) are monkeypatched before the
  ``Sandbox`` starts;
- worker-side defences (the work-directory wipe, the zygote's record checks, the Landlock
  scopes and rules) live in the zygote processes, which are fresh interpreters, not forks of the
  test.  There the pool is pointed at a small launcher script (:func:`weakened_worker`) that
  imports the real ``_worker`` module, replaces exactly one name with ``replace`` (which refuses
  a name that no longer exists, so a rename fails the start instead of patching nothing), and
  runs its ``main``; the launcher's directory is added to the readable paths so that it can
  start under bubblewrap.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from rewardkit.errors import RewardkitError
from rewardkit.sandbox import Sandbox, Status, TestCase, _confine, _pool

from .attacks import Attack, attacks

HELD = [TestCase("(0,)", "'held'")]
LAUNCHER = """\
import sys
sys.path.insert(0, {sandbox!r})
import _worker  # the real worker, loaded by path exactly as the pool loads it
del sys.path[0]
import _child, _landlock
def replace(owner, name, value):  # a name that is gone fails the start, never passes silently
    if not hasattr(owner, name):
        raise SystemExit(f"{{owner.__name__}} has no {{name}}")
    setattr(owner, name, value)
# ---- the one defence removed -------------------------------------------------------------
{patch}
# ------------------------------------------------------------------------------------------
_worker.main()
"""


def weakened_worker(monkeypatch, where: Path, patch: str) -> None:
    """Make the pool start its zygotes through a launcher that applies ``patch`` (Python run in
    the zygote after the real ``_worker`` module is imported, before its ``main``)."""
    launcher = where / "launcher" / "rk_weakened_worker.py"
    launcher.parent.mkdir(mode=0o755)
    launcher.write_text(
        LAUNCHER.format(sandbox=str(_confine.SANDBOX_DIR), patch=textwrap.dedent(patch))
    )
    launcher.chmod(0o644)
    readable_paths = _confine.readable_paths

    def with_launcher(*args, **kwargs):
        read, hidden = readable_paths(*args, **kwargs)
        return [*read, str(launcher.parent)], hidden

    monkeypatch.setattr(_confine, "readable_paths", with_launcher)
    monkeypatch.setattr(_pool, "WORKER", launcher)


def _ctx(**kw) -> dict:
    ctx = dict(roots=[], port=9, udp=9, unix="/nonexistent", abstract="\0rk-none",
               sandbox_file=_confine.__file__, secret_file="/nonexistent", secret="-",
               repo_file=__file__)  # fmt: skip
    ctx.update(kw)
    return ctx


def _pick(names: list[str], ctx: dict | None = None) -> list[Attack]:
    by_name = {a.name: a for a in attacks(ctx or _ctx())}
    return [by_name[n] for n in names]


def _said(box: Sandbox, src: str) -> str:
    """What a program returned (its canonical text), from the raw cells."""
    cells = box._pool.execute([src], [0], ["(0,)"], "f")  # type: ignore[union-attr]
    return cells[0][4] if cells else ""


def _outcomes(box: Sandbox, suite: list[Attack]) -> dict[str, tuple[Status, str]]:
    t = box.run([a.src for a in suite], HELD, entry_point="f")
    return {a.name: (Status(int(t.status[i, 0])), str(t.detail[i, 0])) for i, a in enumerate(suite)}


def _held(out: dict[str, tuple[Status, str]], suite: list[Attack]) -> dict[str, bool]:
    return {a.name: out[a.name][0] in a.allowed for a in suite}


def _box(confinement: str = "auto", timeout_s: float = 1.0) -> Sandbox:
    return Sandbox(timeout_s=timeout_s, memory_mb=256, workers=1, confinement=confinement)


def _start(box: Sandbox) -> Sandbox:
    try:
        return box.start()
    except RewardkitError as e:
        if box.confinement != "auto":
            pytest.skip(f"no {box.confinement} path here: {e}")
        raise
