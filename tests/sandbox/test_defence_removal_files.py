"""Isolation defences of files and records, each removed: the attack gets through.

The per-program work directory and its iterative wipe, the value-payload caps, confined reads,
the total write cap (tmpfs or entry count), and the private home opened on the Landlock path.
How a defence is removed: ``removal.py``.
"""

from __future__ import annotations

import os
import platform

import pytest

from rewardkit.sandbox import (
    Sandbox,
    Status,
    _compare,
    _confine,
    _filter,
    _pool,
    table,
)

from .attacks import Attack
from .removal import (
    HELD,
    _box,
    _ctx,
    _held,
    _outcomes,
    _pick,
    _said,
    _start,
    weakened_worker,
)
from .test_pool import _as_ordinary_user

pytestmark = pytest.mark.skipif(
    platform.machine() != "x86_64", reason="the attacks use x86_64 system call numbers"
)


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
    does not cover); its cell is CRASH "worker lost" and a fresh worker replaces it.  Run where
    the wipe walks: as an ordinary user whose bubblewrap cannot grant the zygote its
    capabilities (elsewhere each remade work directory is a new tmpfs, ``fresh-tmpfs``, and no
    directory of a program's is ever walked)."""
    monkeypatch.setattr(_confine, "_cap_known", lambda cap: False)
    suite = _pick([NESTED])
    for patch in ("", NAIVE_WIPE):
        if patch:
            weakened_worker(monkeypatch, open_dir, patch)
        box = _box(timeout_s=5.0)
        _as_ordinary_user(box)
        with _start(box) as box:
            assert "fresh-tmpfs" not in box.isolation, box.isolation
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
strict_check = _child.is_cell_line
def without_value_cap(buf, start, end, expect_idx):  # every check but a value's payload size
    return strict_check(buf, start, end, expect_idx, value_cap=1 << 30)
replace(_worker, "is_cell_line", without_value_cap)
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


@pytest.mark.parametrize(
    "widened", ["bubblewrap's root", "Landlock's rules", "bubblewrap's root, no Landlock"]
)
def test_reads_on_the_default_path_each_layer_holds_alone(monkeypatch, open_dir, widened):
    """On the default path two layers confine reads: bubblewrap's root holds only the readable
    paths, and the Landlock domain inside it grants only them.  Each alone holds: the secret's
    directory bound into bubblewrap's root (Landlock kept) or granted by Landlock (not bound)
    stays unreadable.  Bound and without Landlock (its ABI reported as 0), it is read, as when
    both are widened (the test above)."""
    secret_dir = open_dir / "host"
    secret_dir.mkdir(mode=0o755)
    (secret_dir / "secret.txt").write_text("rk-removal-secret-71ab")
    (secret_dir / "secret.txt").chmod(0o644)
    ctx = _ctx(secret_file=str(secret_dir / "secret.txt"), secret="rk-removal-secret-71ab")
    (attack,) = _pick([SECRET_READ], ctx)
    readable_paths, bwrap_args = _confine.readable_paths, _confine.bwrap_args

    def bound(bwrap, root, read, *args, **kwargs):  # the directory bound by bubblewrap
        return bwrap_args(bwrap, root, [*read, str(secret_dir)], *args, **kwargs)

    def granted(*args, **kwargs):  # the directory granted by Landlock (and the probe's list)
        read, hidden = readable_paths(*args, **kwargs)
        return [*read, str(secret_dir)], hidden

    def not_bound(bwrap, root, read, *args, **kwargs):
        return bwrap_args(bwrap, root, [p for p in read if p != str(secret_dir)], *args, **kwargs)

    if widened.startswith("bubblewrap's root"):
        monkeypatch.setattr(_confine, "bwrap_args", bound)
    else:
        monkeypatch.setattr(_confine, "readable_paths", granted)
        monkeypatch.setattr(_confine, "bwrap_args", not_bound)
    if widened.endswith("no Landlock"):
        monkeypatch.setattr(_confine, "landlock_abi", lambda libc: 0)
    with _start(_box("bwrap")) as box:
        assert ("landlock" in box.isolation) != widened.endswith("no Landlock"), box.isolation
        said = _said(box, attack.src)
    want = "'ESCAPED rk-removal-secret-71'" if widened.endswith("no Landlock") else "'held'"
    assert said == want, said


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


# ---------------------------------------------------- the work directory's metadata, carried
METADATA = [  # (set, check): chmod last, a directory of mode 000 hides the others' traces
    ("mtime stamped on the work directory", "mtime read back"),
    ("xattr set on the work directory", "xattr read back"),
    ("chmod 000 of the work directory and its parent",
     "later programs can still write their directory"),
]  # fmt: skip
METADATA_CALLS = ("chmod", "fchmod", "fchmodat", "fchmodat2", "utime", "utimes", "utimensat",
                  "futimesat", "setxattr", "lsetxattr", "fsetxattr", "getxattr", "lgetxattr",
                  "fgetxattr", "listxattr")  # fmt: skip
REUSE = "replace(_worker.Zygote, '_pristine', lambda self: True)  # the directory reused as left"


WHERE = "import os\ndef f(x):\n    return os.path.dirname(os.getcwd())\n"


def _metadata_said(box: Sandbox) -> tuple[dict[str, str], bool, str]:
    """What each check said after its set ran in the program before it (one worker), whether
    that worker lived through it all, and the directory above the work directory."""
    base = _said(box, WHERE).strip("'")
    pids = box._pool.worker_pids()  # type: ignore[union-attr]
    out = {}
    for set_name, check_name in METADATA:
        set_, check = _pick([set_name, check_name])
        box.run([set_.src], HELD, entry_point="f")
        out[check_name] = _said(box, check.src)
    return out, box._pool.worker_pids() == pids, base  # type: ignore[union-attr]


METADATA_PATHS = ["auto", "landlock", "auto as an ordinary user", "landlock as an ordinary user"]


@pytest.mark.parametrize("path", METADATA_PATHS)
@pytest.mark.parametrize("removed", ["nothing", "seccomp", "the untouched check", "both"])
def test_work_directory_metadata_each_layer_holds_alone_and_without_both_it_carries(
    monkeypatch, open_dir, removed, path
):
    """Defences against a program changing the metadata of its work directory or of the one
    above it for the next program (a chmod that breaks later honest programs; an mtime or an
    xattr that carries data): seccomp refuses chmod, the ``utime*`` calls and xattrs, and after
    every program the zygote checks that both are exactly as made (entries, inode, mode, owner,
    mtime, ctime: ``Zygote._pristine``), and otherwise restores the one above (mode, times,
    xattrs; even at mode 000) and makes a fresh work directory.  Each alone holds, on every
    path, without losing the worker or leaving a directory behind (as an ordinary user the
    directory above belongs to the programs' uid: they can chmod it and set its xattrs).
    Without both (the calls on the allow-list; the check always true, so the directory is
    reused as left) the next program reads the mtime and the xattr and cannot write its
    directory."""
    if removed == "nothing" and path != "auto":
        pytest.skip("held with every defence: shown on the default path")
    if removed in ("seccomp", "both"):
        monkeypatch.setattr(_filter, "ALLOWED", (*_filter.ALLOWED, *METADATA_CALLS))
    if removed in ("the untouched check", "both"):
        weakened_worker(monkeypatch, open_dir, REUSE)
    box = _box(path.split()[0])
    if path.endswith("ordinary user"):
        _as_ordinary_user(box)
    with _start(box) as b:
        said, same_worker, base = _metadata_said(b)
    assert base.startswith("/") and not os.path.exists(base), base  # nothing left on the host
    if removed != "both":
        assert set(said.values()) == {"'held'"} and same_worker, said
        return
    assert said["mtime read back"] == "'ESCAPED mtime .'", said
    assert said["xattr read back"] == "'ESCAPED xattr'", said
    # an ordinary user's next program cannot even enter the directory (the child, not yet
    # the program, fails: CRASH); root's enters it before dropping its uid, then cannot write
    broken = said["later programs can still write their directory"]
    refused = broken.startswith('"ESCAPED PermissionError(13')
    assert refused or "before the program was ready" in broken, said
