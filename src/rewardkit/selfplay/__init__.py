"""Self-play test-suite rewards (SPEC §8, seed 003: FROST on top of CoVer).

    from rewardkit.selfplay import ig_rewards, null_mi, prune, build_probe_pool, simulate

    r = ig_rewards(E, y, correction="exact_null")   # E (T, m, K) pass table, y (T, m) graded
    r.reward, r.mi, r.correction_term, r.gate_open, r.h_y

Modules, one concept each: ``infogain`` (plug-in MI, Miller–Madow, exact and permutation nulls,
H(y), gated rewards), ``pruning`` (three-level pruning, k_eff), ``mutations`` (AST mutation
operators in families), ``probes`` (frozen probe pool P0, D_s, d_j), ``dualpool`` (I_mix + λ·d_j),
``estimator_audit`` (bias / RMSE of each correction in your regime), ``predictions`` (the
Miller–Madow bound and peak, P1, P4), ``bank`` (the task bank, built from a data file),
``bankfile`` (the bank's TOML format, checked), ``inputgen`` (declarative input generators),
``testgen`` (test generators), ``executor`` (programs × tests through the sandbox, cached),
``simulate`` (the offline self-play simulation), ``alpha_sweep`` (P3: the α sweep), ``cli``
(``rewardkit selfplay ig|p1|simulate``).
"""

from .alpha_sweep import AlphaSweep, alpha_sweep
from .bank import Candidate, CodeTask, TaskBank, load_bank
from .bankfile import read_bank_file
from .dualpool import DualPoolRewards, dual_pool_rewards
from .estimator_audit import AuditRow, EstimatorAudit, estimator_audit
from .executor import CachedExecutor, SandboxExecutor, TestCase, TrustedExecutor
from .infogain import (
    IGRewards,
    PermutationNull,
    entropy,
    ig_rewards,
    miller_madow_bias,
    null_mi,
    permutation_null,
    plugin_mi,
)
from .mutations import FAMILIES, Mutant, mutate
from .predictions import P1Result, P4Result, mm_bound, mm_peak, p1_check, p4_check
from .probes import DetectionRate, Probe, ProbePool, build_probe_pool, detection_rate
from .pruning import PruneResult, k_eff, prune
from .simulate import ARMS, SimConfig, SimulationResult, simulate
from .testgen import GENERATORS

__all__ = [
    "ARMS",
    "FAMILIES",
    "GENERATORS",
    "AlphaSweep",
    "AuditRow",
    "CachedExecutor",
    "Candidate",
    "CodeTask",
    "DetectionRate",
    "DualPoolRewards",
    "EstimatorAudit",
    "IGRewards",
    "Mutant",
    "P1Result",
    "P4Result",
    "PermutationNull",
    "Probe",
    "ProbePool",
    "PruneResult",
    "SandboxExecutor",
    "SimConfig",
    "SimulationResult",
    "TaskBank",
    "TestCase",
    "TrustedExecutor",
    "alpha_sweep",
    "build_probe_pool",
    "detection_rate",
    "dual_pool_rewards",
    "entropy",
    "estimator_audit",
    "ig_rewards",
    "k_eff",
    "load_bank",
    "miller_madow_bias",
    "mm_bound",
    "mm_peak",
    "mutate",
    "null_mi",
    "p1_check",
    "p4_check",
    "permutation_null",
    "plugin_mi",
    "prune",
    "read_bank_file",
    "simulate",
]
