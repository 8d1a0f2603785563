"""The sandbox process's side of integrity: raw cells checked by exact type and range, outputs
parsed at bounded cost, and values compared the way a test means them.

    cell = check_cell(raw, m, K)        # a Cell, or raises Malformed (a reason)
    tree = parse_bounded(text)          # hash-free value tree, or raises Malformed
    values_equal(actual, expected)      # plain Python values; never raises

Nothing a worker or a program sends can make this module raise anything but ``Malformed``, nor
cost more than a bounded amount per cell:

- a payload is at most ``TEXT_CAP`` characters; before ``ast.parse`` its characters, nesting
  depth, element count and unary-sign runs are checked on a copy with the string literals
  blanked out (C-speed regular expressions);
- sets and dicts are never built from a payload: they become sorted tuples of the canonical
  texts of their members / keys, so colliding hashes cost nothing;
- ``10**400`` against a float, NaN, infinities and lone surrogates are values, not errors.

Comparison (actual against expected): exact types, except that a **float expected value**
accepts an int or a float within ``|a − e| ≤ max(1e-9·max(|a|, |e|), 1e-9)`` (``math.isclose``
with rel_tol = abs_tol = 1e-9; NaN equals NaN, an infinity only itself).  An **int expected
value needs an int equal to it** (bool is not int, 1000000008.0 is not 1000000007, 3e-10 is not
0).  Dict keys and set members are identities: equal only with the same type and value at every
depth (``-0.0`` and ``0.0`` are one key, as in Python); dict values compare as values.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

from ._values import MAX_DEPTH, TEXT_CAP, Unserialisable, canon

__all__ = [
    "KINDS",
    "MAX_BRACKETS",
    "MAX_ELEMENTS",
    "TEXT_CAP",
    "Cell",
    "Malformed",
    "check_cell",
    "parse_bounded",
    "safe_text",
    "tree_equal",
    "values_equal",
]

DETAIL_CAP = 200  # characters of an exception name / crash reason
MAX_BRACKETS = 200  # nesting of brackets in a payload (CPython's parser allows 200)
MAX_ELEMENTS = 1 << 15  # commas + colons in a payload
MAX_DURATION_S = 1e7
KINDS = frozenset("VHEUTMCS")  # see _worker.py: value, hash, exception, unserialisable, …
Cell = tuple[int, int, str, float, str]  # (row, test index, kind, duration_s, payload)

_SHA_HEX = re.compile(r"[0-9a-f]{64}")
_STRING = re.compile(r"""b?'(?:[^'\\\n]|\\.)*'|b?"(?:[^"\\\n]|\\.)*\"""")
_ALLOWED = re.compile(r"[0-9A-Za-z_.,:()\[\]{} +\-]*")
_SIGN_RUN = re.compile(r"[-+]\s*[-+]")
_BRACKET = re.compile(r"[\[\](){}]")
_NAMES = {"True": True, "False": False, "None": None, "nan": math.nan, "inf": math.inf}


class Malformed(Exception):
    """A record or payload that no honest child sends; the reason is ``args[0]``."""


# ------------------------------------------------------------------------- raw cell records
def check_cell(raw: object, m: int, k: int) -> Cell:
    """``raw`` as a cell of an (m, K) table, or Malformed.  Row and column must be ``int`` (not
    bool, not float, not numpy scalars: ``a[r, True]`` would index a whole row), in range."""
    if not isinstance(raw, (tuple, list)) or type(raw) not in (tuple, list) or len(raw) != 5:
        raise Malformed("not a 5-field record")
    row: Any = raw[0]
    idx: Any = raw[1]
    kind: Any = raw[2]
    dur: Any = raw[3]
    payload: Any = raw[4]
    if type(row) is not int or not 0 <= row < m:
        raise Malformed(f"row {row!r:.40} is not an int in [0, {m})")
    if type(idx) is not int or not 0 <= idx < k:
        raise Malformed(f"test index {idx!r:.40} is not an int in [0, {k})")
    check_payload(kind, dur, payload)
    return row, idx, kind, dur, payload


def check_payload(kind: object, dur: object, payload: object) -> None:
    """Kind, duration and payload of one cell, by exact type and range (see ``check_cell``)."""
    if type(kind) is not str or kind not in KINDS:
        raise Malformed(f"kind {kind!r:.40} is not one of {''.join(sorted(KINDS))}")
    if type(dur) is not float or not 0.0 <= dur <= MAX_DURATION_S:  # NaN fails both
        raise Malformed(f"duration {dur!r:.40} is not a float in [0, {MAX_DURATION_S:g}]")
    if type(payload) is not str:
        raise Malformed(f"payload is {type(payload).__name__}, not str")
    cap = TEXT_CAP if kind == "V" else DETAIL_CAP
    if kind == "H" and not _SHA_HEX.fullmatch(payload):
        raise Malformed("hash payload is not 64 lowercase hex digits")
    if len(payload) > cap:
        raise Malformed(f"{kind} payload of {len(payload)} characters exceeds {cap}")
    if kind == "V" and not _encodable(payload):
        raise Malformed("value payload holds a lone surrogate")


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def safe_text(text: str) -> str:
    """``text`` with lone surrogates escaped, so that it always encodes as UTF-8."""
    return text if _encodable(text) else text.encode("utf-8", "backslashreplace").decode()


# ---------------------------------------------------------------------------- bounded parse
class _Members(tuple):
    """A set / frozenset as the sorted canonical texts of its members (no hashing)."""

    frozen = False


class _FrozenMembers(_Members):
    frozen = True


class _Pairs(tuple):
    """A dict as ((key text, value), …) sorted by key text (no hashing)."""


def prescan(text: str) -> None:
    """Cheap checks before ``ast.parse``: size, characters, sign runs, depth, element count."""
    if len(text) > TEXT_CAP:
        raise Malformed(f"payload of {len(text)} characters exceeds {TEXT_CAP}")
    bare = _STRING.sub("0", text)
    if not _ALLOWED.fullmatch(bare):
        raise Malformed("payload holds characters no literal has")
    if _SIGN_RUN.search(bare):
        raise Malformed("payload holds a run of signs")
    if bare.count(",") + bare.count(":") > MAX_ELEMENTS:
        raise Malformed(f"payload holds more than {MAX_ELEMENTS} elements")
    depth = 0
    for match in _BRACKET.finditer(bare):
        depth += 1 if match.group() in "([{" else -1
        if depth > MAX_BRACKETS:
            raise Malformed(f"payload nests deeper than {MAX_BRACKETS}")


def parse_bounded(text: str) -> Any:
    """A value tree of a canonical literal: plain scalars, lists and tuples as themselves, sets
    and dicts as sorted tuples keyed by canonical text.  Raises Malformed on anything else."""
    prescan(text)
    try:
        node = ast.parse(text.strip(), mode="eval").body
        return _tree(node, 0)
    except Malformed:
        raise
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError, OverflowError) as e:
        raise Malformed(f"not a literal ({type(e).__name__})") from None


def _tree(node: ast.AST, depth: int) -> Any:
    if depth > MAX_DEPTH + 2:
        raise Malformed(f"value nests deeper than {MAX_DEPTH}")
    d = depth + 1
    if isinstance(node, ast.Constant) and node.value is not Ellipsis:
        return node.value
    if isinstance(node, ast.Name) and node.id in _NAMES:
        return _NAMES[node.id]
    if isinstance(node, ast.List):
        return [_tree(e, d) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_tree(e, d) for e in node.elts)
    if isinstance(node, ast.Set):
        return _Members(sorted(key_text(_tree(e, d)) for e in node.elts))
    if isinstance(node, ast.Dict) and None not in node.keys:
        items = [(key_text(_tree(k, d)), _tree(v, d)) for k, v in zip(node.keys, node.values)]  # type: ignore[arg-type]
        return _Pairs(sorted(items, key=lambda kv: kv[0]))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _tree(node.operand, d)
        if type(v) in (int, float, complex):
            return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        a, b = _tree(node.left, d), _tree(node.right, d)
        if type(a) in (int, float) and type(b) is complex:
            return a + b if isinstance(node.op, ast.Add) else a - b
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        name, args = node.func.id, node.args
        if name == "complex" and len(args) == 2:
            re_, im = _tree(args[0], d), _tree(args[1], d)
            if type(re_) in (int, float) and type(im) in (int, float):
                return complex(re_, im)
        if name in ("set", "frozenset") and len(args) <= 1:
            inner = _tree(args[0], d) if args else ()
            if type(inner) in (list, tuple, _Members):
                keys = inner if type(inner) is _Members else [key_text(v) for v in inner]
                return (_FrozenMembers if name == "frozenset" else _Members)(sorted(keys))
    raise Malformed(f"not a literal: {type(node).__name__}")


def key_text(v: Any) -> str:
    """Canonical text of a dict key or set member: equal only for the same type and value at
    every depth (``-0.0`` is ``0.0``, as Python hashes them).  Unhashable values are Malformed."""
    t = type(v)
    if t is float:
        return "0.0" if v == 0 else canon(v)
    if t is complex:
        return "complex(" + key_text(v.real) + ", " + key_text(v.imag) + ")"
    if t is tuple:
        parts = [key_text(x) for x in v]
        return "(" + parts[0] + ",)" if len(parts) == 1 else "(" + ", ".join(parts) + ")"
    if t is _FrozenMembers:
        return "frozenset({" + ", ".join(v) + "})"
    if t in (type(None), bool, int, str, bytes):
        return canon(v)
    raise Malformed(f"unhashable {t.__name__} as a key or member")


# ------------------------------------------------------------------------------- comparison
def tree_equal(a: Any, e: Any) -> bool:
    """Actual tree ``a`` against expected tree ``e`` (rules in the module docstring)."""
    te, ta = type(e), type(a)
    if te is float:
        if ta is not float and ta is not int:
            return False
        if math.isnan(e) or math.isinf(e):
            return ta is float and (math.isnan(a) if math.isnan(e) else a == e)
        try:
            af = float(a)
        except OverflowError:  # an int beyond every float is close to no finite float
            return False
        return math.isclose(af, e, rel_tol=1e-9, abs_tol=1e-9)
    if ta is not te:
        return False
    if te is list or te is tuple:
        return len(a) == len(e) and all(tree_equal(x, y) for x, y in zip(a, e))
    if te is _Pairs:
        return (
            len(a) == len(e)
            and all(ka == ke for (ka, _), (ke, _) in zip(a, e))
            and all(tree_equal(va, ve) for (_, va), (_, ve) in zip(a, e))
        )
    if te is _Members or te is _FrozenMembers:
        return tuple(a) == tuple(e)
    if te is complex:
        return bool(a == e) or (_same_float(a.real, e.real) and _same_float(a.imag, e.imag))
    return bool(a == e)  # None, bool, int, str, bytes: same exact type


def _same_float(x: float, y: float) -> bool:
    return x == y or (math.isnan(x) and math.isnan(y))


def values_equal(actual: Any, expected: Any) -> bool:
    """Plain Python values compared as the sandbox compares outputs (module docstring); False
    when either is not a plain literal value."""
    try:
        a, e = parse_bounded(canon(actual)), parse_bounded(canon(expected))
    except (Unserialisable, Malformed, ValueError, RecursionError):  # not plain, or too big
        return False
    return tree_equal(a, e)


# ------------------------------------------------------------------------ tests' own literals
TEST_TEXT_CAP = 1 << 20  # characters of a test's input or expected literal
COLLISION_MIN = 1024  # sets / dicts at least this large are checked for shared hashes


def check_test_literal(text: str) -> None:
    """A test's literal (generated tests are adversarial too) before it is built into values:
    at most ``TEST_TEXT_CAP`` characters, and no large set or dict whose scalar members share
    few hash values (``k·(2**61 − 1)`` all hash to 0: building such a set is quadratic, here
    and in every worker).  Raises Malformed."""
    if len(text) > TEST_TEXT_CAP:
        raise Malformed(f"literal of {len(text)} characters exceeds {TEST_TEXT_CAP}")
    if len(text) < 3 * COLLISION_MIN:
        return
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return  # not a literal: the parser that follows says why
    for node in ast.walk(tree):
        members = node.elts if isinstance(node, ast.Set) else getattr(node, "keys", None)
        if not isinstance(node, (ast.Set, ast.Dict)) or members is None:
            continue
        scalars = [_scalar(m) for m in members if m is not None]
        values = [v for v in scalars if v is not None]
        if len(values) >= COLLISION_MIN:
            distinct = len({hash(v) for v in values})
            if distinct < len(values) // 2:
                raise Malformed(
                    f"{len(values)} set members / dict keys share {distinct} hash values "
                    "(a hash-collision attack)"
                )


def _scalar(node: ast.expr) -> Any:
    """The int or float a member node stands for (None for anything else)."""
    negative = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
    if negative:
        node = node.operand  # type: ignore[attr-defined]
    value: Any = node.value if isinstance(node, ast.Constant) else None
    if type(value) in (int, float):
        return -value if negative else value
    return None
