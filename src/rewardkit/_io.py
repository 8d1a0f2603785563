"""Reading user data files: JSONL and TOML with errors that name file, line and field.

Loading is all-or-nothing: a malformed line raises :class:`InputError` and nothing is returned.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from .errors import InputError

__all__ = ["read_jsonl", "read_toml", "require_field"]

T = TypeVar("T")


def read_jsonl(
    path: str | Path,
    parse: Callable[[dict[str, Any], str, int], T] | None = None,
    *,
    allow_empty: bool = False,
) -> list[T] | list[dict[str, Any]]:
    """Read a JSONL file: one JSON object per non-blank line.

    A file without any record is an error (almost always a wrong path or a failed export)
    unless ``allow_empty=True``.

    ``parse(obj, path, line)`` turns each object into a record and raises :class:`InputError`
    (use :func:`require_field`) for a bad field; the line number is 1-based.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")  # a leading byte-order mark is dropped
    except FileNotFoundError:
        raise InputError("no such file", path=str(p)) from None
    except IsADirectoryError:
        raise InputError("is a directory; expected a JSONL file", path=str(p)) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", path=str(p)) from None
    out: list[Any] = []
    # Records end at "\n" (and "\r\n") only: str.splitlines() would also cut at U+2028,
    # U+0085, form feeds…, which JSON allows raw inside a string.
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
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


def read_toml(path: str | Path) -> dict[str, Any]:
    """Parse a TOML file, naming the file on any error."""
    p = Path(path)
    try:
        return tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("no such file", path=str(p)) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML: {exc}", path=str(p)) from None
