"""Each isolation defence removed, one at a time: the attack it stops then gets through.

The attack suite (``test_attacks.py``) asserts that every attack is held.  A check that cannot
fail is not a check, so here each defence is weakened in-process and the same attack programs
(``attacks.py``) are run against it: the attack must now succeed, while the same attack with the
defence in place is held.  Nothing here changes the sandbox's code or its public API:

- parent-side defences (the seccomp allow-list, compiled in this process; the readable paths;
  the parent's payload checks) are monkeypatched before the ``Sandbox`` starts;
- worker-side defences (the work-directory wipe, the zygote's record checks, the Landlock
  scopes) live in the zygote processes, which are fresh interpreters, not forks of this one.
  There the pool is pointed at a small launcher script (:func:`weakened_worker`) that imports
  the real ``_worker`` module, replaces exactly one of its functions or constants, and runs its
  ``main``; the launcher's directory is added to the readable paths so that it can start under
  bubblewrap.

Signals are sent only to a ``sleep`` process this test starts for the purpose.
"""

from __future__ import annotations

import os
import platform
import subprocess
import tempfile
import textwrap
from pathlib import Path

import pytest

from rewardkit.errors import RewardkitError
from rewardkit.sandbox import (
    Sandbox,
    SandboxWarning,
    Status,
    TestCase,
    _compare,
    _confine,
    _filter,
    _pool,
    table,
)

from .attacks import VICTIM, Attack, attacks
from .test_attacks import _listeners
from .test_pool import _as_ordinary_user, _free_uid

pytestmark = pytest.mark.skipif(
    platform.machine() != "x86_64", reason="the attacks use x86_64 system call numbers"
)
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


@pytest.fixture
def open_dir():
    """A directory under /tmp that every uid can traverse (the workers' dropped uids too)."""
    d = Path(tempfile.mkdtemp(prefix="rk-removal-", dir="/tmp"))
    d.chmod(0o755)
    try:
        yield d
    finally:
        subprocess.run(["rm", "-rf", str(d)], check=False)


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


def test_a_launcher_patch_naming_something_gone_fails_the_start(monkeypatch, open_dir):
    """The removals below must never pass by patching nothing: a renamed function or constant
    stops the worker before its handshake."""
    weakened_worker(monkeypatch, open_dir, "replace(_worker.Zygote, '_no_such_method', None)")
    with pytest.raises(RewardkitError, match="failed to start"):
        _box().start()


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


# ------------------------------------------------------------------- the seccomp allow-list
IPC_SET_CHECK = [
    ("SysV shared memory segment with a key", "SysV segment found again"),
    ("SysV message queue with a key", "SysV message queue found again"),
    ("SysV semaphore with a key", "SysV semaphore found again"),
]
IPC_GROW = "SysV shared memory growing host memory (1 GiB)"
IPC_CALLS = ("shmget", "msgget", "semget")


def _ipc_attacks(box: Sandbox) -> dict[str, bool]:
    """Whether each IPC attack was held: the sets run first, the checks in a later run (one
    worker, so the same IPC namespace)."""
    sets = _pick([s for s, _ in IPC_SET_CHECK])
    checks = _pick([IPC_GROW] + [c for _, c in IPC_SET_CHECK])
    box.run([a.src for a in sets], HELD, entry_point="f")
    return _held(_outcomes(box, checks), checks)


def test_without_ipc_calls_refused_by_seccomp_ipc_objects_outlive_programs(monkeypatch):
    """Defence: SysV IPC calls are not on the seccomp allow-list.  Removed (the three calls
    added to ``_filter.ALLOWED``, the filter the parent compiles): a SysV segment, queue and
    semaphore made by one program are found by the next, and a 1 GiB segment is granted.  (A
    POSIX queue is refused by a second layer as well: ``mq_open`` with ``mq_open`` allowed
    answers EACCES, so it is left out here.)  Run where each worker has its own IPC
    namespace (bubblewrap), which the kernel destroys with the worker, so nothing reaches the
    host."""
    with _start(_box()) as box:
        if "ipc-ns" not in box.isolation:
            pytest.skip("no private IPC namespace here: the objects would reach the host")
        kept = _ipc_attacks(box)
    assert all(kept.values()), kept
    monkeypatch.setattr(_filter, "ALLOWED", (*_filter.ALLOWED, *IPC_CALLS))
    with _start(_box()) as box:
        assert "seccomp-allowlist" in box.isolation  # the probe cannot see this removal
        removed = _ipc_attacks(box)
    assert not any(removed.values()), removed  # every one got through


IO_URING = "io_uring: a ring to open sockets without socket()"


def test_without_io_uring_refused_a_ring_is_granted_unless_the_probe_refuses_to_start(
    monkeypatch,
):
    """Defence: ``io_uring_setup`` is not on the allow-list, and each worker's probe child
    checks that it is refused.  With the call allowed, strict refuses to start (the probe);
    with the probe blinded as well (it tries a system call number the filter refuses anyway),
    the attack gets its ring."""
    with _start(_box()) as box:
        assert _held(_outcomes(box, _pick([IO_URING])), _pick([IO_URING])) == {IO_URING: True}
    monkeypatch.setattr(_filter, "ALLOWED", (*_filter.ALLOWED, "io_uring_setup"))
    with pytest.raises(RewardkitError, match="seccomp-allowlist"):
        _box().start()


def test_without_io_uring_refused_and_its_probe_the_attack_gets_a_ring(monkeypatch, open_dir):
    monkeypatch.setattr(_filter, "ALLOWED", (*_filter.ALLOWED, "io_uring_setup"))
    blind_probe = "replace(_worker, 'SYS_IO_URING_SETUP', 999)  # a number refused anyway"
    weakened_worker(monkeypatch, open_dir, blind_probe)
    suite = _pick([IO_URING])
    with _start(_box()) as box:
        out = _outcomes(box, suite)
        said = _said(box, suite[0].src)
    assert _held(out, suite) == {IO_URING: False}, out
    assert said.startswith("'ESCAPED io_uring fd"), said


# -------------------------------------------------------------------- the work-directory wipe
CARRY = ("file left in the work directory", "file found in the work directory")


def _carry(box: Sandbox) -> tuple[bool, str]:
    set_, check = _pick(list(CARRY))
    box.run([set_.src], HELD, entry_point="f")
    out = _outcomes(box, [check])
    return _held(out, [check])[check.name], _said(box, check.src)


def test_without_the_work_directory_wipe_a_file_reaches_the_next_program(monkeypatch, open_dir):
    """Defence: after every program the zygote empties its work directory and makes a fresh
    one.  Removed (``Zygote._pristine`` says every directory is untouched, so it is reused as
    it is): the next program finds the file the previous one left."""
    with _start(_box()) as box:
        assert _carry(box) == (True, "'held'")
    reuse = "replace(_worker.Zygote, '_pristine', lambda self: True)"
    weakened_worker(monkeypatch, open_dir, reuse)
    with _start(_box()) as box:
        held, said = _carry(box)
    assert not held and "carry.txt" in said, said


NAIVE_WIPE = """
import os, shutil
def naive_wipe(top):  # the obvious cleanup: shutil.rmtree of each entry, errors ignored
    for name in os.listdir(top):
        shutil.rmtree(os.path.join(top, name), ignore_errors=True)
replace(_worker, "_wipe", naive_wipe)
"""
NESTED = "1,500 nested directories at cleanup"


def test_a_recursive_rmtree_instead_of_the_iterative_wipe_loses_the_worker(monkeypatch, open_dir):
    """Defence: the wipe is iterative and fd-relative, so no depth grows a stack.  Replaced by
    ``shutil.rmtree`` (recursive, ``ignore_errors=True``): a program that leaves 1,500 nested
    directories kills the worker during its cleanup (RecursionError, which ``ignore_errors``
    does not cover); its cell is CRASH "worker lost" and a fresh worker replaces it."""
    suite = _pick([NESTED])
    for patch in ("", NAIVE_WIPE):
        if patch:
            weakened_worker(monkeypatch, open_dir, patch)
        with _start(_box(timeout_s=5.0)) as box:
            before = box._pool.worker_pids()  # type: ignore[union-attr]
            out = _outcomes(box, suite)
            same_worker = box._pool.worker_pids() == before  # type: ignore[union-attr]
        if not patch:
            assert same_worker and out[NESTED] == (Status.FAIL, ""), out  # it returned 'set'
        else:
            assert not same_worker and out[NESTED] == (Status.CRASH, "worker lost"), out


# ------------------------------------------------------------------- the value-payload cap
FORGED = "a forged 1 MB value record"
LENIENT_RECORDS = """
strict_check = _child.is_cell_record
def without_value_cap(rec, expect_idx):  # every check but the length of a value's payload
    if type(rec) is list and len(rec) == 5 and rec[1] == "V" and type(rec[4]) is str:
        rec = [*rec[:4], ""]
    return strict_check(rec, expect_idx)
replace(_worker, "is_cell_record", without_value_cap)
"""


def test_without_the_value_payload_caps_a_forged_megabyte_reaches_the_parser(monkeypatch, open_dir):
    """Defence: a value payload is at most 64 KiB (``TEXT_CAP``), checked by the zygote on
    every child record and again by the sandbox process before anything parses it.  The attack
    writes a well-formed record holding 1,000,000 digits for its cell.  With both caps: CRASH
    ("protocol violation", the zygote killed the child) and the parser never sees it.  Without
    the zygote's cap: the parent's check still stops it (CRASH, "malformed record").  Without
    both: the megabyte reaches the parser, which is what the cap bounds (a forged payload cost
    the parent seconds and hundreds of MiB per cell before v2)."""
    seen: list[int] = []
    parse = table.parse_bounded

    def spy(text):
        seen.append(len(text))
        return parse(text)

    monkeypatch.setattr(table, "parse_bounded", spy)
    suite = _pick([FORGED])
    with _start(_box()) as box:
        out = _outcomes(box, suite)
    assert out[FORGED] == (Status.CRASH, "protocol violation") and max(seen, default=0) < 1 << 16

    weakened_worker(monkeypatch, open_dir, LENIENT_RECORDS)
    with _start(_box()) as box:
        out = _outcomes(box, suite)
    status, detail = out[FORGED]
    assert status == Status.CRASH and detail.startswith("malformed record: V payload of 1000000")
    assert max(seen, default=0) < 1 << 16

    monkeypatch.setattr(_compare, "TEXT_CAP", 1 << 30)
    with _start(_box()) as box:
        out = _outcomes(box, suite)
    assert max(seen) >= 1_000_000, (out, seen)  # parsed: the size check no longer stops it
    assert not out[FORGED][1].startswith("malformed record: V payload"), out


# ------------------------------------------------------------------------ confined reads
SECRET_READ = "read a world-readable host file with a secret"


@pytest.mark.parametrize("confinement", ["auto", "landlock"])
def test_with_reads_not_confined_to_the_readable_paths_a_host_secret_is_read(
    monkeypatch, open_dir, confinement
):
    """Defence: programs read only the readable paths (bubblewrap's root holds nothing else;
    Landlock grants nothing else).  Widened by the directory of a world-readable host file
    (``readable_paths`` returning it too): the program reads the secret."""
    secret_dir = open_dir / "host"
    secret_dir.mkdir(mode=0o755)
    (secret_dir / "secret.txt").write_text("rk-removal-secret-5d2e")
    (secret_dir / "secret.txt").chmod(0o644)
    ctx = _ctx(secret_file=str(secret_dir / "secret.txt"), secret="rk-removal-secret-5d2e")
    suite = _pick([SECRET_READ], ctx)
    with _start(_box(confinement)) as box:
        assert _held(_outcomes(box, suite), suite) == {SECRET_READ: True}
    readable_paths = _confine.readable_paths

    def widened(*args, **kwargs):
        read, hidden = readable_paths(*args, **kwargs)
        return [*read, str(secret_dir)], hidden

    monkeypatch.setattr(_confine, "readable_paths", widened)
    with _start(_box(confinement)) as box:
        assert "reads-confined" in box.isolation  # the probe's canary is still hidden
        said = _said(box, suite[0].src)
    assert said == "'ESCAPED rk-removal-secret-5d'", said


# ------------------------------------------------------------------------- signal scoping
BYSTANDER = "SIGKILL a process of the same user outside the sandbox"
NO_SIGNAL_SCOPE = "replace(_landlock, 'SCOPE_ALL', 0b01)  # abstract unix sockets, not signals"


@pytest.fixture
def bystander():
    """A ``sleep`` of the uid the workers will run as (a free uid as root, else ours): the one
    process a program is allowed to try to kill here.  Yields (uid, process)."""
    uid = _free_uid() if os.geteuid() == 0 else os.getuid()
    user = {"user": uid, "group": uid, "extra_groups": []} if os.geteuid() == 0 else {}
    proc = subprocess.Popen(["sleep", "120"], **user)  # type: ignore[call-overload]
    try:
        yield uid, proc
    finally:
        proc.kill()
        proc.wait()


def _kill_bystander(confinement: str, uid: int, proc: subprocess.Popen) -> tuple[bool, str]:
    box = _box(confinement)
    if os.geteuid() == 0:
        _as_ordinary_user(box)
        box._as_uid = uid  # the bystander's uid: only Landlock and seccomp stand between them
    (attack,) = _pick([BYSTANDER], _ctx(bystander=proc.pid))
    with _start(box) as b:
        levels = b.isolation
        if confinement == "bwrap" and "pid-ns" not in levels:
            pytest.skip("no bubblewrap pid namespace here")
        said = _said(b, attack.src)
    assert "uid-drop" not in levels, levels
    proc_alive = proc.poll() is None
    return proc_alive, said


@pytest.mark.parametrize(
    "removed",
    ["nothing", "seccomp self-only kill", "Landlock signal scope", "both", "both, under bwrap"],
)
def test_signal_scoping_each_layer_holds_alone_and_without_both_a_bystander_dies(
    monkeypatch, open_dir, bystander, removed
):
    """Defences against signalling a process outside the program's sandbox that runs as the
    same uid (an ordinary user's other processes, the other workers' programs): seccomp allows
    ``kill`` only on the program itself, and Landlock scopes signals to its own domain.  On the
    Landlock path (no pid namespace) each alone holds; with both removed (``kill`` moved to the
    plain allow-list; ``SCOPE_ALL`` without the signal bit in the zygote) the program kills a
    ``sleep`` this test started as the workers' uid.  Under bubblewrap, with both removed, the
    worker's pid namespace still holds: the host pid names no process there."""
    uid, proc = bystander
    if removed.startswith("both") or removed == "seccomp self-only kill":
        self_only = tuple(c for c in _filter.SELF_ONLY if c != "kill")
        monkeypatch.setattr(_filter, "SELF_ONLY", self_only)
        monkeypatch.setattr(_filter, "ALLOWED", (*_filter.ALLOWED, "kill"))
    if removed.startswith("both") or removed == "Landlock signal scope":
        weakened_worker(monkeypatch, open_dir, NO_SIGNAL_SCOPE)
    bwrap = removed.endswith("bwrap")
    alive, said = _kill_bystander("bwrap" if bwrap else "landlock", uid, proc)
    if removed == "both":
        assert not alive and said == f"'ESCAPED killed {proc.pid}'", said
    else:
        assert alive and said == "'held'", said


# --------------------------------------------------------------------- the total write cap
FILL = "fill the disk through the work directory"


@pytest.mark.parametrize("path", ["bwrap", "landlock", "landlock as an ordinary user"])
def test_without_the_total_write_cap_a_program_writes_400_one_mib_files(monkeypatch, path):
    """Defence: on top of the 1 MiB per file of ``RLIMIT_FSIZE``, the work directories live in a
    64 MiB tmpfs (bubblewrap's ``--size``; on the Landlock path as root, a tmpfs in the worker's
    private mount namespace), or, where nothing can be mounted (Landlock as an ordinary user),
    the zygote kills a program that creates more than 64 entries.  The attack writes 400 files
    of 1 MiB: held at 64 MiB, or stopped just past the 64th entry.  Removed (a bubblewrap older
    than 0.10, which has no ``--size``; Landlock without the private mount namespace; the entry
    count off): all 400 MiB are written."""
    suite = _pick([FILL])
    confinement = "bwrap" if path == "bwrap" else "landlock"
    ordinary = path.endswith("ordinary user")

    def box() -> Sandbox:
        b = _box(confinement, timeout_s=20.0)  # 400 MiB to a disk: seconds
        if ordinary:
            _as_ordinary_user(b)
        return b

    with _start(box()) as b:
        levels = b.isolation
        if not {"write-cap", "file-cap"} & set(levels):
            pytest.skip(f"no total write cap on this path ({levels}): documented")
        raw = b._pool.execute([suite[0].src], [0], ["(0,)"], "f")  # type: ignore[union-attr]
    kind, payload = raw[0][2], raw[0][4]
    if "write-cap" in levels:
        assert (kind, payload) == ("V", "'held'"), raw
    else:
        assert kind == "C" and payload.startswith("created "), raw
    if path == "bwrap":
        monkeypatch.setattr(_confine, "bwrap_version", lambda bwrap: (0, 9, 0))
    monkeypatch.setattr(_pool, "WRITE_CAP_MB", 0)
    monkeypatch.setattr(_pool, "FILE_CAP", 0)
    with _start(box()) as b:
        assert not {"write-cap", "file-cap"} & set(b.isolation), b.isolation
        said = _said(b, suite[0].src)
    assert said == "'ESCAPED 400 MiB'", said


# ------------------------------------------------------------- all of it: isolation="basic"
BASIC_ESCAPES = (
    "read a world-readable host file with a secret",
    "read /etc/passwd and /etc/hostname",
    "TCP connect to a host listener",
    "socketpair and exec of a shell",
)
KILLER = "SIGKILL every process of the other worker's tree"


def _basic_or_strict(isolation: str, ctx_of, victims: int = 24) -> tuple[dict, list[Status]]:
    if isolation == "basic":
        with pytest.warns(SandboxWarning):
            box = Sandbox(timeout_s=1.0, memory_mb=256, workers=2, isolation="basic")
    else:
        box = Sandbox(timeout_s=1.0, memory_mb=256, workers=2)
    _as_ordinary_user(box)  # one uid for every worker, as an ordinary user's sandbox has
    with box:
        suite = _pick([KILLER, *BASIC_ESCAPES], ctx_of(box._pool.worker_pids()))
        progs = [suite[0].src, *[VICTIM] * victims, *[a.src for a in suite[1:]]]
        t = box.run(progs, HELD, entry_point="f")
    rows = [0, *range(victims + 1, victims + 1 + len(BASIC_ESCAPES))]
    held = {a.name: Status(int(t.status[r, 0])) in a.allowed for a, r in zip(suite, rows)}
    return held, [Status(int(x)) for x in t.status[1 : victims + 1, 0]]


def test_isolation_basic_lets_the_attacks_through(open_dir, tmp_path):
    """Every confinement removed at once: ``isolation="basic"`` (rlimits only; as an ordinary
    user, so every worker has the same uid).  Under strict the attacks below are held and the
    honest programs on the other worker PASS; under basic a program kills the other worker's
    programs (their rows CRASH), reads a host secret and /etc/passwd, connects to a host TCP
    listener and runs a shell.  Only this test's own processes, files and sockets are
    targets."""
    secret = open_dir / "secret.txt"
    secret.write_text("rk-basic-secret-77c0")
    secret.chmod(0o644)
    tmp_path.chmod(0o755)
    with _listeners(tmp_path) as (ports, _):

        def ctx_of(roots):
            return _ctx(roots=roots, secret_file=str(secret), secret="rk-basic-secret-77c0",
                        **ports)  # fmt: skip

        strict_held, strict_victims = _basic_or_strict("strict", ctx_of)
        basic_held, basic_victims = _basic_or_strict("basic", ctx_of)
    assert all(strict_held.values()), strict_held
    assert set(strict_victims) == {Status.PASS}, strict_victims
    assert not any(basic_held.values()), basic_held
    assert Status.CRASH in basic_victims, basic_victims


# ------------------------------------------------------------- the private home, opened
IMPORTS = "import asyncio, argparse, zipfile\ndef f(x):\n    return 'held'\n"


def test_without_the_private_home_opened_only_preloaded_modules_import(monkeypatch):
    """Defence (Landlock alone, as root, the interpreter under a directory other uids cannot
    traverse, such as pyenv under /root): the worker's private mount namespace covers that
    directory with an empty tmpfs into which the readable paths are bound back.  Removed (no
    private mount namespace, as for a root without CAP_SYS_ADMIN): a program importing
    asyncio, argparse and zipfile gets ModuleNotFoundError, and the report names the paths."""
    with _start(_box("landlock")) as box:
        report = box.isolation_report()
        if "uid-drop" not in box.isolation or "write-cap" not in box.isolation:
            pytest.skip("not root with a private mount namespace here")
        kept = _outcomes(box, [Attack("d", "imports", IMPORTS)])["imports"]
    assert kept == (Status.PASS, "") and report["unreachable"] == [], (kept, report)
    monkeypatch.setattr(_pool, "WRITE_CAP_MB", 0)
    with _start(_box("landlock")) as box:
        report = box.isolation_report()
        removed = _outcomes(box, [Attack("d", "imports", IMPORTS)])["imports"]
    if not report["unreachable"]:
        pytest.skip("the interpreter is not under a private home here: nothing to open")
    assert removed == (Status.ERROR, "ModuleNotFoundError"), removed


# ------------------------------------------------------------------------------ the network
TCP = "TCP connect to a host listener"
SOCKET_CALLS = ("socket", "connect", "sendto", "getsockopt", "setsockopt", "getsockname")
NO_TCP_RULES = "replace(_landlock, 'NET_TCP', 0)  # Landlock no longer handles TCP"


@pytest.mark.parametrize(
    "removed", ["socket calls", "Landlock TCP rules", "both", "both, under bwrap"]
)
def test_network_each_layer_holds_alone_and_without_both_a_host_listener_is_reached(
    monkeypatch, open_dir, tmp_path, removed
):
    """Defences against reaching a host TCP service: seccomp refuses ``socket``, Landlock
    denies TCP connect, and bubblewrap's worker has its own network namespace.  On the Landlock
    path each of the first two holds alone; without both (the socket calls on the allow-list,
    ``NET_TCP`` unhandled in the zygote's ruleset) the program connects to a listener this test
    opened on 127.0.0.1 and sends to it.  Under bubblewrap the network namespace still holds."""
    if removed in ("socket calls", "both", "both, under bwrap"):
        monkeypatch.setattr(_filter, "ALLOWED", (*_filter.ALLOWED, *SOCKET_CALLS))
    if removed != "socket calls":
        weakened_worker(monkeypatch, open_dir, NO_TCP_RULES)
    with _listeners(tmp_path) as (ports, socks):
        (attack,) = _pick([TCP], _ctx(**ports))
        confinement = "bwrap" if removed.endswith("bwrap") else "landlock"
        with _start(_box(confinement)) as box:
            if confinement == "bwrap" and "net-ns" not in box.isolation:
                pytest.skip("no bubblewrap network namespace here")
            said = _said(box, attack.src)
        try:
            socks[0].accept()[0].close()
            reached = True
        except BlockingIOError:
            reached = False
    if removed == "both":
        assert said == "'ESCAPED tcp'" and reached, said
    else:
        assert said == "'held'" and not reached, said


# ------------------------------------------------------------------- a uid per worker (root)
HOLDER = (
    "import threading, time\nthreading.stack_size(1 << 16)\n"
    "def f(x):\n    for _ in range(300):\n        try:\n"
    "            threading.Thread(target=time.sleep, args=(2.0,), daemon=True).start()\n"
    "        except Exception:\n            break\n    time.sleep(1.5)\n    return 'held'\n"
)  # holds the process cap (64 tasks of its uid) for 1.5 s
THREADED_VICTIM = (
    "import threading, time\n"
    "def f(x):\n    time.sleep(0.02)\n    out = []\n"
    "    t = threading.Thread(target=out.append, args=('held',))\n"
    "    t.start()\n    t.join()\n    return out[0]\n"
)


def _victims_beside_a_holder() -> list[tuple[Status, str]]:
    with _start(Sandbox(timeout_s=3.0, memory_mb=256, workers=2)) as box:
        # Row 0 (the holder) and row 1 go to the first worker; the other rows run on the
        # second worker while the holder holds its threads.
        t = box.run([HOLDER, *[THREADED_VICTIM] * 13], HELD, entry_point="f")
    return [(Status(int(s)), str(d)) for s, d in zip(t.status[2:, 0], t.detail[2:, 0])]


def test_with_one_uid_for_every_worker_a_program_holding_the_process_cap_starves_the_others(
    monkeypatch,
):
    """Defence (root): each worker's programs drop to a uid of their own, because the kernel
    counts ``RLIMIT_NPROC`` per uid machine-wide.  Removed (``worker_uid`` the same for every
    slot): a program holding 64 threads on one worker makes the honest programs on the other
    worker fail to start a thread (RuntimeError: ERROR) — sabotage that raises the holder's
    group-relative advantage."""
    if os.geteuid() != 0:
        pytest.skip("the uid drop is root's: an ordinary user's cap is a margin (docs)")
    kept = _victims_beside_a_holder()
    assert {s for s, _ in kept} == {Status.PASS}, kept
    one_uid = _pool.worker_uid
    monkeypatch.setattr(_pool, "worker_uid", lambda pid, slot: one_uid(pid, 0))
    removed = _victims_beside_a_holder()
    assert (Status.ERROR, "RuntimeError") in removed, removed
