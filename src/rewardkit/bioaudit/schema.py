"""The JSONL schema of bio-audit data: shipped benchmark files and users' own files.

Usage::

    from rewardkit.bioaudit.schema import read_trajectories, read_levels, read_gold
    trajs = read_trajectories("my_runs.jsonl")   # decisions to audit
    levels = read_levels("my_levels.jsonl")      # levels from your own judge
    gold = read_gold("my_gold.jsonl")            # gold annotation counts per task

One JSON object per line (blank lines are skipped). A malformed line raises
:class:`~rewardkit.errors.InputError` naming the file, the line number and the field
(``decisions[2].action``); nothing is returned from a file with a bad line. Records:

- decision: ``{"decision_id": str, "action": str, "params": {...}, "context": {...}}``
- trajectory: ``{"trajectory_id" or "task_id": str, "paradigm": str?, "decisions": [decision],
  "reviews": ["final" | "provisional" | "revoked" | null, ...]?}``; gold counts may ride along.
  ``reviews`` holds each step's status in a review session (null: the step has no review
  record); a missing or null ``reviews`` means no review session.
- task (benchmark): a trajectory with ``task_id``, ``paradigm``, ``reviews`` (null = no review
  session) and ``n_gold_correct``, ``n_gold_error``, ``n_gold_edge`` (ints ≥ 0).
- levels: ``{"trajectory_id": str, "levels": [int in -1..3], "reviews": [...]?}``
- gold: ``{"task_id": str, "n_gold_correct": int, "n_gold_error": int, "n_gold_edge": int}``
- golden: ``{"trajectory_id", "paradigm", "decisions", "expected_levels": [int in -1..3]}``
- substrate: ``{"name": str, "paradigm": str, "decisions": [decision]}``

Ids must be unique within a file. docs/bioaudit.md has the full description with examples.

Files written before benchmark v1.2.0 name ``reviews`` ``verdicts``: they are still read, with
one :class:`~rewardkit.errors.RenamedFieldWarning` per file naming the file and line; the next
version refuses the old name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from .._io import read_jsonl, renamed_field, require_field
from .._json import JsonMixin
from ..errors import InputError

__all__ = [
    "BenchmarkTask",
    "GoldRecord",
    "GoldenTrajectory",
    "LevelRecord",
    "Trajectory",
    "read_gold",
    "read_golden",
    "read_levels",
    "read_substrates",
    "read_tasks",
    "read_trajectories",
]

REVIEWS = ("final", "provisional", "revoked")
_GOLD = ("n_gold_correct", "n_gold_error", "n_gold_edge")


@dataclass(frozen=True)
class Trajectory(JsonMixin):
    """A user trajectory to audit; ``reviews`` None means no review session."""

    trajectory_id: str
    paradigm: str | None
    decisions: tuple[dict[str, Any], ...]
    reviews: tuple[str | None, ...] | None = None


@dataclass(frozen=True)
class BenchmarkTask(JsonMixin):
    """One task: its decisions, step reviews (None = no review session) and gold counts."""

    task_id: str
    paradigm: str
    decisions: tuple[dict[str, Any], ...]
    reviews: tuple[str | None, ...] | None
    n_gold_correct: int
    n_gold_error: int
    n_gold_edge: int

    @property
    def gold_quality(self) -> float | None:
        """q = correct / (correct + error) (seed 000 §4); None when only edge annotations."""
        denom = self.n_gold_correct + self.n_gold_error
        return None if denom == 0 else self.n_gold_correct / denom


@dataclass(frozen=True)
class GoldenTrajectory(JsonMixin):
    """A trajectory with its frozen expected engine levels, one per decision."""

    trajectory_id: str
    paradigm: str
    decisions: tuple[dict[str, Any], ...]
    expected_levels: tuple[int, ...]


@dataclass(frozen=True)
class LevelRecord(JsonMixin):
    """Levels from any judge for one trajectory, with optional step reviews."""

    trajectory_id: str
    levels: tuple[int, ...]
    reviews: tuple[str | None, ...] | None = None


@dataclass(frozen=True)
class GoldRecord(JsonMixin):
    task_id: str
    n_gold_correct: int
    n_gold_error: int
    n_gold_edge: int


def _fail(msg: str, path: str, line: int, field: str) -> InputError:
    return InputError(msg, path=path, line=line, field=field)


def _keys(obj: dict[str, Any], allowed: set[str], path: str, line: int) -> None:
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise _fail(
            f"unknown field; accepted: {', '.join(sorted(allowed))}", path, line, unknown[0]
        )


def _decisions(obj: dict[str, Any], path: str, line: int) -> tuple[dict[str, Any], ...]:
    raw = require_field(obj, "decisions", list, path, line, accepted="a list of decision objects")
    seen: set[str] = set()
    for i, d in enumerate(raw):
        at = f"decisions[{i}]"
        if not isinstance(d, dict):
            raise _fail(f"expected a decision object; got {d!r:.60}", path, line, at)
        for key, kind, accepted in (
            ("decision_id", str, "a string"),
            ("action", str, "a string (the action name)"),
            ("params", dict, "an object"),
            ("context", dict, "an object"),
        ):
            if key not in d:
                raise _fail(f"missing; expected {accepted}", path, line, f"{at}.{key}")
            if not isinstance(d[key], kind):
                raise _fail(f"expected {accepted}; got {d[key]!r:.60}", path, line, f"{at}.{key}")
        extra = sorted(set(d) - {"decision_id", "action", "params", "context"})
        if extra:
            raise _fail(
                "unknown field; accepted: decision_id, action, params, context",
                path,
                line,
                f"{at}.{extra[0]}",
            )
        if d["decision_id"] in seen:
            raise _fail(
                f"duplicate decision_id {d['decision_id']!r}", path, line, f"{at}.decision_id"
            )
        seen.add(d["decision_id"])
    return tuple(raw)


def _renamed(
    obj: dict[str, Any], path: str, line: int, warned: set[str]
) -> tuple[dict[str, Any], str]:
    """``obj`` with the old name ``verdicts`` read as ``reviews``, and the name the line used
    (errors about the value name the field as the file spells it)."""
    name = "verdicts" if "verdicts" in obj else "reviews"
    return renamed_field(obj, "verdicts", "reviews", path, line, warned=warned), name


def _reviews(
    obj: dict[str, Any], n: int, path: str, line: int, name: str = "reviews"
) -> tuple[str | None, ...] | None:
    raw = require_field(
        {name: obj["reviews"]} if "reviews" in obj else {},
        name,
        list,
        path,
        line,
        optional=True,
        accepted="null or a list of final / provisional / revoked / null",
    )
    if raw is None:
        return None
    if len(raw) != n:
        raise _fail(f"has {len(raw)} entries for {n} steps; give one per step", path, line, name)
    for i, v in enumerate(raw):
        if v is not None and v not in REVIEWS:
            raise _fail(
                f"expected final, provisional, revoked or null; got {v!r:.40}",
                path,
                line,
                f"{name}[{i}]",
            )
    return tuple(raw)


def _count(obj: dict[str, Any], key: str, path: str, line: int) -> int:
    v = require_field(obj, key, int, path, line, accepted="an int >= 0")
    if v < 0:
        raise _fail(f"expected an int >= 0; got {v}", path, line, key)
    return int(v)


def _levels(raw: list[Any], field: str, path: str, line: int) -> tuple[int, ...]:
    for i, v in enumerate(raw):
        if isinstance(v, bool) or not isinstance(v, int) or not -1 <= v <= 3:
            raise _fail(f"expected an int in -1..3; got {v!r:.40}", path, line, f"{field}[{i}]")
    return tuple(raw)


def _once(seen: dict[str, int], key: str, path: str, line: int, field: str) -> str:
    if key in seen:
        raise _fail(f"duplicate id {key!r} (line {seen[key]} has it too)", path, line, field)
    seen[key] = line
    return key


def read_trajectories(path: str | Path) -> list[Trajectory]:
    """Trajectories to audit (the benchmark's task and golden files are accepted too)."""
    seen: dict[str, int] = {}
    warned: set[str] = set()
    allowed = {
        "trajectory_id",
        "task_id",
        "paradigm",
        "decisions",
        "reviews",
        "expected_levels",
        *_GOLD,
    }

    def parse(obj: dict[str, Any], p: str, line: int) -> Trajectory:
        obj, rname = _renamed(obj, p, line, warned)
        _keys(obj, allowed, p, line)
        key = "trajectory_id" if "trajectory_id" in obj or "task_id" not in obj else "task_id"
        tid = require_field(obj, key, str, p, line, accepted="a string id")
        _once(seen, tid, p, line, key)
        paradigm = require_field(obj, "paradigm", str, p, line, optional=True, accepted="a string")
        decisions = _decisions(obj, p, line)
        return Trajectory(tid, paradigm, decisions, _reviews(obj, len(decisions), p, line, rname))

    return cast(list[Trajectory], read_jsonl(path, parse))


def read_tasks(path: str | Path) -> list[BenchmarkTask]:
    """Benchmark tasks: a trajectory with ``task_id``, ``paradigm`` and gold counts."""
    seen: dict[str, int] = {}
    warned: set[str] = set()
    allowed = {"task_id", "paradigm", "decisions", "reviews", *_GOLD}

    def parse(obj: dict[str, Any], p: str, line: int) -> BenchmarkTask:
        obj, rname = _renamed(obj, p, line, warned)
        _keys(obj, allowed, p, line)
        tid = _once(
            seen,
            require_field(obj, "task_id", str, p, line, accepted="a string id"),
            p,
            line,
            "task_id",
        )
        paradigm = require_field(obj, "paradigm", str, p, line, accepted="a paradigm name")
        decisions = _decisions(obj, p, line)
        reviews = _reviews(obj, len(decisions), p, line, rname)
        c, e, g = (_count(obj, k, p, line) for k in _GOLD)
        return BenchmarkTask(tid, paradigm, decisions, reviews, c, e, g)

    return cast(list[BenchmarkTask], read_jsonl(path, parse))


def read_golden(path: str | Path) -> list[GoldenTrajectory]:
    """Golden trajectories with one expected level per decision."""
    seen: dict[str, int] = {}

    def parse(obj: dict[str, Any], p: str, line: int) -> GoldenTrajectory:
        _keys(obj, {"trajectory_id", "paradigm", "decisions", "expected_levels"}, p, line)
        tid = require_field(obj, "trajectory_id", str, p, line, accepted="a string id")
        _once(seen, tid, p, line, "trajectory_id")
        paradigm = require_field(obj, "paradigm", str, p, line, accepted="a paradigm name")
        decisions = _decisions(obj, p, line)
        raw = require_field(obj, "expected_levels", list, p, line, accepted="a list of levels")
        if len(raw) != len(decisions):
            raise _fail(
                f"has {len(raw)} levels for {len(decisions)} decisions", p, line, "expected_levels"
            )
        return GoldenTrajectory(tid, paradigm, decisions, _levels(raw, "expected_levels", p, line))

    return cast(list[GoldenTrajectory], read_jsonl(path, parse))


def read_substrates(path: str | Path) -> dict[str, tuple[dict[str, Any], ...]]:
    """Spike-in substrates by name."""
    seen: dict[str, int] = {}

    def parse(obj: dict[str, Any], p: str, line: int) -> tuple[str, tuple[dict[str, Any], ...]]:
        _keys(obj, {"name", "paradigm", "decisions"}, p, line)
        name = require_field(obj, "name", str, p, line, accepted="a string")
        _once(seen, name, p, line, "name")
        require_field(obj, "paradigm", str, p, line, accepted="a paradigm name")
        return name, _decisions(obj, p, line)

    return dict(cast(list[tuple[str, tuple[dict[str, Any], ...]]], read_jsonl(path, parse)))


def read_levels(path: str | Path) -> list[LevelRecord]:
    """Per-trajectory levels from your own judge (PRM, LLM judge, people)."""
    seen: dict[str, int] = {}
    warned: set[str] = set()

    def parse(obj: dict[str, Any], p: str, line: int) -> LevelRecord:
        obj, rname = _renamed(obj, p, line, warned)
        _keys(obj, {"trajectory_id", "levels", "reviews"}, p, line)
        tid = require_field(obj, "trajectory_id", str, p, line, accepted="a string id")
        _once(seen, tid, p, line, "trajectory_id")
        raw = require_field(obj, "levels", list, p, line, accepted="a list of ints in -1..3")
        levels = _levels(raw, "levels", p, line)
        return LevelRecord(tid, levels, _reviews(obj, len(levels), p, line, rname))

    return cast(list[LevelRecord], read_jsonl(path, parse))


def read_gold(path: str | Path) -> list[GoldRecord]:
    """Gold annotation counts per task."""
    seen: dict[str, int] = {}

    def parse(obj: dict[str, Any], p: str, line: int) -> GoldRecord:
        _keys(obj, {"task_id", *_GOLD}, p, line)
        tid = require_field(obj, "task_id", str, p, line, accepted="a string id")
        _once(seen, tid, p, line, "task_id")
        c, e, g = (_count(obj, k, p, line) for k in _GOLD)
        return GoldRecord(tid, c, e, g)

    return cast(list[GoldRecord], read_jsonl(path, parse))
