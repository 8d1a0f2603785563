"""Probabilistic autorater rewards (seed 001, "Judging with Confidence").

An autorater states the probability that response B is better than A; RL rewards it with a
strictly proper scoring rule, parse failures penalised.

Usage::

    from rewardkit.autorater import parse_probability, proper_rewards, receipt
    parse_probability("… <probability>0.73</probability>")     # 0.73 (strict convention)
    proper_rewards(texts, labels, rule="brier")                  # (n,) float64
    receipt(seeds=(42, 43, 44), device="cpu")                    # the math diagnostic, bound

Modules: ``parse`` (the strict parser), ``rewards`` (Brier / log rules, vectorised),
``calibration`` (SFT targets, position consistency, ECE, reliability diagram), ``proof``
(the math diagnostic and its receipt), ``reward_funcs`` (TRL reward functions), ``cli``.
"""

from .calibration import (
    PositionConsistency,
    ReliabilityBins,
    expected_calibration_error,
    position_consistency,
    preference_target,
    reliability_diagram,
)
from .parse import parse_probability
from .proof import ReceiptCheck, diagnostic, receipt, source_digest, verify_receipt
from .reward_funcs import brier_reward_func, log_reward_func, make_reward_func
from .rewards import brier_reward, log_reward, proper_rewards

__all__ = [
    "PositionConsistency",
    "ReceiptCheck",
    "ReliabilityBins",
    "brier_reward",
    "brier_reward_func",
    "diagnostic",
    "expected_calibration_error",
    "log_reward",
    "log_reward_func",
    "make_reward_func",
    "parse_probability",
    "position_consistency",
    "preference_target",
    "proper_rewards",
    "receipt",
    "reliability_diagram",
    "source_digest",
    "verify_receipt",
]
