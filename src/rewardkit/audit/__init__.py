"""Reward audit: any reward against the user's own labelled data, and the level-reward preset.

Usage::

    from rewardkit.audit import (calibrate_rewards, load_reward, read_golden, read_items,
                                 read_rewards, read_spike_pairs, validate_reward)
    items = read_items("gold.jsonl", require_gold=True)
    rewards, _ = read_rewards("rewards.jsonl")             # or an adapter's log_path= file
    print(calibrate_rewards(items, rewards).table())        # ρ, τ_b, good vs bad, groups, ECE
    v = validate_reward(load_reward("myreward:make"), items=read_items("items.jsonl"),
                        golden=read_golden("golden.jsonl"),
                        pairs=read_spike_pairs("spike_in.jsonl"))
    v.outcome                                   # "pass", "incomplete" (some not run), "fail"

The level-reward / bio-audit preset (seed 000 §4–§7): ``calibrate`` and ``validate`` with the
inputs of :func:`rewardkit.audit.preset.bioaudit_inputs`, chosen explicitly; bring your own
judge / level reward through :mod:`rewardkit.audit.protocols` (``Judge``, ``Reward``).
"""

from __future__ import annotations

from .agreement import RewardCalibration, calibrate_rewards
from .calibrate import Calibration, Preregistration, RecipeCalibration, calibrate
from .data import (
    GoldenItem,
    Item,
    RewardRecord,
    SpikePair,
    read_golden,
    read_items,
    read_rewards,
    read_spike_pairs,
)
from .gates import VALIDATION_GATES, GateResult
from .protocols import Golden, Judge, LevelReward, Reward, Task
from .reward_gates import GATE_NAMES, GateReport
from .spike_in import SpikeIn, SpikeInCase, spike_in
from .userreward import UserReward, load_reward
from .validate import Validation, validate
from .validate_reward import RewardValidation, validate_reward

__all__ = [
    "GATE_NAMES",
    "VALIDATION_GATES",
    "Calibration",
    "GateReport",
    "GateResult",
    "Golden",
    "GoldenItem",
    "Item",
    "Judge",
    "LevelReward",
    "Preregistration",
    "RecipeCalibration",
    "Reward",
    "RewardCalibration",
    "RewardRecord",
    "RewardValidation",
    "SpikeIn",
    "SpikeInCase",
    "SpikePair",
    "Task",
    "UserReward",
    "Validation",
    "calibrate",
    "calibrate_rewards",
    "load_reward",
    "read_golden",
    "read_items",
    "read_rewards",
    "read_spike_pairs",
    "spike_in",
    "validate",
    "validate_reward",
]
