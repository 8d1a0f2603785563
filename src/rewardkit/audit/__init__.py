"""Reward audit (seed 000 §4–§7): calibrate against gold, spike-in, the five validate gates.

Usage::

    from rewardkit.audit import calibrate, spike_in, validate
    cal = calibrate(out="out/calibration")     # recipes A/B/C on the shipped benchmark
    print(cal.table())
    v = validate()                             # five gates: mapping, determinism, spike_in,
    v.passed                                   #   ablations, golden

Bring your own judge / reward through :mod:`rewardkit.audit.protocols` (``Judge``, ``Reward``).
"""

from __future__ import annotations

from .calibrate import Calibration, Preregistration, RecipeCalibration, calibrate
from .gates import VALIDATION_GATES, GateResult
from .protocols import Golden, Judge, LevelReward, Reward, Task
from .spike_in import SpikeIn, SpikeInCase, spike_in
from .validate import Validation, validate

__all__ = [
    "VALIDATION_GATES",
    "Calibration",
    "GateResult",
    "Golden",
    "Judge",
    "LevelReward",
    "Preregistration",
    "RecipeCalibration",
    "Reward",
    "SpikeIn",
    "SpikeInCase",
    "Task",
    "Validation",
    "calibrate",
    "spike_in",
    "validate",
]
