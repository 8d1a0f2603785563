"""Undo the files a command wrote when it ends in bad input, an internal error or an interrupt
(foundations).

Each artefact is written atomically (``_json.write_atomic``), but a command writes several: one
stopped half-way (Ctrl-C, input found bad after a first artefact, a bug) left some new files
beside old ones and no manifest to tell them apart. While a journal is open, ``write_atomic``
reports every file before it replaces it (a hard link keeps the old version) and every folder it
makes; ``rollback`` puts the folder back as it was, ``commit`` drops the kept versions.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from pathlib import Path

from .errors import ConfigError

__all__ = ["Journal", "before_replace", "made_dirs", "missing_dirs", "note_input"]

_lock = threading.Lock()
_active: Journal | None = None


class Journal:
    """The files and folders written since :meth:`open`, in order."""

    def __init__(self) -> None:
        self.files: dict[str, str | None] = {}  # target -> kept old version (None: was new)
        self.dirs: list[str] = []
        self.inputs: dict[tuple[int, int], str] = {}  # (device, inode) -> the path read

    def open(self) -> Journal:
        global _active
        with _lock:
            _active = self
        return self

    def close(self) -> None:
        global _active
        with _lock:
            if _active is self:
                _active = None

    def commit(self) -> None:
        self.close()
        for kept in self.files.values():
            if kept is not None:
                _unlink(kept)
        self.files.clear()
        self.dirs.clear()

    def rollback(self) -> None:
        """Restore every replaced file, remove every new one and every folder made (if it is
        empty again)."""
        self.close()
        for target, kept in reversed(list(self.files.items())):
            if kept is not None:
                os.replace(kept, target)
            else:
                _unlink(target)
        for d in reversed(self.dirs):
            with contextlib.suppress(OSError):  # not empty: something else wrote there
                os.rmdir(d)
        self.files.clear()
        self.dirs.clear()


def _unlink(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def missing_dirs(folder: Path) -> list[str]:
    """The folders ``mkdir(parents=True)`` would make for ``folder``, outermost first."""
    out: list[str] = []
    p = folder
    while not p.exists() and p.parent != p:
        out.append(str(p))
        p = p.parent
    return out[::-1]


def made_dirs(dirs: list[str]) -> None:
    """Report folders just made (from :func:`missing_dirs`)."""
    with _lock:
        if _active is not None:
            _active.dirs.extend(d for d in dirs if d not in _active.dirs)


def note_input(st: os.stat_result, path: str) -> None:
    """Report an input file read (its ``fstat``): no artefact of this run may replace it."""
    with _lock:
        if _active is not None:
            _active.inputs[(st.st_dev, st.st_ino)] = path


def before_replace(target: Path) -> None:
    """Report that ``target`` is about to be replaced; keep its current version first. An
    input file of this run is never replaced (ConfigError): ``calibrate --rewards
    out/calibration.json --out out`` overwrote the rewards it had read with its result."""
    with _lock:
        journal = _active
        if journal is None or str(target) in journal.files:  # written by this run already
            return
        try:
            st = os.lstat(target)
        except OSError:
            st = None
        read = None if st is None else journal.inputs.get((st.st_dev, st.st_ino))
        if read is not None:
            raise ConfigError(
                f"--out {target.parent}: the artefact {target.name} would overwrite the input "
                f"file {read} (another --out folder, or another name for the input)"
            )
        kept: str | None = None
        if os.path.lexists(target):
            kept = str(target.parent / f".{target.name}.rewardkit-undo-{os.getpid()}")
            _unlink(kept)
            try:
                os.link(target, kept, follow_symlinks=False)
            except OSError:  # a file system without hard links
                shutil.copy2(target, kept, follow_symlinks=False)
        journal.files[str(target)] = kept
