"""The TRL adapter against the reward function a user writes by hand for TRL.

Baseline: a plain TRL reward function calling the same component functions in a loop and
summing them with the same weights (no gates, no crash capture, no None handling, no metrics).
Ours: ``reward_func(stack)`` — gates first, every component recorded, crashes captured, and
the component metrics sent through ``log_metric``. The ratio (baseline / ours, below 1 = we are
slower) is the price of that bookkeeping per batch; a real verifier (parsing, a sandbox call)
costs far more than either.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import median_time

from rewardkit.integrations.trl import reward_func
from rewardkit.stack import Component, Gate, RewardStack


def exact(ep):
    return float(ep["text"].strip() == ep["ground_truth"])


def brevity(ep):
    return -0.001 * len(ep["text"])


def safe(ep):
    return "rm -rf" not in ep["text"]


def baseline(prompts=None, completions=None, ground_truth=None, **kwargs):
    out = []
    for c, g in zip(completions, ground_truth):
        ep = {"text": c, "ground_truth": g}
        out.append(-1.0 if not safe(ep) else exact(ep) + 0.5 * brevity(ep))
    return out


def run() -> list[dict]:
    stack = RewardStack(
        gates=[Gate("safe", safe)],
        components=[
            Component("exact", exact),
            Component("brevity", brevity, weight=0.5, range=(-1.0, 0.0)),
        ],
        fail_value=-1.0,  # below the lowest safe total −0.5 (the baseline below uses the same)
        version="bench",
    )
    ours_fn = reward_func(stack, name="bench")
    rows = []
    for n in (64, 1024):
        completions = [f"answer {i % 7}" for i in range(n)]
        gold = [f"answer {i % 5}" for i in range(n)]
        kwargs = {
            "prompts": ["q"] * n,
            "completions": completions,
            "ground_truth": gold,
            "log_metric": lambda name, value: None,
        }
        assert ours_fn(**kwargs) == baseline(**kwargs)  # same rewards
        ours = median_time(lambda kw=kwargs: ours_fn(**kw))
        base = median_time(lambda kw=kwargs: baseline(**kw))
        rows.append(
            {
                "case": f"TRL reward_func, {n} completions, 1 gate + 2 components",
                "ours_s": ours,
                "baseline": "hand-written TRL reward function (same components, no bookkeeping)",
                "baseline_s": base,
                "ratio": base / ours,
            }
        )
    return rows
