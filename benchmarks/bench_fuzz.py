"""Reward-fuzzing throughput: ``fuzz()`` against the loop a user would write without it.

Both sides play the *same* episodes (episode i: ``default_rng([seed, i])``, same policy, same
task) and judge each with the shipped verifier, the naive control and the held-out verifier.

- ours: ``rewardkit.envs.fuzz.fuzz`` — one environment per id and process, reset between
  episodes (worlds, task packages, truths and reference paths built once), the shipped
  verdict reused from the environment instead of scoring twice; optionally Ray tasks.
- baseline: the plain Gymnasium-style per-episode loop — ``make(env_id)`` for every episode,
  ``reset`` / ``step`` / ``finalize``, then the naive stack and the held-out verifier. The
  world itself is cached by ``build_world`` in both, so the baseline is not charged for
  regenerating it (that would be ~0.5 s per episode and an unfair comparison).

Target (issue 6): a 10,000-episode campaign in under a minute on this 2-core machine. Each
side is timed once (a campaign is long enough for a stable number); the ratio is noisy on a
shared machine.
"""

from __future__ import annotations

import time

import numpy as np

from rewardkit._optional import have
from rewardkit.envs.fhir import ENV_IDS
from rewardkit.envs.fhir.verifier import naive_stack
from rewardkit.envs.fuzz import fuzz
from rewardkit.envs.policies import POLICIES, play
from rewardkit.envs.registry import make


def baseline(episodes: int, seed: int) -> int:
    """The per-episode loop; returns the naive control's exploit-ish count (kept honest)."""
    naive = naive_stack()
    policies = tuple(POLICIES)
    wrong = 0
    for i in range(episodes):
        rng = np.random.default_rng([seed, i])
        env = make(ENV_IDS[(i // len(policies)) % len(ENV_IDS)])
        env.reset(seed=int(rng.integers(0, 2**31)))
        play(policies[i % len(policies)], env, rng)
        env.finalize()
        naive.score(env.episode())
        wrong += not env.heldout().correct
    return wrong


def _time(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def run() -> list[dict]:
    make(ENV_IDS[0])  # build the world once, outside the timings
    fuzz(episodes=50, rng=9, progress=False)  # warm caches on both sides alike
    rows = []
    for n in (2_000, 10_000):
        ours = _time(lambda n=n: fuzz(episodes=n, rng=0, progress=False))
        base = _time(lambda n=n: baseline(n, 0))
        rows.append(
            {
                "case": f"{n:,} episodes: {n / ours:,.0f} vs {n / base:,.0f} episodes/s",
                "ours_s": ours,
                "baseline": "make() per episode (plain loop)",
                "baseline_s": base,
                "ratio": base / ours,
            }
        )
    if have("ray"):
        n = 10_000
        ray_s = _time(lambda: fuzz(episodes=n, rng=0, backend="ray", progress=False))
        rows.append(
            {
                "case": f"{n:,} episodes, Ray (2 CPUs, incl. ray.init): "
                f"{n / ray_s:,.0f} episodes/s",
                "ours_s": ray_s,
                "baseline": "make() per episode (plain loop)",
                "baseline_s": base,
                "ratio": base / ray_s,
            }
        )
    return rows
