"""AST mutation operators in families, for the frozen probe pool P0 (seed 003, FROST step 1).

    >>> from rewardkit.selfplay.mutations import mutate
    >>> src = "def f(xs):\\n    ys = list(xs)\\n    ys.sort()\\n    return ys\\n"
    >>> [(m.family, m.operator) for m in mutate(src)][:2]
    [('aliasing', 'copy_to_alias'), ('reorder', 'swap_statements')]

Families (the seed's three, plus the two classic ones the issue names):

- ``aliasing``   — shared state: ``list(x)``, ``x.copy()``, ``x[:]``, ``dict(x)``, ``set(x)``,
  ``copy.copy(x)`` / ``copy.deepcopy(x)`` become ``x`` (rebinding instead of copying, CoVer E.4).
- ``boundary``   — empty / edge input: an early-return guard (``if not xs: return …``) is
  dropped; ``len(x) - 1`` loses its ``- 1``.
- ``reorder``    — two adjacent simple statements swap places.
- ``off_by_one`` — ``range(a, b)`` ends one early or starts one late; an int literal in a
  comparison moves by one.
- ``comparison`` — ``<`` ↔ ``<=``, ``>`` ↔ ``>=``, ``==`` ↔ ``!=``.

Each mutant is one edit at one site, written back with ``ast.unparse`` and compiled; a mutant
whose text equals the original or another mutant is dropped here. Whether it *behaves*
differently is decided by running it (``probes.build_probe_pool`` discards and counts the
equivalent ones). ``while`` loops are never edited, so no mutant can loop forever.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .._json import JsonMixin
from .._validation import Interval, validate_params

__all__ = ["FAMILIES", "Mutant", "mutate"]

FAMILIES = ("aliasing", "boundary", "reorder", "off_by_one", "comparison")


@dataclass(frozen=True)
class Mutant(JsonMixin):
    family: str
    operator: str
    site: int  # which occurrence of the operator's pattern was edited (0-based, in walk order)
    source: str


# An edit takes the (deep-copied) tree and the site index, finds that site and changes it in
# place; it returns False when the tree has fewer sites.
Edit = Callable[[ast.Module, int], bool]


def _inside_while(tree: ast.Module) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.While):
            ids.update(id(n) for n in ast.walk(node))
    return ids


def _nth(tree: ast.Module, pred: Callable[[ast.AST], bool], k: int) -> ast.AST | None:
    banned = _inside_while(tree)
    hits = [n for n in ast.walk(tree) if id(n) not in banned and pred(n)]
    return hits[k] if k < len(hits) else None


# --- aliasing ---------------------------------------------------------------------------------

_COPY_CALLS = {"list", "dict", "set"}


def _copy_arg(node: ast.AST) -> ast.expr | None:
    """The copied expression if ``node`` is a copy of a plain name, else None."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        f, arg = node.func, node.args[0]
        if not isinstance(arg, ast.Name):
            return None
        if isinstance(f, ast.Name) and f.id in _COPY_CALLS:
            return arg
        if (
            isinstance(f, ast.Attribute)
            and isinstance(f.value, ast.Name)
            and f.value.id == "copy"
            and f.attr in ("copy", "deepcopy")
        ):
            return arg
    if (
        isinstance(node, ast.Call)
        and not node.args
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "copy"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id != "copy"
    ):
        return node.func.value
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and isinstance(node.slice, ast.Slice)
        and node.slice.lower is None
        and node.slice.upper is None
        and node.slice.step is None
    ):
        return node.value
    return None


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, new: ast.AST) -> None:
        self.target, self.new = target, new

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if node is self.target:
            return self.new
        return super().generic_visit(node)


def _copy_to_alias(tree: ast.Module, k: int) -> bool:
    node = _nth(tree, lambda n: _copy_arg(n) is not None, k)
    if node is None:
        return False
    arg = _copy_arg(node)
    assert arg is not None
    _Replace(node, arg).visit(tree)
    return True


# --- boundary ---------------------------------------------------------------------------------


def _is_guard(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.If) and not stmt.orelse and isinstance(stmt.body[-1], ast.Return)


def _drop_guard(tree: ast.Module, k: int) -> bool:
    banned = _inside_while(tree)
    sites: list[tuple[list[ast.stmt], int]] = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and id(node) not in banned:
            sites.extend((body, i) for i, s in enumerate(body) if _is_guard(s) and len(body) > 1)
    if k >= len(sites):
        return False
    body, i = sites[k]
    del body[i]
    return True


def _is_len_minus_one(n: ast.AST) -> bool:
    return (
        isinstance(n, ast.BinOp)
        and isinstance(n.op, ast.Sub)
        and isinstance(n.right, ast.Constant)
        and n.right.value == 1
        and isinstance(n.left, ast.Call)
        and isinstance(n.left.func, ast.Name)
        and n.left.func.id == "len"
    )


def _len_minus_one(tree: ast.Module, k: int) -> bool:
    node = _nth(tree, _is_len_minus_one, k)
    if node is None:
        return False
    assert isinstance(node, ast.BinOp)
    _Replace(node, node.left).visit(tree)
    return True


# --- reorder ----------------------------------------------------------------------------------

_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)


def _swap_statements(tree: ast.Module, k: int) -> bool:
    banned = _inside_while(tree)
    sites: list[tuple[list[ast.stmt], int]] = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and id(node) not in banned:
            sites.extend(
                (body, i)
                for i in range(len(body) - 1)
                if isinstance(body[i], _SIMPLE) and isinstance(body[i + 1], _SIMPLE)
            )
    if k >= len(sites):
        return False
    body, i = sites[k]
    body[i], body[i + 1] = body[i + 1], body[i]
    return True


def _guard_return(tree: ast.Module, k: int) -> bool:
    """The value an early-return guard gives on empty / edge input changes (None ↔ [])."""
    node = _nth(tree, lambda n: isinstance(n, ast.If) and _is_guard(n), k)
    if node is None:
        return False
    assert isinstance(node, ast.If)
    ret = node.body[-1]
    assert isinstance(ret, ast.Return)
    is_none = ret.value is None or (isinstance(ret.value, ast.Constant) and ret.value.value is None)
    ret.value = ast.List([], ast.Load()) if is_none else ast.Constant(None)
    return True


def _is_int_init(n: ast.AST) -> bool:
    return (
        isinstance(n, ast.Assign)
        and len(n.targets) == 1
        and isinstance(n.targets[0], ast.Name)
        and isinstance(n.value, ast.Constant)
        and type(n.value.value) is int
    )


def _bump_int_constant(tree: ast.Module, match: Callable[[ast.AST], bool], k: int) -> bool:
    """Add one to the int constant assigned by the k-th node that ``match`` accepts."""
    node = _nth(tree, match, k)
    if node is None:
        return False
    assert isinstance(node, (ast.Assign, ast.AugAssign)) and isinstance(node.value, ast.Constant)
    assert type(node.value.value) is int
    node.value = ast.Constant(node.value.value + 1)
    return True


def _init_plus_one(tree: ast.Module, k: int) -> bool:
    """An accumulator starts one off (what the empty input returns changes)."""
    return _bump_int_constant(tree, _is_int_init, k)


# --- off by one -------------------------------------------------------------------------------


def _is_range(n: ast.AST) -> bool:
    return (
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id == "range"
        and 1 <= len(n.args) <= 2
    )


def _range_end_early(tree: ast.Module, k: int) -> bool:
    node = _nth(tree, _is_range, k)
    if node is None:
        return False
    assert isinstance(node, ast.Call)
    node.args[-1] = ast.BinOp(node.args[-1], ast.Sub(), ast.Constant(1))
    return True


def _range_start_late(tree: ast.Module, k: int) -> bool:
    node = _nth(tree, _is_range, k)
    if node is None:
        return False
    assert isinstance(node, ast.Call)
    if len(node.args) == 1:
        node.args.insert(0, ast.Constant(1))
    else:
        node.args[0] = ast.BinOp(node.args[0], ast.Add(), ast.Constant(1))
    return True


def _is_cmp_int(n: ast.AST) -> bool:
    return isinstance(n, ast.Compare) and any(
        isinstance(c, ast.Constant) and type(c.value) is int for c in n.comparators
    )


def _cmp_constant_plus_one(tree: ast.Module, k: int) -> bool:
    node = _nth(tree, _is_cmp_int, k)
    if node is None:
        return False
    assert isinstance(node, ast.Compare)
    for i, c in enumerate(node.comparators):
        if isinstance(c, ast.Constant) and type(c.value) is int:
            node.comparators[i] = ast.Constant(c.value + 1)
            break
    return True


def _is_step(n: ast.AST) -> bool:
    return (
        isinstance(n, ast.AugAssign)
        and isinstance(n.value, ast.Constant)
        and type(n.value.value) is int
    )


def _step_plus_one(tree: ast.Module, k: int) -> bool:
    return _bump_int_constant(tree, _is_step, k)


def _slice_shift(tree: ast.Module, k: int) -> bool:
    """``xs[a:b]``: the first given bound moves by one."""
    node = _nth(tree, lambda n: isinstance(n, ast.Slice) and (n.lower or n.upper) is not None, k)
    if node is None:
        return False
    assert isinstance(node, ast.Slice)
    if node.lower is not None:
        node.lower = ast.BinOp(node.lower, ast.Add(), ast.Constant(1))
    else:
        assert node.upper is not None
        node.upper = ast.BinOp(node.upper, ast.Add(), ast.Constant(1))
    return True


_ORDERED_OPS = (ast.Sub, ast.Add, ast.Div, ast.FloorDiv, ast.Mod)


def _swap_operands(tree: ast.Module, k: int) -> bool:
    """``a - b`` → ``b - a`` (also +, /, //, %: lists and strings do not commute)."""
    node = _nth(tree, lambda n: isinstance(n, ast.BinOp) and isinstance(n.op, _ORDERED_OPS), k)
    if node is None:
        return False
    assert isinstance(node, ast.BinOp)
    node.left, node.right = node.right, node.left
    return True


# --- comparison -------------------------------------------------------------------------------

_FLIP: dict[type, type] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
}


def _flip_comparison(tree: ast.Module, k: int) -> bool:
    node = _nth(tree, lambda n: isinstance(n, ast.Compare) and type(n.ops[0]) in _FLIP, k)
    if node is None:
        return False
    assert isinstance(node, ast.Compare)
    node.ops[0] = _FLIP[type(node.ops[0])]()
    return True


def _flip_membership(tree: ast.Module, k: int) -> bool:
    node = _nth(
        tree, lambda n: isinstance(n, ast.Compare) and isinstance(n.ops[0], (ast.In, ast.NotIn)), k
    )
    if node is None:
        return False
    assert isinstance(node, ast.Compare)
    node.ops[0] = ast.NotIn() if isinstance(node.ops[0], ast.In) else ast.In()
    return True


def _flip_boolop(tree: ast.Module, k: int) -> bool:
    node = _nth(tree, lambda n: isinstance(n, ast.BoolOp), k)
    if node is None:
        return False
    assert isinstance(node, ast.BoolOp)
    node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    return True


OPERATORS: dict[str, tuple[tuple[str, Edit], ...]] = {
    "aliasing": (("copy_to_alias", _copy_to_alias),),
    "boundary": (
        ("drop_guard", _drop_guard),
        ("guard_return", _guard_return),
        ("len_minus_one", _len_minus_one),
        ("init_plus_one", _init_plus_one),
    ),
    "reorder": (("swap_statements", _swap_statements), ("swap_operands", _swap_operands)),
    "off_by_one": (
        ("range_end_early", _range_end_early),
        ("range_start_late", _range_start_late),
        ("cmp_constant_plus_one", _cmp_constant_plus_one),
        ("step_plus_one", _step_plus_one),
        ("slice_shift", _slice_shift),
    ),
    "comparison": (
        ("flip_comparison", _flip_comparison),
        ("flip_membership", _flip_membership),
        ("flip_boolop", _flip_boolop),
    ),
}
assert tuple(OPERATORS) == FAMILIES


def _sites(src: str, edit: Edit, max_sites: int) -> Iterator[tuple[int, str]]:
    for k in range(max_sites):
        t = ast.parse(src)  # a fresh tree per site: cheaper than deepcopy
        if not edit(t, k):
            return
        ast.fix_missing_locations(t)
        out = ast.unparse(t) + "\n"
        compile(out, "<mutant>", "exec")  # every mutant must compile; a failure is our bug
        yield k, out


@validate_params({"source": ["str"], "max_sites": [Interval(int, 1, 10_000)]})
def mutate(
    source: str, *, families: tuple[str, ...] = FAMILIES, max_sites: int = 8
) -> tuple[Mutant, ...]:
    """All single-edit mutants of ``source`` by family, deduplicated by text, in a fixed order
    (family, operator, site): the same source always gives the same mutants."""
    tree = ast.parse(source)
    original = ast.unparse(tree) + "\n"
    seen = {original}
    out = []
    for fam in families:
        for name, edit in OPERATORS[fam]:
            for k, text in _sites(source, edit, max_sites):
                if text not in seen:
                    seen.add(text)
                    out.append(Mutant(fam, name, k, text))
    return tuple(out)
