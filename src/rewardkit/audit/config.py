"""``rewardkit.toml``: the audit's configuration, validated with errors naming file and field.

Usage::

    from rewardkit.audit.config import AuditConfig
    cfg = AuditConfig.from_toml("rewardkit.toml")      # or AuditConfig() for the defaults

Layout (every key optional)::

    [reward]
    mapping = { 0 = 0.0, 1 = 0.30, 2 = 0.60, 3 = 0.85 }   # checked by the mapping gate
    ceiling = 0.85
    gamma = 0.30
    recipe = "B"                          # the default recipe
    factory = "my_pkg.rewards:make"       # your own reward (zero-argument callable) instead
    [judge]
    factory = "my_pkg.judge:make"         # default: rewardkit.bioaudit.Engine
    [stats]
    n_resamples = 2000
    confidence_level = 0.95
    seeds = [42, 1, 7, 123, 2026]
    seed_tolerance = 0.05
    alpha = 0.05
    [thresholds]
    spike_in_drop = 0.30
    [data]
    benchmark = "v1.2.0"                  # the bio-audit preset's data (or a benchmark folder)
    tasks = "tasks.jsonl"                 # your tasks instead of the benchmark's
    golden = "golden.jsonl"               # your golden set instead of the benchmark's

Relative paths are read from the config file's folder.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._io import read_toml
from ..errors import InputError
from ..levels import RECIPES

__all__ = ["AuditConfig"]

DEFAULT_VALUES = {0: 0.0, 1: 0.30, 2: 0.60, 3: 0.85}
_KEYS = {
    "reward": {"mapping", "ceiling", "gamma", "recipe", "factory"},
    "judge": {"factory"},
    "stats": {"n_resamples", "confidence_level", "seeds", "seed_tolerance", "alpha"},
    "thresholds": {"spike_in_drop"},
    "data": {"benchmark", "tasks", "golden"},
}


@dataclass(frozen=True)
class AuditConfig:
    """Validated audit settings. ``mapping`` is kept raw: its rules are the mapping gate's job."""

    mapping: dict[int, float] = field(default_factory=lambda: dict(DEFAULT_VALUES))
    ceiling: float = 0.85
    gamma: float = 0.30
    recipe: str = "B"
    reward_factory: str | None = None
    judge_factory: str | None = None
    n_resamples: int = 2000
    confidence_level: float = 0.95
    seeds: tuple[int, ...] = (42, 1, 7, 123, 2026)
    seed_tolerance: float = 0.05
    alpha: float = 0.05
    spike_in_drop: float = 0.30
    benchmark: str | None = None  # the bio-audit preset's data, only when asked for
    tasks: Path | None = None
    golden: Path | None = None
    source: str | None = None

    @classmethod
    def from_toml(cls, path: str | Path) -> AuditConfig:
        p = Path(path)
        data = read_toml(p)
        src = str(p)

        def bad(key: str, accepted: str, got: Any) -> InputError:
            return InputError(f"expected {accepted}; got {got!r:.60}", path=src, field=key)

        for section, value in data.items():
            if section not in _KEYS:
                raise InputError(
                    f"unknown section; accepted: {', '.join(sorted(_KEYS))}",
                    path=src,
                    field=section,
                )
            if not isinstance(value, dict):
                raise bad(section, "a table", value)
            for key in value:
                if key not in _KEYS[section]:
                    raise InputError(
                        f"unknown key; accepted: {', '.join(sorted(_KEYS[section]))}",
                        path=src,
                        field=f"{section}.{key}",
                    )

        def get(section: str, key: str, default: Any) -> Any:
            return data.get(section, {}).get(key, default)

        def real(
            section: str, key: str, default: float, lo: float, hi: float, open_: str = ""
        ) -> float:
            v = get(section, key, default)
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            if ok:
                ok = (v > lo if "l" in open_ else v >= lo) and (v < hi if "h" in open_ else v <= hi)
            if not ok:
                lb, hb = "(" if "l" in open_ else "[", ")" if "h" in open_ else "]"
                raise bad(f"{section}.{key}", f"a number in {lb}{lo:g}, {hi:g}{hb}", v)
            return float(v)

        mapping_raw = get("reward", "mapping", DEFAULT_VALUES)
        if not isinstance(mapping_raw, dict) or not mapping_raw:
            raise bad("reward.mapping", "a table of level = reward", mapping_raw)
        mapping: dict[int, float] = {}
        for k, v in mapping_raw.items():
            try:
                level = int(k)
            except ValueError:
                raise bad(f"reward.mapping.{k}", "an integer level as key", k) from None
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise bad(f"reward.mapping.{k}", "a finite number", v)
            mapping[level] = float(v)
        recipe = get("reward", "recipe", "B")
        if recipe not in RECIPES:
            raise bad("reward.recipe", "one of " + ", ".join(RECIPES), recipe)
        factories = {}
        for section in ("reward", "judge"):
            f = get(section, "factory", None)
            if f is not None and (not isinstance(f, str) or ":" not in f):
                raise bad(f"{section}.factory", "'module:callable'", f)
            factories[section] = f
        n_res = get("stats", "n_resamples", 2000)
        if isinstance(n_res, bool) or not isinstance(n_res, int) or n_res < 1:
            raise bad("stats.n_resamples", "an int >= 1", n_res)
        seeds = get("stats", "seeds", [42, 1, 7, 123, 2026])
        if (
            not isinstance(seeds, list)
            or not seeds
            or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in seeds)
            or len(set(seeds)) != len(seeds)  # a repeated seed: stability that cannot fail
        ):
            raise bad("stats.seeds", "a non-empty list of distinct ints >= 0", seeds)
        paths: dict[str, Path | None] = {}
        for key in ("tasks", "golden"):
            v = get("data", key, None)
            if v is not None and not isinstance(v, str):
                raise bad(f"data.{key}", "a path string", v)
            paths[key] = None if v is None else (p.parent / v)
        bench = get("data", "benchmark", None)
        if bench is not None and not isinstance(bench, str):
            raise bad("data.benchmark", "a version string or a folder", bench)
        if bench is not None and (bench.startswith((".", "/")) or "/" in bench):
            bench = str(p.parent / bench)
        return cls(
            mapping=mapping,
            ceiling=real("reward", "ceiling", 0.85, 0, math.inf, "lh"),
            gamma=real("reward", "gamma", 0.30, 0, 1),
            recipe=recipe,
            reward_factory=factories["reward"],
            judge_factory=factories["judge"],
            n_resamples=n_res,
            confidence_level=real("stats", "confidence_level", 0.95, 0, 1, "lh"),
            seeds=tuple(seeds),
            seed_tolerance=real("stats", "seed_tolerance", 0.05, 0, math.inf, "h"),
            alpha=real("stats", "alpha", 0.05, 0, 1, "lh"),
            spike_in_drop=real("thresholds", "spike_in_drop", 0.30, 0, math.inf, "h"),
            benchmark=bench,
            tasks=paths["tasks"],
            golden=paths["golden"],
            source=src,
        )
