"""The held-out verifier is independent code: it imports nothing of the hidden verifier, the
engine, the truth or the PHI finder."""

from __future__ import annotations

import ast
from pathlib import Path

import rewardkit.envs.sql.heldout as heldout


def test_heldout_imports_nothing_of_the_hidden_side():
    tree = ast.parse(Path(heldout.__file__).read_text(encoding="utf-8"))
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            modules.add(("." * node.level) + (node.module or ""))
        elif isinstance(node, ast.Import):
            modules.update(a.name for a in node.names)
    assert modules <= {
        "__future__",
        "json",
        "re",
        "sqlite3",
        "unicodedata",
        "dataclasses",
        "datetime",
        "functools",
        "typing",
        "..._json",
    }, modules
