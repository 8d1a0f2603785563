"""Canonical JSON, content hashes and atomic writes.

Canonical means: keys sorted, no insignificant whitespace, floats in Python's shortest
round-trip form (``repr``), ``-0.0`` written as ``0.0``; NaN and infinities are errors that name
where in the object they sit (``$.components.task``), never a silent ``null``: "cannot score" is
an explicit ``None``. Identical inputs therefore give identical bytes in any process, whatever
``PYTHONHASHSEED`` is.

Results inherit :class:`JsonMixin`, which gives them ``to_dict()`` and ``to_json()``.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ._frozen import freeze
from ._journal import before_replace, made_dirs, missing_dirs

__all__ = ["JsonMixin", "canonical_json", "content_hash", "to_plain", "write_atomic"]


def to_plain(obj: Any, _path: str = "$") -> Any:
    """Turn results, numpy values, tuples and enums into plain JSON-able Python values."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        if math.isnan(x):
            raise ValueError(
                f"canonical JSON cannot hold NaN (at {_path}): a NaN is a bug in the code that "
                "computed it; a value that cannot be scored is None."
            )
        if math.isinf(x):
            raise ValueError(f"canonical JSON cannot hold an infinite value (at {_path}).")
        return 0.0 if x == 0.0 else x
    if isinstance(obj, enum.Enum):
        return to_plain(obj.value, _path)
    if hasattr(obj, "to_dict") and callable(obj.to_dict):
        return to_plain(obj.to_dict(), _path)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {
            f.name: to_plain(getattr(obj, f.name), f"{_path}.{f.name}")
            for f in dataclasses.fields(obj)
        }
    if isinstance(obj, Mapping):
        out = {}
        for k, v in obj.items():
            key = k.value if isinstance(k, enum.Enum) else k
            key = str(to_plain(key, _path)) if not isinstance(key, str) else key
            if key in out:
                raise ValueError(f"two keys of {_path} turn into the same JSON key '{key}'.")
            out[key] = to_plain(v, f"{_path}.{key}")
        return out
    if isinstance(obj, np.ndarray):
        return [to_plain(v, f"{_path}[{i}]") for i, v in enumerate(obj.tolist())]
    if isinstance(obj, (list, tuple)):
        return [to_plain(v, f"{_path}[{i}]") for i, v in enumerate(obj)]
    if isinstance(obj, (set, frozenset)):
        return sorted((to_plain(v, _path) for v in obj), key=lambda v: json.dumps(v))
    if isinstance(obj, Path):
        return obj.as_posix()
    raise TypeError(f"cannot put a {type(obj).__name__} into canonical JSON (at {_path}).")


def canonical_json(obj: Any, *, indent: int | None = None) -> str:
    """Serialise ``obj`` canonically (sorted keys, shortest round-trip floats)."""
    separators = (",", ":") if indent is None else (",", ": ")
    return json.dumps(
        to_plain(obj),
        sort_keys=True,
        separators=separators,
        indent=indent,
        ensure_ascii=False,
        allow_nan=False,
    )


def content_hash(obj: Any) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``obj`` (bytes are hashed as they are)."""
    data = obj if isinstance(obj, bytes) else canonical_json(obj).encode("utf-8")
    return "sha256:" + hashlib.sha256(data).hexdigest()


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> Path:
    """Write ``data`` to ``path`` so that readers see the old file or the whole new one."""
    target = Path(path)
    made = missing_dirs(target.parent)
    target.parent.mkdir(parents=True, exist_ok=True)
    made_dirs(made)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        # mkstemp makes the file 0600; give it the mode a plain open() would (0666 less umask).
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        before_replace(target)  # a CLI run that fails undoes its writes
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return target


def _freeze_fields(obj: Any) -> None:
    for f in dataclasses.fields(obj):
        object.__setattr__(obj, f.name, freeze(getattr(obj, f.name)))


def _rebuild(cls: type, state: dict[str, Any]) -> Any:
    """Unpickle / copy a result: set its fields back and freeze them again (an unpickled
    numpy array is writable)."""
    obj: Any = object.__new__(cls)
    for name, value in state.items():
        object.__setattr__(obj, name, value)
    _freeze_fields(obj)
    return obj


class JsonMixin:
    """Adds ``to_dict()`` and canonical ``to_json()`` to a frozen result dataclass, and makes
    the result immutable in fact: after construction (and after the class's own
    ``__post_init__``) every field is frozen by :func:`rewardkit._frozen.freeze` — mappings
    become read-only dicts, lists tuples, arrays read-only views."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("__post_init__")
        if own is not None and not getattr(own, "_freezes_fields", False):

            @functools.wraps(own)
            def post_init(self: Any, *args: Any) -> None:
                own(self, *args)
                _freeze_fields(self)

            post_init._freezes_fields = True  # type: ignore[attr-defined]
            setattr(cls, "__post_init__", post_init)  # noqa: B010 (a method set on the class)

    def __post_init__(self) -> None:
        _freeze_fields(self)

    def __reduce__(self) -> tuple[Any, ...]:
        assert dataclasses.is_dataclass(self)
        state = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return (_rebuild, (type(self), state))

    def to_dict(self) -> dict[str, Any]:
        assert dataclasses.is_dataclass(self)
        return {
            f.name: to_plain(getattr(self, f.name), f"$.{f.name}") for f in dataclasses.fields(self)
        }

    def to_json(self, *, indent: int | None = None) -> str:
        return canonical_json(self.to_dict(), indent=indent)
