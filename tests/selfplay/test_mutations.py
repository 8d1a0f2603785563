"""AST mutation operators: every operator fires on the bank, every mutant compiles, output is
deterministic, and the families are the seed's."""

from __future__ import annotations

import ast

from rewardkit.selfplay.bankfile import read_bank_file
from rewardkit.selfplay.mutations import FAMILIES, OPERATORS, mutate

SRC = """
def f(xs, v):
    if not xs:
        return None
    ys = list(xs)
    n = 0
    for i in range(len(xs) - 1):
        if xs[i] < v and xs[i] in ys:
            n += 1
    total = n - v
    return ys[1:], total
"""


def test_families_are_the_seeds_and_every_operator_fires_on_the_bank():
    assert FAMILIES == ("aliasing", "boundary", "reorder", "off_by_one", "comparison")
    fired = {(m.family, m.operator) for d in read_bank_file().tasks for m in mutate(d.reference)}
    declared = {(f, name) for f, ops in OPERATORS.items() for name, _ in ops}
    assert declared == fired  # don't forget any


def test_each_mutant_is_one_edit_compiles_and_differs():
    muts = mutate(SRC)
    original = ast.unparse(ast.parse(SRC)) + "\n"
    assert len({m.source for m in muts}) == len(muts)
    for m in muts:
        compile(m.source, "<m>", "exec")
        assert m.source != original
    kinds = {m.operator for m in muts}
    assert {
        "copy_to_alias",
        "drop_guard",
        "range_end_early",
        "flip_comparison",
        "swap_statements",
    } <= kinds


def test_aliasing_rewrites_copies_to_the_name():
    src = (
        "def g(a):\n    b = a[:]\n    c = a.copy()\n    import copy\n"
        "    d = copy.deepcopy(a)\n    return b, c, d\n"
    )
    out = [m.source for m in mutate(src, families=("aliasing",))]
    assert any("b = a\n" in s for s in out)
    assert any("c = a\n" in s for s in out)
    assert any("d = a\n" in s for s in out)


def test_while_loops_are_never_edited():
    src = "def h(n):\n    i = 0\n    while i < n:\n        i += 1\n    return i\n"
    for m in mutate(src):
        assert "while i < n:\n        i += 1" in m.source


def test_deterministic():
    assert mutate(SRC) == mutate(SRC)
