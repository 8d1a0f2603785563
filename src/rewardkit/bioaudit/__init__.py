"""Bio-audit reference world (SPEC §3): rule engine, rule packs and the frozen benchmark.

Usage::

    from rewardkit.bioaudit import Engine, INJECTION_CANDIDATES, load_benchmark
    eng = Engine()                                   # deg / pan / scrna rule packs
    bm = load_benchmark()                            # v1.2.0, a synthetic benchmark
    [j.level for j in eng.audit(bm.substrates["scrna_correct"])]   # twelve 3s
"""

from __future__ import annotations

from .benchmark import Benchmark, BenchmarkTask, Defect, GoldenTrajectory, load_benchmark
from .candidates import INJECTION_CANDIDATES, check_injection_candidates
from .engine import PARADIGMS, Engine, Judgment
from .generator import DEFAULT_SEED, VERSION, GeneratorConfig, generate
from .rules import Clause, Rule, RulePack, load_rulepack
from .schema import (
    GoldRecord,
    LevelRecord,
    Trajectory,
    read_gold,
    read_levels,
    read_tasks,
    read_trajectories,
)

__all__ = [
    "Benchmark",
    "BenchmarkTask",
    "Clause",
    "DEFAULT_SEED",
    "Defect",
    "Engine",
    "GeneratorConfig",
    "GoldRecord",
    "GoldenTrajectory",
    "INJECTION_CANDIDATES",
    "Judgment",
    "LevelRecord",
    "PARADIGMS",
    "Rule",
    "RulePack",
    "Trajectory",
    "VERSION",
    "check_injection_candidates",
    "generate",
    "load_benchmark",
    "load_rulepack",
    "read_gold",
    "read_levels",
    "read_tasks",
    "read_trajectories",
]
