"""proper_rewards against what a user writes by hand: a Python loop that parses each output with
a regex + float() (looser than our convention, so the baseline does less checking) and scores it
with math, one item at a time (the shape of a TRL reward function written inline)."""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _timing import median_time

from rewardkit.autorater import brier_reward, log_reward, proper_rewards

_TAG = re.compile(r"<probability>(.*?)</probability>", re.S)


def loop_baseline(texts, labels, rule="brier", eps=1e-3):
    out = []
    for t, y in zip(texts, labels):
        p = None
        if isinstance(t, str):
            m = _TAG.search(t)
            if m:
                try:
                    p = float(m.group(1))
                except ValueError:
                    p = None
        if p is None or not (0.0 <= p <= 1.0):
            out.append(0.0 if rule == "brier" else math.log(eps))
        elif rule == "brier":
            out.append(1.0 - (p - y) ** 2)
        else:
            q = min(max(p, eps), 1 - eps)
            out.append(y * math.log(q) + (1 - y) * math.log(1 - q))
    return out


def _batch(n: int):
    rng = np.random.default_rng(0)
    p = rng.uniform(size=n)
    texts: list = [f"B is more specific. <probability>{x:.3f}</probability>" for x in p]
    for i in rng.choice(n, size=n // 10, replace=False):
        texts[i] = "I cannot decide." if i % 2 else None
    return texts, rng.integers(0, 2, size=n).astype(float)


def run() -> list[dict]:
    rows = []
    for n in (512, 8192):
        texts, y = _batch(n)
        for rule in ("brier", "log"):
            np.testing.assert_allclose(
                proper_rewards(texts, y, rule=rule), loop_baseline(texts, y, rule)
            )
            ours = median_time(lambda t=texts, y=y, r=rule: proper_rewards(t, y, rule=r))
            base = median_time(lambda t=texts, y=y, r=rule: loop_baseline(t, y, r))
            rows.append(
                {
                    "case": f"{rule}, n={n}, 10% invalid",
                    "ours_s": ours,
                    "baseline": "python loop: regex + float()",
                    "baseline_s": base,
                    "ratio": base / ours,
                }
            )
    # Scoring alone, on already-parsed probabilities (None for failures): vectorised numpy vs a
    # per-item loop with math.
    rng = np.random.default_rng(1)
    p = [None if i % 10 == 0 else float(x) for i, x in enumerate(rng.uniform(size=8192))]
    y = rng.integers(0, 2, size=8192).astype(float)
    for rule, ours_fn in (("brier", brier_reward), ("log", log_reward)):
        ours = median_time(lambda f=ours_fn: f(p, y))
        base = median_time(lambda r=rule: _score_loop(p, y, r))
        rows.append(
            {
                "case": f"{rule} scoring only, n=8192 parsed p",
                "ours_s": ours,
                "baseline": "python loop: math per item",
                "baseline_s": base,
                "ratio": base / ours,
            }
        )
    return rows


def _score_loop(p, y, rule, eps=1e-3):
    out = []
    for pi, yi in zip(p, y):
        if pi is None:
            out.append(0.0 if rule == "brier" else math.log(eps))
        elif rule == "brier":
            out.append(1.0 - (pi - yi) ** 2)
        else:
            q = min(max(pi, eps), 1 - eps)
            out.append(yi * math.log(q) + (1 - yi) * math.log(1 - q))
    return out


if __name__ == "__main__":
    for row in run():
        print(row)
