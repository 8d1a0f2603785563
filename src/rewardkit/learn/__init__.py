"""Pre-registered GRPO experiments on CPU: do rewardkit's rewards teach what they claim?

    rewardkit learn calibration --json --out out/learn/calibration
    rewardkit learn gating --json --out out/learn/gating

    from rewardkit.learn import CalibrationTask, GatingTask, run_experiment
    res = run_experiment(CalibrationTask(), seeds=(0, 1, 2), steps=400, out="out/cal")
    res.summary["metrics"]["mae"]["vs_reference"]["brier"]   # PairedDifference over seeds

A tiny causal LM is built from a config (character tokenizer built locally, no downloads),
warm-started on the output format only, then trained with TRL's ``GRPOTrainer``. Each arm
starts from the same warm-started model per seed; arms are compared by paired differences over
seeds with 95% t-intervals. Everything that decides the reading — task, arms, seeds, steps,
settings, metrics, hypotheses, decision rule — is written to ``preregistration.json`` before
training. Needs the ``torch`` and ``trl`` extras.

Paired t-intervals come from :mod:`rewardkit.stats.paired`. Modules: ``_model`` (tokenizer,
model, warm start), ``_task`` (task protocol, settings), ``calibration`` and ``gating`` (the two
tasks), ``runner`` (pre-registration and training), ``result`` (summary and files), ``plots``,
``cli``.
"""

from ..stats.paired import PairedDifference, paired_difference
from ._task import Metric, Settings
from .calibration import CalibrationTask, true_probability
from .gating import GatingTask, gating_stack
from .result import LearnResult
from .runner import DECISION_RULE, preregistration, run_experiment, source_digest

__all__ = [
    "DECISION_RULE",
    "CalibrationTask",
    "GatingTask",
    "LearnResult",
    "Metric",
    "PairedDifference",
    "Settings",
    "gating_stack",
    "paired_difference",
    "preregistration",
    "run_experiment",
    "source_digest",
    "true_probability",
]
