"""Declarative input generators: how a bank task draws one random argument tuple, as data.

A task of the bank's data file lists one spec per argument, each a table with a ``kind``::

    args = [
      { kind = "list", len = [1, 7], of = { kind = "int", lo = 0, hi = 6 } },
      { kind = "int", lo = 0, hi = 6 },
    ]

    >>> import numpy as np
    >>> specs = parse_args([{"kind": "str", "len": [1, 4], "alphabet": "ab"}], field="args")
    >>> draw_args(specs, np.random.default_rng(0))
    ('bbaa',)

Kinds (bounds inclusive). The draws column is the contract: a spec consumes the numpy
``Generator`` exactly in this order, so a data file reproduces its inputs bit for bit.

=========== ============================ ====================================================
kind        fields                       value; draws
=========== ============================ ====================================================
int         lo, hi                       an int in [lo, hi]; ``integers(lo, hi + 1)``
const       value                        the value (int, float, str, bool or arrays); none
list        len = [a, b], of             a list of n elements; n = ``integers(a, b + 1)``,
                                         then, when ``of`` is an int spec, one vectorised
                                         ``integers(lo, hi + 1, size=n)``, else n draws of
                                         ``of`` in order
str         len = [a, b], alphabet       n, then ``choice(list(alphabet), size=n)`` joined
matrix      rows, cols = [a, b], of      rows r, then columns c, then r vectorised draws of
                                         the int spec ``of`` (one per row, size c)
sorted      of                           ``sorted`` of a list spec's value; as ``of``
scaled      of, by                       [x * f for x in of]: the int list ``of``, then one
                                         draw of the int spec ``by`` per element
palindrome  half                         w + reversed(w), the middle letter kept once or
                                         twice: the str spec ``half``, then ``integers(0, 2)``
either      p, then, else                ``random() < p`` picks ``then``, else ``else``
join        sep, of                      ``sep.join`` of a list of strings; as ``of``
dict        len, keys, values            n, then ``choice(keys, size=n)``, then one draw of
                                         ``values`` per drawn key (a repeated key keeps its
                                         first place and its last value)
=========== ============================ ====================================================

Every bad spec raises :class:`~rewardkit.errors.InputError` naming the field (``args[0].of.lo``)
and what is accepted; lengths, alphabets and key lists are at most 1000, one draw of a spec
(and a const value) at most 100,000 values.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError

__all__ = ["KINDS", "Spec", "draw", "draw_args", "parse_args", "parse_spec"]

INT64_MAX = 2**63 - 1
MAX_LEN = 1000  # a drawn list, string or matrix side holds at most this many elements
MAX_SPEC_DEPTH = 16
MAX_VALUES = 100_000  # elements one draw of one argument may hold (nested lists multiply)


@dataclass(frozen=True)
class Spec:
    """One parsed spec: its kind, its scalar fields and its child specs. ``type`` is what it
    produces: "int", "str", "dict", "list[<element type>]" or "any"."""

    kind: str
    fields: tuple[tuple[str, Any], ...]
    children: tuple[tuple[str, Spec], ...]
    type: str
    size: int  # an upper bound on the elements (ints, letters, keys) one draw produces

    def get(self, name: str) -> Any:
        return dict(self.fields)[name]

    def child(self, name: str) -> Spec:
        return dict(self.children)[name]


def draw(spec: Spec, rng: np.random.Generator) -> Any:
    """One value of ``spec``, consuming ``rng`` as the module's table says."""
    return _DRAW[spec.kind](spec, rng)


def draw_args(specs: Sequence[Spec], rng: np.random.Generator) -> tuple[Any, ...]:
    """One argument tuple: the specs drawn left to right."""
    return tuple(draw(s, rng) for s in specs)


def _ints(lo: int, hi: int, n: int, rng: np.random.Generator) -> list[int]:
    return [int(v) for v in rng.integers(lo, hi + 1, size=n)]


def _draw_list(s: Spec, rng: np.random.Generator) -> list[Any]:
    a, b = s.get("len")
    n = int(rng.integers(a, b + 1))
    of = s.child("of")
    if of.kind == "int":
        return _ints(of.get("lo"), of.get("hi"), n, rng)
    return [draw(of, rng) for _ in range(n)]


def _draw_str(s: Spec, rng: np.random.Generator) -> str:
    a, b = s.get("len")
    return "".join(rng.choice(list(s.get("alphabet")), size=int(rng.integers(a, b + 1))))


def _draw_matrix(s: Spec, rng: np.random.Generator) -> list[list[int]]:
    (ra, rb), (ca, cb) = s.get("rows"), s.get("cols")
    n_rows, n_cols = int(rng.integers(ra, rb + 1)), int(rng.integers(ca, cb + 1))
    of = s.child("of")
    return [_ints(of.get("lo"), of.get("hi"), n_cols, rng) for _ in range(n_rows)]


def _draw_scaled(s: Spec, rng: np.random.Generator) -> list[int]:
    xs, by = draw(s.child("of"), rng), s.child("by")
    return [x * draw(by, rng) for x in xs]


def _draw_palindrome(s: Spec, rng: np.random.Generator) -> str:
    w = draw(s.child("half"), rng)
    return str(w + w[::-1][int(rng.integers(0, 2)) :])


def _draw_either(s: Spec, rng: np.random.Generator) -> Any:
    return draw(s.child("then") if rng.random() < s.get("p") else s.child("else"), rng)


def _draw_dict(s: Spec, rng: np.random.Generator) -> dict[str, Any]:
    a, b = s.get("len")
    keys = rng.choice(list(s.get("keys")), size=int(rng.integers(a, b + 1)))
    values = s.child("values")
    return {str(k): draw(values, rng) for k in keys}


_DRAW: dict[str, Callable[[Spec, np.random.Generator], Any]] = {
    "int": lambda s, rng: int(rng.integers(s.get("lo"), s.get("hi") + 1)),
    "const": lambda s, rng: _thaw(s.get("value")),
    "list": _draw_list,
    "str": _draw_str,
    "matrix": _draw_matrix,
    "sorted": lambda s, rng: sorted(draw(s.child("of"), rng)),
    "scaled": _draw_scaled,
    "palindrome": _draw_palindrome,
    "either": _draw_either,
    "join": lambda s, rng: s.get("sep").join(draw(s.child("of"), rng)),
    "dict": _draw_dict,
}

# kind → (scalar fields, child-spec fields), every one required; what the kind accepts.
KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...], str]] = {
    "int": (("lo", "hi"), (), "lo, hi: integers with lo <= hi"),
    "const": (("value",), (), "value: a finite int or float, a str, a bool or an array of them"),
    "list": (("len",), ("of",), "len = [a, b] with 0 <= a <= b, of: a spec"),
    "str": (("len", "alphabet"), (), "len = [a, b], alphabet: a non-empty string"),
    "matrix": (("rows", "cols"), ("of",), "rows, cols = [a, b], of: an int spec"),
    "sorted": ((), ("of",), "of: a spec giving a list of ints, floats, strings or such lists"),
    "scaled": ((), ("of", "by"), "of: a spec giving a list of ints, by: an int spec"),
    "palindrome": ((), ("half",), "half: a str spec"),
    "either": (("p",), ("then", "else"), "p in [0, 1], then and else: specs"),
    "join": (("sep",), ("of",), "sep: a string, of: a spec giving a list of strings"),
    "dict": (("len", "keys"), ("values",), "len = [a, b], keys: strings, values: a spec"),
}


def _thaw(value: Any) -> Any:
    return [_thaw(v) for v in value] if isinstance(value, tuple) else value


def parse_args(
    obj: Any, *, field: str, fail: Callable[[str, str], Exception] | None = None
) -> tuple[Spec, ...]:
    """Parse the ``args`` array of a task: one spec per argument (an empty array: no args)."""
    err = fail or _input_error
    if not isinstance(obj, list):
        raise err(field, f"expected an array of specs, one per argument; got {obj!r:.60}")
    return tuple(parse_spec(s, field=f"{field}[{i}]", fail=fail) for i, s in enumerate(obj))


def parse_spec(
    obj: Any, *, field: str, fail: Callable[[str, str], Exception] | None = None, _depth: int = 0
) -> Spec:
    """Check one spec table and return it parsed. ``fail(field, message)`` builds the error
    (default: an InputError naming the field); the message says what is accepted."""
    err = fail or _input_error
    kinds = ", ".join(KINDS)
    if _depth > MAX_SPEC_DEPTH:
        raise err(field, f"specs nested more than {MAX_SPEC_DEPTH} deep")
    if not isinstance(obj, dict):
        raise err(field, f"expected a spec table with a 'kind' ({kinds}); got {obj!r:.60}")
    kind = obj.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        what = "missing" if "kind" not in obj else f"unknown kind {kind!r:.40}"
        raise err(f"{field}.kind", f"{what}; expected one of {kinds}")
    scalars, nested, accepted = KINDS[kind]
    unknown = sorted(set(obj) - {"kind", *scalars, *nested})
    if unknown:
        raise err(f"{field}.{unknown[0]}", f"kind {kind!r} has no field {unknown[0]!r}; {accepted}")
    for name in (*scalars, *nested):
        if name not in obj:
            raise err(f"{field}.{name}", f"missing; kind {kind!r} needs {accepted}")
    children = {
        name: parse_spec(obj[name], field=f"{field}.{name}", fail=fail, _depth=_depth + 1)
        for name in nested
    }
    fields = {name: obj[name] for name in scalars}
    out_type = _CHECK[kind](fields, children, lambda f, m: err(f"{field}.{f}", f"{m}; {accepted}"))
    size = _size(kind, fields, children)
    if size > MAX_VALUES:
        raise err(field, f"one draw can hold up to {size:.3g} values; at most {MAX_VALUES}")
    frozen = tuple(sorted((k, _freeze(v)) for k, v in fields.items()))
    return Spec(kind, frozen, tuple(children.items()), out_type, size)


def _size(kind: str, fields: dict[str, Any], ch: dict[str, Spec]) -> int:
    n = fields["len"][1] if "len" in fields else 1
    if kind == "matrix":
        return max(1, int(fields["rows"][1]) * int(fields["cols"][1]))
    if kind == "scaled":
        return ch["of"].size * (1 + ch["by"].size)
    if kind == "palindrome":
        return 2 * ch["half"].size
    if kind == "either":
        return max(ch["then"].size, ch["else"].size)
    inner = max((c.size for c in ch.values()), default=1)
    return max(1, int(n)) * inner


def _input_error(field: str, message: str) -> Exception:
    return InputError(message, field=field)


def _freeze(value: Any) -> Any:
    return tuple(_freeze(v) for v in value) if isinstance(value, list) else value


Fail = Callable[[str, str], Exception]


def _int(fields: dict[str, Any], name: str, fail: Fail, lo: int = -INT64_MAX) -> int:
    v = fields[name]
    if isinstance(v, bool) or not isinstance(v, int):
        raise fail(name, f"expected an int; got {v!r:.60}")
    if not lo <= v < INT64_MAX:
        raise fail(name, f"{_short_int(v)} is outside [{lo}, 2**63 - 1)")
    return v


def _short_int(v: int) -> str:
    """An int for a message: as written, or its first digits and its length when long (a
    400-digit int cannot be formatted as a float)."""
    text = str(v)
    return text if len(text) <= 24 else f"{text[:12]}... ({len(text.lstrip('-'))} digits)"


def _range(fields: dict[str, Any], name: str, fail: Fail) -> None:
    v = fields[name]
    ok = isinstance(v, list) and len(v) == 2
    if not ok or any(isinstance(x, bool) or not isinstance(x, int) for x in v):
        raise fail(name, f"expected [a, b], two ints; got {v!r:.60}")
    if not 0 <= v[0] <= v[1] <= MAX_LEN:
        got = ", ".join(_short_int(x) for x in v)
        raise fail(name, f"expected 0 <= a <= b <= {MAX_LEN}; got [{got}]")


def _str(fields: dict[str, Any], name: str, fail: Fail, *, empty: bool = True) -> str:
    v = fields[name]
    if not isinstance(v, str) or (not empty and not v):
        raise fail(name, f"expected a {'' if empty else 'non-empty '}string; got {v!r:.60}")
    if len(v) > MAX_LEN:
        raise fail(name, f"{len(v)} characters; at most {MAX_LEN}")
    return v


def _child(children: dict[str, Spec], name: str, want: str, fail: Fail) -> str:
    """The type of child ``name``, which must give ``want`` ("list": a list of anything)."""
    got = children[name].type
    if not (got == want or (want == "list" and got.startswith("list"))):
        raise fail(name, f"expected a spec giving {want}; got kind {children[name].kind!r} ({got})")
    return got


def _check_int(fields: dict[str, Any], ch: dict[str, Spec], fail: Fail) -> str:
    if _int(fields, "lo", fail) > _int(fields, "hi", fail):
        raise fail("lo", f"lo = {fields['lo']} is greater than hi = {fields['hi']}")
    return "int"


def _value_type(v: Any) -> str | None:
    """The type a const value produces, or None when it is not accepted."""
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int" if abs(v) < INT64_MAX else None
    if isinstance(v, float):
        return "float" if math.isfinite(v) else None
    if isinstance(v, str):
        return "str"
    if isinstance(v, list):
        inner = {_value_type(x) for x in v}
        if None in inner:
            return None
        return f"list[{inner.pop()}]" if len(inner) == 1 else "list[any]"
    return None


def _check_const(fields: dict[str, Any], ch: dict[str, Spec], fail: Fail) -> str:
    t = _value_type(fields["value"])
    if t is None:
        raise fail("value", f"not accepted: {fields['value']!r:.60}")
    if _const_size(fields["value"]) > MAX_VALUES:
        raise fail("value", f"holds more than {MAX_VALUES} values or characters")
    return t


def _const_size(v: Any) -> int:
    """Elements (and characters of strings) in a const value."""
    if isinstance(v, list):
        return 1 + sum(_const_size(x) for x in v)
    return len(v) if isinstance(v, str) else 1


def _check_list(fields: dict[str, Any], ch: dict[str, Spec], fail: Fail) -> str:
    _range(fields, "len", fail)
    return f"list[{ch['of'].type}]"


def _check_str(fields: dict[str, Any], ch: dict[str, Spec], fail: Fail) -> str:
    _range(fields, "len", fail)
    _str(fields, "alphabet", fail, empty=False)
    return "str"


def _check_matrix(fields: dict[str, Any], ch: dict[str, Spec], fail: Fail) -> str:
    _range(fields, "rows", fail)
    _range(fields, "cols", fail)
    if ch["of"].kind != "int":
        raise fail("of", f"expected an int spec; got kind {ch['of'].kind!r}")
    return "list[list[int]]"


def _check_scaled(fields: dict[str, Any], ch: dict[str, Spec], fail: Fail) -> str:
    _child(ch, "of", "list[int]", fail)
    _child(ch, "by", "int", fail)
    return "list[int]"


def _orderable(t: str) -> bool:
    """Values of type ``t`` can be compared with each other (``sorted`` will not raise)."""
    return t in ("int", "float", "bool", "str") or (
        t.startswith("list[") and _orderable(t[len("list[") : -1])
    )


def _check_sorted(fields: dict[str, Any], ch: dict[str, Spec], fail: Fail) -> str:
    t = _child(ch, "of", "list", fail)
    if not _orderable(t[len("list[") : -1]):
        raise fail("of", f"its elements ({t}) cannot be ordered: give a list of one type")
    return t


def _check_either(fields: dict[str, Any], ch: dict[str, Spec], fail: Fail) -> str:
    p = fields["p"]
    if isinstance(p, bool) or not isinstance(p, int | float) or not 0 <= p <= 1:
        raise fail("p", f"expected a number in [0, 1]; got {p!r:.60}")
    return ch["then"].type if ch["then"].type == ch["else"].type else "any"


def _check_join(fields: dict[str, Any], ch: dict[str, Spec], fail: Fail) -> str:
    _str(fields, "sep", fail)
    _child(ch, "of", "list[str]", fail)
    return "str"


def _check_dict(fields: dict[str, Any], ch: dict[str, Spec], fail: Fail) -> str:
    _range(fields, "len", fail)
    keys = fields["keys"]
    if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
        raise fail("keys", f"expected a non-empty array of strings; got {keys!r:.60}")
    if len(keys) > MAX_LEN:
        raise fail("keys", f"{len(keys)} keys; at most {MAX_LEN}")
    return "dict"


_CHECK: dict[str, Callable[[dict[str, Any], dict[str, Spec], Fail], str]] = {
    "int": _check_int,
    "const": _check_const,
    "list": _check_list,
    "str": _check_str,
    "matrix": _check_matrix,
    "sorted": _check_sorted,
    "scaled": _check_scaled,
    "palindrome": lambda f, ch, fail: _child(ch, "half", "str", fail),
    "either": _check_either,
    "join": _check_join,
    "dict": _check_dict,
}
