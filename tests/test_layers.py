"""The import layers hold: foundations → core → areas → integrations → presentation.

Every module of the package is classified (a completeness assert: a new module that is not
placed on a floor fails here with the line to add). A module may import only from its own floor
or below; an area imports another area only along the edges of ``AREA_DEPS``. The walk reads
every ``import`` statement with ``ast`` — inside functions and ``TYPE_CHECKING`` blocks too — so
a lazy import is no way around a floor. A second test imports each area in a fresh interpreter
and checks that no presentation module was loaded.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import rewardkit

SRC = Path(rewardkit.__file__).resolve().parent
FOUNDATIONS, CORE, AREA, INTEGRATIONS, PRESENTATION = range(5)
FLOOR_NAMES = ("foundations", "core", "area", "integrations", "presentation")

# Top-level modules and packages, by floor. A new one must be added here (the test says so).
FLOORS: dict[str, int] = {
    "errors": FOUNDATIONS,
    "_journal": FOUNDATIONS,
    "_json": FOUNDATIONS,
    "_io": FOUNDATIONS,
    "_results": FOUNDATIONS,
    "_completion": FOUNDATIONS,
    "_frozen": FOUNDATIONS,
    "_plotting": FOUNDATIONS,
    "_validation": FOUNDATIONS,
    "_optional": FOUNDATIONS,
    "_progress": FOUNDATIONS,
    "_rng": FOUNDATIONS,
    "_version": FOUNDATIONS,
    "_ordering": CORE,
    "stack": CORE,
    "advantages": CORE,
    "levels": CORE,
    "stats": AREA,
    "audit": AREA,
    "bioaudit": AREA,
    "autorater": AREA,
    "envs": AREA,
    "sandbox": AREA,
    "selfplay": AREA,
    "integrations": INTEGRATIONS,
    "learn": INTEGRATIONS,
    "report": PRESENTATION,
    "demo": PRESENTATION,
    "cli": PRESENTATION,
    "_cliutil": PRESENTATION,
    "_commands": PRESENTATION,
}

# Which area may use which other area (the architecture; anything else is a layering bug).
AREA_DEPS: dict[str, frozenset[str]] = {
    "stats": frozenset(),
    "bioaudit": frozenset(),
    "autorater": frozenset(),
    "envs": frozenset(),
    "sandbox": frozenset(),
    "audit": frozenset({"stats", "bioaudit"}),
    "selfplay": frozenset({"sandbox", "stats"}),
}

# Inside an area or an integrations package, these modules are its presentation: its subcommands
# (``cli``) and its section of ``rewardkit demo`` (``demo``). They sit on the top floor.
PRESENTATION_LEAVES = frozenset({"cli", "demo"})


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = ["rewardkit", *path.relative_to(SRC).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path) -> set[str]:
    """Every rewardkit module that ``name`` imports, anywhere in the file."""
    is_pkg = path.name == "__init__.py"
    package = name.split(".") if is_pkg else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "rewardkit"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                mod = ".".join([*base, *([node.module] if node.module else [])])
            else:
                mod = node.module or ""
            if mod.split(".")[0] != "rewardkit":
                continue
            found.add(mod)
            # ``from . import x`` / ``from .pkg import mod``: x may be a module itself
            found |= {f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in MODULES}
    return {m for m in found if m != "rewardkit"}


def _floor(module: str) -> int:
    parts = module.split(".")
    if len(parts) < 2:
        raise AssertionError("the package itself has no floor")
    top = parts[1]
    if top not in FLOORS:
        raise AssertionError(
            f"{module} is on no floor: add {top!r} to FLOORS in tests/test_layers.py "
            f"(one of {', '.join(FLOOR_NAMES)})"
        )
    floor = FLOORS[top]
    if floor in (AREA, INTEGRATIONS) and parts[-1] in PRESENTATION_LEAVES:
        return PRESENTATION
    return floor


MODULES = _modules()


def test_every_module_is_on_a_floor() -> None:
    unplaced = sorted(
        {m.split(".")[1] for m in MODULES if m != "rewardkit" and m.split(".")[1] not in FLOORS}
    )
    assert not unplaced, f"add these to FLOORS in tests/test_layers.py: {unplaced}"
    assert set(AREA_DEPS) == {k for k, v in FLOORS.items() if v == AREA}


def test_no_module_imports_from_a_higher_floor() -> None:
    bad = []
    for name, path in MODULES.items():
        if name == "rewardkit":  # the public face; its lazy names are checked below
            continue
        mine = _floor(name)
        for target in sorted(_imports(name, path)):
            theirs = _floor(target)
            if theirs > mine:
                bad.append(f"{name} ({FLOOR_NAMES[mine]}) imports {target} ({FLOOR_NAMES[theirs]})")
    assert not bad, "\n".join(bad)


def test_areas_import_each_other_only_along_the_architecture() -> None:
    bad = []
    for name, path in MODULES.items():
        if name == "rewardkit" or _floor(name) != AREA:
            continue
        area = name.split(".")[1]
        for target in sorted(_imports(name, path)):
            other = target.split(".")[1]
            if FLOORS[other] == AREA and other != area and other not in AREA_DEPS[area]:
                bad.append(f"{name} imports {target} ({area} may use {sorted(AREA_DEPS[area])})")
    assert not bad, "\n".join(bad)


def test_nothing_imports_the_top_of_the_presentation() -> None:
    """``demo`` and ``cli`` are entry points: only the CLI runs the demo, nothing runs the CLI."""
    users = {
        (name, target)
        for name, path in MODULES.items()
        for target in _imports(name, path)
        if target in {"rewardkit.cli", "rewardkit.demo"}
    }
    assert users <= {
        ("rewardkit.cli", "rewardkit.demo"),
        ("rewardkit.report.html", "rewardkit.demo"),
    }


def test_the_walk_sees_lazy_and_relative_imports() -> None:
    """The walker itself: a function-level relative import is found and resolved."""
    assert "rewardkit.demo" in _imports("rewardkit.cli", MODULES["rewardkit.cli"])
    assert "rewardkit._results" in _imports("rewardkit.envs.lab", MODULES["rewardkit.envs.lab"])
    assert _floor("rewardkit.audit.cli") == PRESENTATION
    assert _floor("rewardkit.audit.calibrate") == AREA


PRESENTATION_PREFIXES = ("rewardkit.demo", "rewardkit.report", "rewardkit.cli", "rewardkit._cli")


@pytest.mark.parametrize(
    "module", sorted({*(f"rewardkit.{k}" for k, v in FLOORS.items() if v in (AREA, INTEGRATIONS))})
)
def test_importing_an_area_loads_no_presentation(module: str) -> None:
    if module not in MODULES:
        pytest.skip(f"{module} is not in this build")
    code = f"import sys, {module}; print('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    loaded = [
        m
        for m in out
        if m.startswith(PRESENTATION_PREFIXES)
        or (m.startswith("rewardkit.") and m.split(".")[-1] in PRESENTATION_LEAVES)
    ]
    assert not loaded, f"import {module} loaded the presentation: {loaded}"
