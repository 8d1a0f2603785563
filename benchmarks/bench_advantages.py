"""group_advantages against what a user writes by hand: a Python loop over groups
(verl's compute_grpo_outcome_advantage structure, with statistics.stdev) and the reshape form
TRL uses (numpy view(-1, G)), which only handles contiguous equal-size groups without None."""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _timing import median_time

from rewardkit.advantages import group_advantages


def loop_baseline(scores, index, eps=1e-6):
    by: dict = {}
    for s, i in zip(scores, index):
        by.setdefault(i, []).append(s)
    stats = {i: (statistics.fmean(v), statistics.stdev(v)) for i, v in by.items()}
    return [(s - stats[i][0]) / (stats[i][1] + eps) for s, i in zip(scores, index)]


def reshape_baseline(rewards: np.ndarray, G: int, eps=1e-6):
    r = rewards.reshape(-1, G)
    return ((r - r.mean(1, keepdims=True)) / (r.std(1, ddof=1, keepdims=True) + eps)).ravel()


def run() -> list[dict]:
    rng = np.random.default_rng(0)
    rows = []
    for n_groups, G in ((64, 8), (512, 16), (4096, 16)):
        rewards = rng.uniform(size=n_groups * G)
        index = np.repeat(np.arange(n_groups), G)
        lst, idx = rewards.tolist(), index.tolist()
        ours = median_time(lambda r=rewards, i=idx: group_advantages(r, i, eps=1e-6))
        np.testing.assert_allclose(
            group_advantages(rewards, idx, eps=1e-6).values, loop_baseline(lst, idx), rtol=1e-9
        )
        loop = median_time(lambda r=lst, i=idx: loop_baseline(r, i))
        rows.append(
            {
                "case": f"{n_groups}x{G} ids",
                "ours_s": ours,
                "baseline": "python loop (verl-style)",
                "baseline_s": loop,
                "ratio": loop / ours,
            }
        )
        ours_g = median_time(lambda r=rewards, g=G: group_advantages(r, g, eps=1e-6))
        resh = median_time(lambda r=rewards, g=G: reshape_baseline(r, g))
        rows.append(
            {
                "case": f"{n_groups}x{G} contiguous",
                "ours_s": ours_g,
                "baseline": "numpy reshape (TRL-style)",
                "baseline_s": resh,
                "ratio": resh / ours_g,
            }
        )
    return rows
