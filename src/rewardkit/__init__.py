"""rewardkit: build verifiable rewards for LLM RL (GRPO / RLVR) and prove them before training.

The most used names are importable from here (``__all__`` is sorted; a test guards it). Each area
is a submodule with its own ``__all__``:

- ``rewardkit.stack``: reward stacks with hard gates; ``rewardkit.advantages``: group-relative
  advantages, the resolution protocol, the minimum-pass gate; ``rewardkit.levels``: level-based
  step rewards (recipes A/B/C); ``rewardkit.errors``: the error hierarchy; ``Check`` and
  ``Section``: what a run verified (the result model every area reports checks with).
- ``rewardkit.bioaudit``: the bio-audit rule engine and frozen synthetic benchmark;
  ``rewardkit.stats``: bootstrap / permutation statistics; ``rewardkit.audit``: calibrate,
  spike-in and the five validation gates.
- ``rewardkit.autorater``: strict probability parsing and proper-scoring judge rewards.
- ``rewardkit.envs``: verifiable tool environments (the synthetic FHIR world), hidden verifiers,
  red-teaming and weight sweeps.
- ``rewardkit.sandbox``: the code sandbox; ``rewardkit.selfplay``: information-gain test rewards.
- ``rewardkit.integrations``: TRL, verl and OpenRLHF adapters; ``rewardkit.report``: the HTML
  report of ``rewardkit demo``.
"""

import importlib as _importlib
import typing as _typing

from ._json import canonical_json, content_hash
from ._results import Check, Section
from ._version import __version__
from .advantages import Advantages, MinimumPass, group_advantages, minimum_pass
from .errors import (
    ConfigError,
    EnvError,
    InputError,
    MappingError,
    MissingExtraError,
    RewardkitError,
    RewardkitWarning,
    ZeroVarianceWarning,
)
from .levels import DEFAULT_MAPPING, LevelMapping, Step, TrajectoryReward, score_trajectory
from .stack import Component, Gate, GateOutcome, RewardResult, RewardStack, StackBounds

if _typing.TYPE_CHECKING:  # the areas load on first use; these imports are for type checkers
    from .audit import (
        Calibration,
        GateResult,
        LevelReward,
        SpikeIn,
        Validation,
        calibrate,
        spike_in,
        validate,
    )
    from .autorater import brier_reward, log_reward, parse_probability, proper_rewards
    from .envs import Verdict, check_env
    from .sandbox import ExecutionTable, Sandbox, graded_correctness
    from .selfplay import ig_rewards
    from .stats import (
        ConfidenceInterval,
        Estimate,
        RankAgreement,
        SeedStability,
        StratifiedTest,
        gold_quality,
        rank_agreement,
        seed_stability,
        stratified_test,
    )

# Names from the areas, imported on first use so that `import rewardkit` and the CLI stay fast.
_LAZY = {
    "ConfidenceInterval": ".stats",
    "Estimate": ".stats",
    "RankAgreement": ".stats",
    "SeedStability": ".stats",
    "StratifiedTest": ".stats",
    "gold_quality": ".stats",
    "rank_agreement": ".stats",
    "seed_stability": ".stats",
    "stratified_test": ".stats",
    "Calibration": ".audit",
    "GateResult": ".audit",
    "LevelReward": ".audit",
    "SpikeIn": ".audit",
    "Validation": ".audit",
    "calibrate": ".audit",
    "spike_in": ".audit",
    "validate": ".audit",
    "brier_reward": ".autorater",
    "log_reward": ".autorater",
    "parse_probability": ".autorater",
    "proper_rewards": ".autorater",
    "Verdict": ".envs",
    "check_env": ".envs",
    "ExecutionTable": ".sandbox",
    "Sandbox": ".sandbox",
    "graded_correctness": ".sandbox",
    "ig_rewards": ".selfplay",
}


def __getattr__(name: str) -> _typing.Any:
    if name in _LAZY:
        value = getattr(_importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rewardkit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "Advantages",
    "Calibration",
    "Check",
    "Component",
    "ConfidenceInterval",
    "ConfigError",
    "DEFAULT_MAPPING",
    "EnvError",
    "Estimate",
    "ExecutionTable",
    "Gate",
    "GateOutcome",
    "GateResult",
    "InputError",
    "LevelMapping",
    "LevelReward",
    "MappingError",
    "MinimumPass",
    "MissingExtraError",
    "RankAgreement",
    "RewardResult",
    "RewardStack",
    "RewardkitError",
    "RewardkitWarning",
    "Sandbox",
    "Section",
    "SeedStability",
    "SpikeIn",
    "StackBounds",
    "Step",
    "StratifiedTest",
    "TrajectoryReward",
    "Validation",
    "Verdict",
    "ZeroVarianceWarning",
    "__version__",
    "brier_reward",
    "calibrate",
    "canonical_json",
    "check_env",
    "content_hash",
    "gold_quality",
    "graded_correctness",
    "group_advantages",
    "ig_rewards",
    "log_reward",
    "minimum_pass",
    "parse_probability",
    "proper_rewards",
    "rank_agreement",
    "score_trajectory",
    "seed_stability",
    "spike_in",
    "stratified_test",
    "validate",
]
