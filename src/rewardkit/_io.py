"""Reading user data files: JSONL and TOML with errors that name file, line and field.

Loading is all-or-nothing: a malformed line raises :class:`InputError` and nothing is returned.
"""

from __future__ import annotations

import json
import math
import os
import stat
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ._journal import note_input
from .errors import InputError, RenamedFieldWarning

__all__ = [
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "read_jsonl",
    "read_toml",
    "renamed_field",
    "require_field",
]

T = TypeVar("T")


MAX_BYTES = 1 << 30  # 1 GiB: a larger data file is refused before it is read
# TOML files are configurations, rule packs and task banks (the shipped ones are < 100 KiB);
# tomllib holds about 12x a file's size in memory, so a 1 GiB TOML file would need ~12 GiB.
MAX_TOML_BYTES = 64 << 20
MAX_DEPTH = 64  # nesting of arrays / objects / tables; deeper input is refused before parsing
MAX_INT_DIGITS = 300  # beyond this an int cannot become a float (and Python caps at 4300)


def _read_text(path: str | Path, max_bytes: int = MAX_BYTES) -> tuple[Path, str]:
    """A user file's text: exists, is a regular file, at most ``max_bytes``, UTF-8 (else
    InputError).

    The file is opened without blocking and checked on the open descriptor, so a FIFO, a
    device (``/dev/zero``, ``/dev/urandom``) or a socket is refused instead of waiting forever
    or filling memory, and at most max_bytes + 1 bytes are ever read."""
    if not isinstance(path, (str, os.PathLike)):
        raise InputError(f"a file path must be a str or a path; got {type(path).__name__}")
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise InputError("no such file", path=str(p)) from None
    except ValueError:  # a NUL byte in the name
        raise InputError("not a file name: it holds a NUL byte", path=repr(str(p))) from None
    except OSError as exc:
        raise InputError(f"cannot be read: {exc.strerror} (a readable file)", path=str(p)) from None
    st = os.fstat(fd)
    note_input(st, str(p))  # a CLI run's artefacts may not overwrite it
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InputError("is a directory (a file is accepted)", path=str(p))
        kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device or socket"
        raise InputError(f"is {kind}, not a regular file (a regular file is accepted)", path=str(p))
    with os.fdopen(fd, "rb") as fh:
        size = st.st_size
        if size <= max_bytes:
            try:
                raw = fh.read(max_bytes + 1)  # the file may grow after fstat
            except OSError as exc:
                raise InputError(
                    f"cannot be read: {exc.strerror} (a readable file)", path=str(p)
                ) from None
            size = max(size, len(raw))
        if size > max_bytes:
            raise InputError(
                f"is {size:,} bytes (files up to {max_bytes >> 20} MiB are accepted)",
                path=str(p),
            )
    try:
        return p, raw.decode("utf-8-sig")  # a leading byte-order mark is dropped
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at offset {exc.start} (UTF-8 text is "
            "accepted)",
            path=str(p),
            line=line,
        ) from None


def _too_deep(text: str, quotes: str, comment: str = "") -> int | None:
    """The 1-based line where nesting of [ / { first exceeds MAX_DEPTH, outside strings and
    comments."""
    depth, line, quote, escaped, in_comment = 0, 1, "", False, False
    for ch in text:
        if ch == "\n":
            line += 1
            in_comment = False
        if in_comment:
            continue
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\" and quote == '"':
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in quotes:
            quote = ch
        elif ch == comment:
            in_comment = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return line
        elif ch in "]}":
            depth = max(depth - 1, 0)
    return None


def _checked_int(digits: str) -> int:
    n = len(digits.lstrip("-"))
    if n > MAX_INT_DIGITS:
        raise _Refused(f"an integer of {n} digits (integers up to {MAX_INT_DIGITS} digits)")
    return int(digits)


class _Refused(ValueError):
    pass


def _checked_float(text: str) -> float:
    x = float(text)
    if not math.isfinite(x):
        raise _Refused(
            f"the number {text:.40} is too large for a float (finite numbers up to about 1.8e308)"
        )
    return x


def _no_constant(name: str) -> float:
    raise _Refused(f"{name} is not a JSON number (finite numbers; null for a missing value)")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _Refused(f"field {key!r:.60} given twice (each field at most once per object)")
        obj[key] = value
    return obj


def read_jsonl(
    path: str | Path,
    parse: Callable[[dict[str, Any], str, int], T] | None = None,
    *,
    allow_empty: bool = False,
) -> list[T] | list[dict[str, Any]]:
    """Read a JSONL file: one JSON object per non-blank line.

    A file without any record is an error (almost always a wrong path or a failed export)
    unless ``allow_empty=True``. Before parsing, the file must be a regular file of at most
    1 GiB of UTF-8 text, and each line nested at most 64 deep with integers of at most 300
    digits, finite numbers only (no ``NaN`` / ``Infinity``, no ``1e309``) and no key twice in
    an object: anything else is an :class:`InputError` naming the file and line, never a
    ``RecursionError`` or ``OverflowError`` later on.

    ``parse(obj, path, line)`` turns each object into a record and raises :class:`InputError`
    (use :func:`require_field`) for a bad field; the line number is 1-based.
    """
    p, text = _read_text(path)
    out: list[Any] = []
    # Records end at "\n" (and "\r\n") only: str.splitlines() would also cut at U+2028,
    # U+0085, form feeds…, which JSON allows raw inside a string.
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        if _too_deep(line, '"') is not None:
            raise InputError(
                f"nested more than {MAX_DEPTH} deep (JSON nested up to {MAX_DEPTH} levels)",
                path=str(p),
                line=lineno,
            )
        try:
            obj = json.loads(
                line,
                parse_int=_checked_int,
                parse_float=_checked_float,
                parse_constant=_no_constant,
                object_pairs_hook=_unique_keys,
            )
        except _Refused as exc:
            raise InputError(str(exc), path=str(p), line=lineno) from None
        except json.JSONDecodeError as exc:
            raise InputError(
                f"not valid JSON: {exc.msg} (column {exc.colno})", path=str(p), line=lineno
            ) from None
        except RecursionError:
            raise InputError(
                "not readable JSON: nested deeper than the JSON parser allows (about 1,000 levels)",
                path=str(p),
                line=lineno,
            ) from None
        if not isinstance(obj, dict):
            raise InputError(
                f"each line must be a JSON object; got {type(obj).__name__}",
                path=str(p),
                line=lineno,
            )
        out.append(parse(obj, str(p), lineno) if parse else obj)
    if not out and not allow_empty:
        raise InputError("no records: expected one JSON object per line", path=str(p))
    return out


def require_field(
    obj: dict[str, Any],
    name: str,
    kinds: type | tuple[type, ...],
    path: str,
    line: int,
    *,
    accepted: str,
    optional: bool = False,
) -> Any:
    """``obj[name]`` if present and of ``kinds`` (bool is never an int here), else InputError."""
    if name not in obj:
        if optional:
            return None
        raise InputError(f"missing; expected {accepted}", path=path, line=line, field=name)
    value = obj[name]
    if value is None and optional:
        return None
    bad_bool = isinstance(value, bool) and bool not in (
        kinds if isinstance(kinds, tuple) else (kinds,)
    )
    if bad_bool or not isinstance(value, kinds):
        raise InputError(
            f"expected {accepted}; got {value!r:.60}", path=path, line=line, field=name
        )
    return value


def renamed_field(
    obj: dict[str, Any],
    old: str,
    new: str,
    path: str,
    line: int,
    *,
    warned: set[str],
) -> dict[str, Any]:
    """``obj`` with a field's deprecated name ``old`` read as ``new``.

    The first line of each file that uses the old name raises a :class:`RenamedFieldWarning`
    naming the file, that line and both names (``warned`` holds the files already warned
    about); a line with both names is an InputError. The next version refuses the old name."""
    if old not in obj:
        return obj
    if new in obj:
        raise InputError(
            f"has both '{old}' (the old name) and '{new}'; give only '{new}'",
            path=path,
            line=line,
            field=old,
        )
    if path not in warned:
        warned.add(path)
        RenamedFieldWarning.warn(
            f"{path}, line {line}: field '{old}' is deprecated; rename it to '{new}' (read as "
            f"'{new}' on every line for now; the next version refuses '{old}')",
        )
    out = dict(obj)
    out[new] = out.pop(old)
    return out


def read_toml(path: str | Path) -> dict[str, Any]:
    """Parse a TOML file, naming the file (and line) on any error; the same limits as
    :func:`read_jsonl` hold before parsing, except the size: at most ``MAX_TOML_BYTES``."""
    p, text = _read_text(path, MAX_TOML_BYTES)
    deep = _too_deep(text, "\"'", "#")
    if deep is not None:
        raise InputError(
            f"nested more than {MAX_DEPTH} deep (TOML nested up to {MAX_DEPTH} levels)",
            path=str(p),
            line=deep,
        )
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML: {exc}", path=str(p)) from None
    except ValueError as exc:  # an integer over Python's 4300-digit limit
        raise InputError(f"not valid TOML: {exc}", path=str(p)) from None
