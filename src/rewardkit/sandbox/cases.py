"""The test formats: function calls with literal arguments, standard-input tests, and
assert-style test code parsed into literal cases.

    TestCase(input="([1, 2], 3)", expected="4")                       # f(*input) == expected
    StdioTest(stdin="3\\n1 2 3\\n", stdout="6\\n", mode="tokens")     # run as a script
    parse_asserts(test_code, entry_point="f")   # → [TestCase | InvalidTest, ...]

``parse_asserts`` reads test code with ``ast`` and never runs it.  It accepts
``assert f(<literals>) == <literal>`` (either side), ``assert f(...) is True/False/None``,
``assert f(...)`` (→ expected ``True``) and ``assert not f(...)`` (→ ``False``), at module level
with ``f`` the entry point, and inside ``def check(candidate)`` with ``candidate`` as the
function (the HumanEval form).  As Python runs the code: the module's asserts in order (a
module-level ``check(f)`` runs the ``check`` defined last before it), then those of the last
``def check``, which the harness calls.  What a literal case cannot say is an InvalidTest, not
another case: a ``check`` with decorators, defaults or annotations, an expected NaN, a
repeated mutable item (``[[0] * 2] * 2`` is one list twice), and an import that rebinds a
name the cases read (then the whole code is one InvalidTest).  ``assert True`` lines,
imports, docstrings and a trailing message are ignored.  ``is`` takes ``True``, ``False`` and
``None`` only (identity, not equality: ``f(x) is 0.0`` is not ``f(x) == 0.0``).  Arithmetic
on literals is folded (``[0] * 5``, ``2 ** 10``, ``'ab' + 'c'``) within bounds: 10,000
elements, characters or bits per operation; 100,000 elements and characters for all the
operations of one argument or expected value, a repeated item counted each time
(``((0,) * 1000,) * 1000`` is a million); 1,000,000 for all the literals of the code.
Anything else (a loop, an assignment, a helper call, a computed argument or expected value, a
tolerance expression, a literal past the bounds) becomes an :class:`InvalidTest` naming the
line and why: an INVALID_TEST column, never a silently dropped test.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .._json import JsonMixin
from ..errors import ConfigError
from ._stdio import MODES
from ._values import Unserialisable, canon, parse_literal

__all__ = ["InvalidTest", "StdioTest", "TestCase", "parse_asserts"]


@dataclass(frozen=True)
class TestCase(JsonMixin):
    """One test: ``input`` is the literal of the argument tuple, ``expected`` the literal of the
    return value, e.g. ``TestCase(input="([1, 2], 3)", expected="4")``."""

    __test__ = False  # not a pytest class

    input: str
    expected: str

    @classmethod
    def from_values(cls, args: list | tuple, expected: object) -> TestCase:
        """The case from Python values rather than their literals: the arguments as a list or
        tuple, the expected return value.  For data that stores them as JSON, as APPS, TACO and
        LiveCodeBench do: ``TestCase.from_values(json.loads(args_json), json.loads(out_json))``.
        Dict arguments keep their order."""
        if type(args) not in (list, tuple):
            raise ConfigError(
                "The 'args' parameter of TestCase.from_values is the list or tuple of the "
                f"arguments. Got {type(args).__name__}."
            )
        try:
            return cls(canon(tuple(args), ordered=True), canon(expected))
        except ValueError as e:  # an int too long to print (Python's limit)
            raise ConfigError(f"TestCase.from_values: {e.args[0].split(';')[0]}") from None
        except Unserialisable as e:
            raise ConfigError(
                "TestCase.from_values takes plain values (None, bool, int, float, complex, str, "
                f"bytes, and lists, tuples, dicts and sets of them, at most 100 deep): {e}"
            ) from None


@dataclass(frozen=True)
class StdioTest(JsonMixin):
    """A standard-input test: the program runs as a script with ``stdin`` on its standard
    input; what it prints is compared with ``stdout`` under ``mode`` ("exact", "lines",
    "tokens" or "float"; ``tol`` is the float mode's relative and absolute tolerance)."""

    __test__ = False

    stdin: str
    stdout: str
    mode: str = "tokens"
    tol: float = 1e-6

    def __post_init__(self) -> None:
        if not isinstance(self.stdin, str) or not isinstance(self.stdout, str):
            raise ConfigError(
                "StdioTest needs str 'stdin' and 'stdout'. "
                f"Got {type(self.stdin).__name__} and {type(self.stdout).__name__}."
            )
        if self.mode not in MODES:
            raise ConfigError(
                f"The 'mode' parameter of StdioTest must be one of {', '.join(MODES)}. "
                f"Got {self.mode!r}."
            )
        tol = self.tol
        if type(tol) not in (int, float) or not 0 <= tol < 1:
            raise ConfigError(f"The 'tol' parameter of StdioTest must be in [0, 1). Got {tol!r}.")


@dataclass(frozen=True)
class InvalidTest(JsonMixin):
    """A test that could not be turned into a literal case: ``source`` (the code as written)
    and ``reason``.  ``Sandbox.run`` reports its column as INVALID_TEST with the reason."""

    __test__ = False

    source: str
    reason: str


def parse_asserts(code: str, entry_point: str) -> list[TestCase | InvalidTest]:
    """Literal cases of assert-style test ``code`` for the function ``entry_point`` (module
    docstring).  A syntax error in ``code`` gives one InvalidTest."""
    try:
        module = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        return [InvalidTest(code[:200], f"test code does not parse ({type(e).__name__})")]
    src = _Source(code)
    rebound = _rebinding_import(module, entry_point, src)
    if rebound is not None:
        return [rebound]
    checks = [n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
    # As Python runs the code: the module's statements in order (a ``check(f)`` among them runs
    # the ``check`` defined last before it), then the harness's ``check(candidate)``, which runs
    # the last definition (an earlier one is replaced before the harness calls it).
    budget = [CODE_TOTAL]  # what the folding of all the code's literals may still produce
    out: list[TestCase | InvalidTest] = []
    current: ast.FunctionDef | None = None
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and any(node is c for c in checks):
            current = node
        elif _runs_check(node, entry_point):
            if current is None:
                source = src.segment(node) or "check(...)"
                out.append(InvalidTest(source, f"line {node.lineno}: check is not defined yet"))
            elif current is not checks[-1]:
                out += _check_cases(current, src, budget)  # that definition runs here
            # a call of the last definition: the harness's own call (below) stands for it
        else:
            out += _statements([node], entry_point, src, budget)
    if checks:
        out += _check_cases(checks[-1], src, budget)
    return out


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")  # as Python's tokenizer counts lines


class _Source:
    """The test code split into lines once.  ``ast.get_source_segment`` splits the whole code
    again at every call: parsing was quadratic in the statements (outside attack: 4,000
    asserts, 68 KB, took 37 s)."""

    def __init__(self, code: str) -> None:
        self.lines = _LINE.findall(code)
        self.encoded: dict[int, bytes] = {}  # column offsets count UTF-8 bytes

    def _line(self, k: int) -> bytes:
        got = self.encoded.get(k)
        if got is None:
            got = self.encoded[k] = self.lines[k].encode("utf-8", "surrogatepass")
        return got

    def segment(self, node: ast.AST, n: int = 300) -> str:
        """At most ``n`` characters of ``node``'s code ("" where it has no position)."""
        pos = [getattr(node, k, None) for k in ("lineno", "end_lineno", "col_offset")]
        pos.append(getattr(node, "end_col_offset", None))
        if any(type(v) is not int for v in pos) or pos[1] > len(self.lines):  # type: ignore[operator]
            return ""
        first, end, lo, hi = (int(v) for v in pos)  # type: ignore[arg-type]
        parts, got = [], 0
        for k in range(first - 1, end):
            line = self._line(k)
            a = lo if k == first - 1 else 0
            b = hi if k == end - 1 else len(line)
            piece = line[a : min(b, a + 4 * n)].decode("utf-8", "ignore")  # ≤ 4 bytes a char
            parts.append(piece)
            got += len(piece)
            if got >= n:
                break
        return "".join(parts)[:n]


# Names the cases read as Python's own: an import that rebinds one changes what they mean.
_READ_NAMES = ("set", "frozenset", "complex", "check")


def _rebinding_import(module: ast.Module, entry_point: str, src: _Source) -> InvalidTest | None:
    """An import (anywhere in the code) that binds the entry point or a name the cases read
    (``from builtins import list as set``), or any name at all (``from m import *``): the
    asserts then mean what a literal case cannot say, and the whole code is one InvalidTest."""
    read = {*_READ_NAMES, entry_point}
    for top in module.body:  # check's parameter (``candidate``): rebound, it is not the program
        if isinstance(top, ast.FunctionDef) and top.name == "check":
            read.update(p.arg for p in top.args.posonlyargs + top.args.args)
    for node in ast.walk(module):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        bound = [a.asname or a.name.split(".")[0] for a in node.names]
        hit = [b for b in bound if b == "*" or b in read]
        if hit:
            source = src.segment(node) or "import"
            what = "may rebind any name" if hit[0] == "*" else f"rebinds `{hit[0]}`"
            return InvalidTest(
                source,
                f"line {node.lineno}: the import {what}, which the asserts use as Python's "
                "own: the test code cannot be read as literal cases",
            )
    return None


def _check_cases(
    fn: ast.FunctionDef, src: _Source, budget: list[int]
) -> list[TestCase | InvalidTest]:
    """The cases of a ``def check(candidate)``, as it runs when called."""
    a, where = fn.args, f"line {fn.lineno}"
    params = a.posonlyargs + a.args
    if len(params) != 1 or a.vararg or a.kwonlyargs or a.kwarg:
        return [InvalidTest(f"def check({_show(a)})"[:300], f"{where}: check() takes one argument")]
    if fn.decorator_list or a.defaults or fn.returns or params[0].annotation:
        return [
            InvalidTest(
                f"def check({_show(a)})"[:300],
                f"{where}: check's decorators, defaults or annotations run when it is defined",
            )
        ]
    return _statements(fn.body, params[0].arg, src, budget)


def _runs_check(node: ast.stmt, entry_point: str) -> bool:
    """``check(<entry point>)`` at module level: the call that runs the asserts parsed."""
    return (
        isinstance(node, ast.Expr)
        and _calls(node.value, "check")
        and len(node.value.args) == 1  # type: ignore[attr-defined]
        and not node.value.keywords  # type: ignore[attr-defined]
        and isinstance(node.value.args[0], ast.Name)  # type: ignore[attr-defined]
        and node.value.args[0].id == entry_point  # type: ignore[attr-defined]
    )


def _statements(
    body: list[ast.stmt], name: str, src: _Source, budget: list[int]
) -> list[TestCase | InvalidTest]:
    out: list[TestCase | InvalidTest] = []
    for node in body:
        where = f"line {node.lineno}"
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring or a bare constant
        if _is_metadata(node):
            continue
        source = src.segment(node) or _show(node, 300)
        if not isinstance(node, ast.Assert):
            kind = _KINDS.get(type(node).__name__, f"a {type(node).__name__} statement")
            out.append(InvalidTest(source, f"{where}: {kind} is not a literal case"))
            continue
        if isinstance(node.test, ast.Constant) and node.test.value is True:
            continue  # `assert True, "..."`: checks nothing
        try:
            out.append(_case(node.test, name, budget))
        except _NotLiteral as e:
            out.append(InvalidTest(source, f"{where}: {e.args[0]}"))
    return out


_KINDS = {
    "For": "a for loop",
    "While": "a while loop",
    "Assign": "an assignment",
    "AugAssign": "an assignment",
    "AnnAssign": "an assignment",
    "Expr": "an expression statement",
    "If": "an if statement",
    "With": "a with statement",
    "Try": "a try statement",
    "FunctionDef": "a function definition",
}


def _is_metadata(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id == "METADATA"
    )


class _NotLiteral(Exception):
    pass


def _show(node: ast.AST, n: int = 60) -> str:
    """At most ``n`` characters of ``node``'s code (of a chain too deep to print: its kind)."""
    try:
        return ast.unparse(node)[:n]
    except (RecursionError, MemoryError):
        return f"<{type(node).__name__} nested too deep to print>"
    except ValueError:  # an int constant past Python's 4,300 digits (0xfff… parses, not prints)
        return f"<{type(node).__name__} with a number too long to print>"


_SINGLE = (True, False, None)  # `is` compares identity: only these constants are literals


def _single(node: ast.expr) -> bool:
    """``True``, ``False`` or ``None`` itself (by identity: ``0.0 in _SINGLE`` holds, since
    ``0.0 == False``, and ``f(x) is 0.0`` is not ``f(x) == 0.0``)."""
    return isinstance(node, ast.Constant) and any(node.value is c for c in _SINGLE)


def _case(test: ast.expr, name: str, budget: list[int]) -> TestCase:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _call_case(test.operand, name, False, budget)
    if isinstance(test, ast.Call):
        return _call_case(test, name, True, budget)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op, left, right = test.ops[0], test.left, test.comparators[0]
        if isinstance(op, ast.Eq):
            if _calls(right, name) and not _calls(left, name):
                left, right = right, left
            return _call_case(left, name, _expected(right, budget), budget)
        if isinstance(op, ast.Is) and _single(right):
            assert isinstance(right, ast.Constant)
            return _call_case(left, name, right.value, budget)
        if isinstance(op, ast.Is):
            raise _NotLiteral("`is` compares identity: only `is True`, `is False`, `is None`")
        raise _NotLiteral(f"the comparison {type(op).__name__} is not == (or `is` a constant)")
    raise _NotLiteral(f"`{_show(test)}` is not `{name}(...) == literal`")


def _calls(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name


def _call_case(call: ast.expr, name: str, expected: object, budget: list[int]) -> TestCase:
    if not _calls(call, name):
        raise _NotLiteral(f"`{_show(call)}` is not a call of {name}")
    assert isinstance(call, ast.Call)
    if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        raise _NotLiteral("keyword or starred arguments")
    args = tuple(_literal(a, "argument", budget) for a in call.args)
    try:
        return TestCase(canon(args, ordered=True), canon(expected))
    except Exception as e:  # Unserialisable, ValueError (an int over 4300 digits)
        raise _NotLiteral(f"not a plain value ({type(e).__name__})") from None


def _expected(node: ast.expr, budget: list[int]) -> object:
    value = _literal(node, "expected value", budget)
    if _has_nan(value):
        raise _NotLiteral(
            f"expected value `{_show(node)}` holds a NaN, which equals nothing: in Python the "
            "assert fails whatever the function returns"
        )
    return value


def _has_nan(value: object) -> bool:
    return any(type(v) in (float, complex) and v != v for v in _nodes(value))


def _nodes(value: object) -> Iterator[object]:
    """``value`` and everything in it, a repeated item each time it appears (dict keys and
    values both)."""
    stack = [value]
    while stack:
        v = stack.pop()
        yield v
        t = type(v)
        if t in (list, tuple, set, frozenset):
            stack.extend(v)  # type: ignore[arg-type]
        elif t is dict:
            stack.extend(v.keys())  # type: ignore[attr-defined]
            stack.extend(v.values())  # type: ignore[attr-defined]


def _literal(node: ast.expr, what: str, budget: list[int]) -> object:
    """The value of a literal, folding arithmetic on literals (``3 * 19``, ``'ab' + 'c'``,
    ``0 ** 0``) with bounded sizes; names, calls of anything but ``set`` / ``frozenset`` /
    ``complex`` and every other expression are not literals."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id in ("nan", "inf"):
            raise _NotLiteral(f"{what} `{_show(node)}` names a variable")
    start = min(FOLD_TOTAL, budget[0])
    left = [start]
    try:
        value = _fold(node, left)
    except _TooLarge:
        bound = (
            f"{FOLD_TOTAL:,} elements and characters"
            if start == FOLD_TOTAL
            else f"what is left of {CODE_TOTAL:,} for all the test code's literals"
        )
        raise _NotLiteral(f"{what} `{_show(node)}` folds to more than {bound}") from None
    except _Aliased:
        raise _NotLiteral(
            f"{what} `{_show(node)}` repeats a mutable item: in Python the copies are one "
            "object (`[[0] * 2] * 2` is one list twice), which a literal case cannot carry"
        ) from None
    except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError, ArithmeticError):
        raise _NotLiteral(f"{what} `{_show(node)}` is not a literal") from None
    budget[0] -= start - left[0]
    return value


FOLD_CAP = 10_000  # elements / characters / bits one folded operation may produce
# Elements and characters all the operations of one literal may produce together, counting a
# repeated item each time it is repeated: ``[[0] * 1000] * 1000`` is a million, although it
# holds two lists (every later step, comparing, hashing, printing, walks the million).
FOLD_TOTAL = 100_000
# The same for all the literals of one test code: 200 asserts of 90,000 each made 54 MB of case
# text from 6 KB of code (an outside attack).
CODE_TOTAL = 1_000_000


class _TooLarge(ValueError):
    pass


class _Aliased(ValueError):
    pass


def _holds_mutable(seq: object) -> bool:
    stack = [seq]
    while stack:
        v = stack.pop()
        if type(v) in (list, dict, set):
            return True
        if type(v) is tuple:
            stack.extend(v)
    return False


def _fold(node: ast.expr, left: list[int]) -> object:
    """The folded value; ``left[0]`` is what the operations may still produce (FOLD_TOTAL)."""
    if isinstance(node, ast.Tuple):
        return tuple(_fold(e, left) for e in node.elts)
    if isinstance(node, ast.List):
        return [_fold(e, left) for e in node.elts]
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {_fold(k, left): _fold(v, left) for k, v in zip(node.keys, node.values)}  # type: ignore[arg-type]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _fold(node.operand, left)
        if type(v) in (int, float, complex):
            return -v if isinstance(node.op, ast.USub) else v  # type: ignore[operator]
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        out = _binop(node.op, _fold(node.left, left), _fold(node.right, left))
        if type(out) in (str, bytes, list, tuple):
            left[0] -= _size(out, left[0])
            if left[0] < 0:
                raise _TooLarge
        return out
    return parse_literal(ast.unparse(node))  # constants, sets, set() / frozenset() / complex()


def _size(value: object, cap: int) -> int:
    """Elements and characters of ``value``, a repeated item counted each time it appears (as
    walking it sees it); the count stops once past ``cap``."""
    n = 0
    for v in _nodes(value):
        n += len(v) if type(v) in (str, bytes) else 1  # type: ignore[arg-type]
        if n > cap:
            break
    return n


_OPS = {ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow}
_NUM = (int, float)


def _binop(op: ast.operator, a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta in _NUM and tb in _NUM:
        x, y = a, b  # ints and floats (bool excluded: type, not isinstance)
        if isinstance(op, ast.Pow):
            if ta is int and tb is int and abs(x) > 1 and y * max(x.bit_length(), 1) > FOLD_CAP:
                raise ValueError("power too large")
            return x**y
        out = {
            ast.Add: lambda: x + y,
            ast.Sub: lambda: x - y,
            ast.Mult: lambda: x * y,
            ast.Div: lambda: x / y,
            ast.FloorDiv: lambda: x // y,
            ast.Mod: lambda: x % y,
        }[type(op)]()
        if type(out) is int and out.bit_length() > FOLD_CAP:  # a chain of products grows it
            raise ValueError("integer too large")
        return out
    if isinstance(op, ast.Add) and ta is tb and ta in (str, bytes, list, tuple):
        if len(a) + len(b) > FOLD_CAP:
            raise ValueError("sequence too long")
        return a + b
    if isinstance(op, ast.Mult) and {ta, tb} & {str, bytes, list, tuple} and int in (ta, tb):
        seq, n = (a, b) if tb is int else (b, a)
        if len(seq) * max(n, 0) > FOLD_CAP:
            raise ValueError("sequence too long")
        if n > 1 and any(_holds_mutable(item) for item in seq):
            raise _Aliased
        return seq * n
    raise ValueError(f"{type(op).__name__} of {ta.__name__} and {tb.__name__}")
