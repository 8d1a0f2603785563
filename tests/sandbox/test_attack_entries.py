"""Goal (f) through the work directory's entries (found by an outside attack): the tmpfs that
holds the work directories capped their data (``size=``) but not their entries, and an empty
entry costs no block but ~1.5 KB of the host's kernel memory (inode, dentry, name; no memory
cgroup here, and ``RLIMIT_AS`` does not count it).  A program making directories with long names
for its tests' budgets grew the host's slab by 1.7 GB (MemAvailable down 1.1–1.3 GB) on the
default path and on the ordinary user's Landlock path; hard links and symlinks did the same.
Defence: every such tmpfs holds at most ``_mounts.NR_INODES`` entries (``nr_inodes=``).
"""

from __future__ import annotations

import ast

import pytest

from rewardkit.sandbox import Sandbox, _mounts

from .removal import weakened_worker
from .test_attack_v2 import PATHS, _box

# Makes entries of one kind for 0.8 s (or until refused); answers how many, and the error.
MAKER = """
import errno, os, time
NAME = "x" * 200
def f(kind):
    if kind == "links":
        open("target", "w").close()
    end = time.monotonic() + 0.8
    n = 0
    try:
        while time.monotonic() < end:
            name = NAME + str(n)
            if kind == "dirs":
                os.mkdir(name)
            elif kind == "files":
                os.close(os.open(name, os.O_CREAT | os.O_WRONLY, 0o600))
            elif kind == "links":
                os.link("target", name)
            else:
                os.symlink("target", name)
            n += 1
    except OSError as e:
        return [n, errno.errorcode.get(e.errno, e.errno)]
    return [n, None]
"""
KINDS = ("dirs", "files", "links", "symlinks")


def _made(box: Sandbox) -> dict[str, tuple[int, str | None]]:
    out = {}
    for kind in KINDS:
        cells = box._pool.execute([MAKER], [0], [f"({kind!r},)"], "f")  # type: ignore[union-attr]
        (_, _, what, _, payload), *_ = cells
        assert what == "V", cells
        n, err = ast.literal_eval(payload)
        out[kind] = (n, err)
    return out


@pytest.mark.parametrize("path", PATHS)
def test_a_program_makes_at_most_nr_inodes_entries(path):
    with _box(path, timeout_s=2.0, memory_mb=256, workers=1) as box:
        if "write-cap" not in box.isolation:
            pytest.skip(f"no tmpfs for the work directories on this path: {box.isolation}")
        made = _made(box)
    for kind, (n, err) in made.items():
        assert err == "ENOSPC" and 1000 < n <= _mounts.NR_INODES, (kind, made)


def test_without_nr_inodes_a_program_makes_tens_of_thousands(monkeypatch, open_dir):
    """Removed (``nr_inodes=0``: no cap, as before): the same program makes entries until its
    time is up, many times the cap, each pinning kernel memory until the row ends."""
    weakened_worker(monkeypatch, open_dir, "import _mounts\nreplace(_mounts, 'NR_INODES', 0)")
    with _box("strict_default", timeout_s=2.0, memory_mb=256, workers=1) as box:
        made = _made(box)
    assert all(n > 4 * _mounts.NR_INODES and err is None for n, err in made.values()), made
