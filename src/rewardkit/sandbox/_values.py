"""Plain values as canonical text, and a literal parser that never evaluates code.

Shared by the workers (which serialise what a program returned) and the sandbox process (which
parses that text and the tests' literals).  Standard library only: the workers import it.
"""

from __future__ import annotations

import ast
import math

TYPE_CHECKING = False  # typing is not imported at run time: the zygote stays small
if TYPE_CHECKING:
    from typing import Any

__all__ = ["MAX_DEPTH", "TEXT_CAP", "Unserialisable", "canon", "parse_literal"]

MAX_DEPTH = 100  # nesting of a serialised value (the parser accepts 200)
TEXT_CAP = 1 << 16  # characters of a value sent as text; larger values travel as a sha256


class Unserialisable(Exception):
    """The return value holds a type that is not a plain literal (or nests too deep)."""


_SCALARS = (type(None), bool, int, str, bytes)


def canon(x: Any, depth: int = 0, *, ordered: bool = False) -> str:
    """Canonical literal text of a plain value: exact types only (a subclass or an object with
    its own ``__eq__`` / ``__repr__`` is Unserialisable), sets sorted, dict items sorted —
    or, with ``ordered=True`` (a test's arguments), in their insertion order, which a program
    can observe (``list(d)``)."""
    t = type(x)
    if depth > MAX_DEPTH:
        raise Unserialisable("nesting deeper than 100")
    if t is float:
        f: float = x
        if f != f:
            return "nan"
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return float.__repr__(f)
    if t is complex:  # repr loses the sign of a zero real part: write both parts exactly
        return "complex(" + canon(x.real) + ", " + canon(x.imag) + ")"
    if t in _SCALARS:
        return t.__repr__(x)  # type: ignore[call-arg]
    d = depth + 1
    if t is list:
        return "[" + ", ".join([canon(v, d, ordered=ordered) for v in x]) + "]"
    if t is tuple:
        parts = [canon(v, d, ordered=ordered) for v in x]
        return "(" + parts[0] + ",)" if len(parts) == 1 else "(" + ", ".join(parts) + ")"
    if t is dict:
        items = [(canon(k, d, ordered=ordered), canon(v, d, ordered=ordered)) for k, v in x.items()]
        if not ordered:
            items.sort()
        return "{" + ", ".join([k + ": " + v for k, v in items]) + "}"
    if t is set or t is frozenset:
        body = ", ".join(sorted([canon(v, d) for v in x]))
        if t is set:
            return "{" + body + "}" if body else "set()"
        return "frozenset({" + body + "})" if body else "frozenset()"
    raise Unserialisable(t.__name__)


def parse_literal(text: str) -> Any:
    """Parse a Python literal (plus ``nan``, ``inf``, ``set()``, ``frozenset(...)`` and
    ``complex(re, im)``) without evaluating code.

    Raises ValueError / SyntaxError / RecursionError / MemoryError on anything else."""
    return _lit(ast.parse(text.strip(), mode="eval").body)


def _lit(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and node.value is not Ellipsis:
        return node.value
    if isinstance(node, ast.Tuple):
        return tuple(_lit(e) for e in node.elts)
    if isinstance(node, ast.List):
        return [_lit(e) for e in node.elts]
    if isinstance(node, ast.Set):
        return {_lit(e) for e in node.elts}
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {_lit(k): _lit(v) for k, v in zip(node.keys, node.values)}  # type: ignore[arg-type]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _lit(node.operand)
        if type(v) in (int, float, complex):
            return -v if isinstance(node.op, ast.USub) else +v
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        a, b = _lit(node.left), _lit(node.right)  # complex literals: 1+2j
        if type(a) in (int, float) and type(b) is complex:
            return a + b if isinstance(node.op, ast.Add) else a - b
    if isinstance(node, ast.Name) and node.id in ("nan", "inf"):
        return math.nan if node.id == "nan" else math.inf
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "complex"
        and not node.keywords
        and len(node.args) == 2
    ):
        real, imag = _lit(node.args[0]), _lit(node.args[1])
        if type(real) in (int, float) and type(imag) in (int, float):
            return complex(real, imag)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("set", "frozenset")
        and not node.keywords
        and len(node.args) <= 1
    ):
        items = _lit(node.args[0]) if node.args else ()
        if type(items) in (list, tuple, set):
            return set(items) if node.func.id == "set" else frozenset(items)
    raise ValueError(f"not a literal: {ast.dump(node)[:60]}")
