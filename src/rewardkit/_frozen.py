"""Frozen means frozen: the values a result holds cannot be changed after it is built.

    freeze({"a": [1, {"b": {2}}]})   # ReadOnlyDict({'a': (1, ReadOnlyDict({'b': frozenset({2})}))})

A frozen dataclass only stops attribute assignment; a ``dict`` or ``list`` inside it can still be
edited, and then ``to_json()`` reports numbers the code never computed. :func:`freeze` copies
every mapping into a :class:`ReadOnlyDict`, lists and tuples into tuples, sets into frozensets,
and makes numpy arrays read-only views, recursively. :class:`rewardkit._json.JsonMixin` applies it
to every field of every result after construction (and after the result's own
``__post_init__``), so no result type can forget it.

Why a read-only ``dict`` subclass and not :class:`types.MappingProxyType`: a proxy cannot be
pickled (results travel to Ray and subprocess workers), ``json.dumps`` refuses it, and code that
checks ``isinstance(x, dict)`` (strict parsers, trainer hooks) would stop accepting a result's
own values. A :class:`ReadOnlyDict` is a dict for every reader and refuses every writer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

import numpy as np

__all__ = ["ReadOnlyDict", "freeze", "thaw"]


class ReadOnlyDict(dict[Any, Any]):
    """A ``dict`` whose contents cannot change: every mutating method raises ``TypeError``."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("a result's mapping is read-only; build a new result instead")

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return (ReadOnlyDict, (dict(self),))

    def __repr__(self) -> str:
        return f"ReadOnlyDict({dict.__repr__(self)})"


def freeze(value: Any) -> Any:
    """``value`` with every container inside it read-only (see the module docstring)."""
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return value
    if isinstance(value, Mapping):
        return ReadOnlyDict({k: freeze(v) for k, v in value.items()})
    if type(value) is tuple or isinstance(value, list):
        return tuple(freeze(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(freeze(v) for v in value)
    if isinstance(value, bytearray):
        return bytes(value)
    if isinstance(value, np.ndarray):
        if not value.flags.writeable:
            return value
        view = value.view()
        view.flags.writeable = False
        return view
    return value  # numbers, enums, paths, other (frozen) results


def thaw(value: Any) -> Any:
    """A plain, editable copy in JSON shapes (dicts and lists) of a frozen value, for handing
    a result's data to code that takes JSON (an environment's strict action parser)."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(v) for v in value]
    return value
