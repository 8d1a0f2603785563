"""The frozen benchmark shipped as package data, and the JSONL records it is made of.

Usage::

    from rewardkit.bioaudit import load_benchmark
    bm = load_benchmark()              # "v1.2.0": a synthetic benchmark
    bm.tasks[0].n_gold_error           # gold from the latent-defect model, not from the engine
    bm.golden[0].expected_levels       # frozen engine levels (the golden zero-diff gate)
    bm.substrates["scrna_correct"]     # 12 decisions, all level 3
    bm.hashes["tasks.jsonl"]           # "sha256:…", recorded by every report

Loading checks each file against the manifest's content hash, so an edited file is refused
rather than silently measured. ``load_benchmark(path)`` reads a folder of the same layout (for
instance one written by ``generate(out=...)``).

Versions: ``v1.2.0`` holds the same tasks, gold and levels as ``v1.1.0``; only the tasks'
field ``verdicts`` (each step's status in a review session) is named ``reviews``. A folder
written in the v1.1.0 layout still loads, with one
:class:`~rewardkit.errors.RenamedFieldWarning` per file; the next version refuses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from .._json import JsonMixin, content_hash
from ..errors import InputError
from .schema import BenchmarkTask, GoldenTrajectory, read_golden, read_substrates, read_tasks

__all__ = ["Benchmark", "BenchmarkTask", "Defect", "GoldenTrajectory", "load_benchmark"]

SHIPPED_VERSIONS = ("v1.2.0",)
# Versions no longer shipped, and what replaced them.
RETIRED_VERSIONS = {
    "v1.1.0": "v1.2.0 has the same tasks; its field 'verdicts' is now named 'reviews'",
}


@dataclass(frozen=True)
class Defect(JsonMixin):
    """One latent label of the generator: a visible or silent defect, or a borderline choice."""

    task_id: str
    decision_id: str
    kind: str  # "defect" (visible), "silent", "borderline"
    name: str  # the rule id a visible one triggers, or the silent defect's name
    visible: bool


@dataclass(frozen=True)
class Benchmark:
    """A versioned benchmark: tasks, legacy, golden set, substrates, latent labels, hashes."""

    version: str
    tasks: tuple[BenchmarkTask, ...]
    legacy: tuple[BenchmarkTask, ...]
    golden: tuple[GoldenTrajectory, ...]
    substrates: dict[str, tuple[dict[str, Any], ...]]
    defects: tuple[Defect, ...]
    hashes: dict[str, str]
    description: str

    @property
    def hash(self) -> str:
        """One hash over every file's hash: the taskset hash that reports record."""
        return content_hash(self.hashes)


def _shipped_dir(version: str) -> Path:
    return Path(str(resources.files("rewardkit.bioaudit") / "data" / version))


def _read_defects(path: Path) -> tuple[Defect, ...]:
    from .._io import read_jsonl, require_field

    def parse(obj: dict[str, Any], p: str, line: int) -> Defect:
        return Defect(
            task_id=require_field(obj, "task_id", str, p, line, accepted="a string"),
            decision_id=require_field(obj, "decision_id", str, p, line, accepted="a string"),
            kind=require_field(obj, "kind", str, p, line, accepted="defect, silent or borderline"),
            name=require_field(obj, "name", str, p, line, accepted="a string"),
            visible=require_field(obj, "visible", bool, p, line, accepted="true or false"),
        )

    return tuple(read_jsonl(path, parse))  # type: ignore[arg-type]


def load_benchmark(version: str | Path = "v1.2.0") -> Benchmark:
    """Load a shipped version (``"v1.2.0"``) or a benchmark folder; hashes are verified."""
    import json

    if isinstance(version, str) and version in SHIPPED_VERSIONS:
        root = _shipped_dir(version)
    elif isinstance(version, Path) or (isinstance(version, str) and Path(version).is_dir()):
        root = Path(version)
    elif isinstance(version, str) and version in RETIRED_VERSIONS:
        raise InputError(
            f"benchmark version {version!r} is no longer shipped ({RETIRED_VERSIONS[version]}); "
            f"shipped: {', '.join(SHIPPED_VERSIONS)}"
        )
    else:
        raise InputError(
            f"unknown benchmark version {version!r}; shipped: {', '.join(SHIPPED_VERSIONS)} "
            "(or give a folder written by generate(out=...))"
        )
    mpath = root / "manifest.json"
    try:
        manifest = json.loads(mpath.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("no manifest.json in the benchmark folder", path=str(mpath)) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg}", path=str(mpath)) from None
    expected = manifest.get("files", {})
    hashes: dict[str, str] = {}
    for name in (
        "tasks.jsonl",
        "legacy.jsonl",
        "golden.jsonl",
        "substrates.jsonl",
        "defects.jsonl",
    ):
        fpath = root / name
        if not fpath.is_file():
            raise InputError("missing benchmark file", path=str(fpath))
        got = content_hash(fpath.read_bytes())
        if expected.get(name) != got:
            raise InputError(
                f"content hash {got} differs from the manifest's {expected.get(name)}: "
                "the file was edited; regenerate it with rewardkit.bioaudit.generate",
                path=str(fpath),
            )
        hashes[name] = got
    subs = read_substrates(root / "substrates.jsonl")
    return Benchmark(
        version=str(manifest.get("version", root.name)),
        tasks=tuple(read_tasks(root / "tasks.jsonl")),
        legacy=tuple(read_tasks(root / "legacy.jsonl")),
        golden=tuple(read_golden(root / "golden.jsonl")),
        substrates={name: tuple(decisions) for name, decisions in subs.items()},
        defects=_read_defects(root / "defects.jsonl"),
        hashes=hashes,
        description=str(manifest.get("description", "")),
    )
