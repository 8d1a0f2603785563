"""rewardkit: build verifiable rewards for LLM RL (GRPO / RLVR) and prove them before training.

The public API is listed in ``__all__`` (sorted; a test guards it). Submodules:
``stack`` (gates and components), ``advantages`` (group-relative advantages, resolution
protocol, minimum-pass gate), ``levels`` (level-based step rewards, recipes A/B/C),
``errors`` (the error hierarchy).
"""

from ._json import canonical_json, content_hash
from ._version import __version__
from .advantages import Advantages, MinimumPass, group_advantages, minimum_pass
from .errors import (
    ConfigError,
    InputError,
    MappingError,
    MissingExtraError,
    RewardkitError,
    RewardkitWarning,
    ZeroVarianceWarning,
)
from .levels import DEFAULT_MAPPING, LevelMapping, Step, TrajectoryReward, score_trajectory
from .stack import Component, Gate, GateOutcome, RewardResult, RewardStack

__all__ = [
    "Advantages",
    "Component",
    "ConfigError",
    "DEFAULT_MAPPING",
    "Gate",
    "GateOutcome",
    "InputError",
    "LevelMapping",
    "MappingError",
    "MinimumPass",
    "MissingExtraError",
    "RewardResult",
    "RewardStack",
    "RewardkitError",
    "RewardkitWarning",
    "Step",
    "TrajectoryReward",
    "ZeroVarianceWarning",
    "__version__",
    "canonical_json",
    "content_hash",
    "group_advantages",
    "minimum_pass",
    "score_trajectory",
]
