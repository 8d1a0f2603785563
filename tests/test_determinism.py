"""Identical inputs give byte-identical JSON, in fresh processes with different hash seeds."""

from __future__ import annotations

import json
import os
import subprocess
import sys

SCRIPT = r"""
from rewardkit import RewardStack, Component, Gate, GateOutcome, group_advantages, Step
from rewardkit import score_trajectory, canonical_json
from rewardkit.demo import example_stack, EPISODES
stack = example_stack()
sets = RewardStack(components=[Component("s", lambda ep: float(ep["x"] in {"a", "b", "c", "d"}))])
steps = [Step(3, "final"), Step(0, "final"), Step(-1), Step(2, "revoked"), Step(1)]
out = {
    "stack": [r.to_json() for r in stack.score_batch(EPISODES)],
    "set_literal_hash": sets.code_hash,
    "levels": [score_trajectory(steps, recipe=r, session=s).to_json()
               for r in "ABC" for s in (False, True)],
    "adv": group_advantages([0.1, None, 0.3, 0.9, 0.9, 0.2], ["b", "a", "b", "a", "c", "c"],
                            method="maxnorm", resolution=0.05).to_json(),
    "groups": group_advantages([1.0, 0.0, 0.5, 0.5], [("x", 1), ("x", 1), "y", "y"],
                               resolution=0.1, on_low_variance="drop").to_json(),
}
print(canonical_json(out))
"""


def run(hashseed: str) -> bytes:
    env = {**os.environ, "PYTHONHASHSEED": hashseed}
    return subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, check=True, timeout=120
    ).stdout


def test_byte_identical_json_across_processes_and_hash_seeds():
    a, b = run("0"), run("12345")
    assert a == b
    out = json.loads(a)
    assert "level_minus_one" in out["levels"][0]
    assert json.loads(out["groups"])["dropped_groups"] == ["y"]
