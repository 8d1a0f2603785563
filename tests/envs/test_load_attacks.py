"""``--load FILE.py`` by class: a user's environment file named like a standard or loaded
module, and files that fail to import.

Before: the file was put in ``sys.modules`` under its stem, so ``random.py`` replaced the
standard ``random`` for the rest of the process (``rewardkit redteam --load random.py`` died
with "cannot import name 'getrandbits'", exit 3 "this is a bug"); a syntax error or a raise at
import was an internal error too. Now such a file gets a module name of its own and the
standard module stays; an import failure is bad input naming the file and the line (exit 2).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rewardkit.envs import check_env, make
from rewardkit.envs.registry import load
from rewardkit.errors import ConfigError

TUTORIAL = Path(__file__).resolve().parents[2] / "examples" / "stock_env.py"
STDLIB_NAMES = ["random", "json", "copy", "types", "numbers", "string", "enum", "typing"]


@pytest.mark.parametrize("stem", STDLIB_NAMES)
def test_a_file_named_like_a_standard_module_does_not_replace_it(tmp_path, stem):
    source = TUTORIAL.read_text().replace("tutorial/stock-check-v1", f"user/{stem}-v1")
    (tmp_path / f"{stem}.py").write_text(source)
    before = sys.modules.get(stem)
    mod = load(str(tmp_path / f"{stem}.py"))
    assert sys.modules.get(stem) is before and mod is not before
    assert mod.__name__ != stem and sys.modules[mod.__name__] is mod
    assert load(str(tmp_path / f"{stem}.py")) is mod  # loaded once
    assert check_env(make(f"user/{stem}-v1")).passed


BROKEN = {
    "syntax": ("x = 1\ndef f(:\n", 2, "SyntaxError"),
    "raise": ("import os\n\nraise RuntimeError('no database here')\n", 3, "RuntimeError"),
    "missing import": ("import not_a_module_anywhere_\n", 1, "ModuleNotFoundError"),
    "name error": ("x = 1\ny = undefined_name\n", 2, "NameError"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_file_that_fails_to_import_is_bad_input_naming_file_and_line(tmp_path, case):
    text, line, kind = BROKEN[case]
    path = tmp_path / f"env_{case.replace(' ', '_')}.py"
    path.write_text(text)
    with pytest.raises(ConfigError, match=rf"{path.name} failed to import \(line {line}\): {kind}"):
        load(str(path))
    p = subprocess.run(
        [sys.executable, "-m", "rewardkit.cli", "redteam", "--load", str(path), "--env",
         "user/x-v1", "--episodes", "1", "--out", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert p.returncode == 2, p.stderr
    assert f"line {line}" in p.stderr and kind in p.stderr and "bug" not in p.stderr
