"""SQL environments: how fast the database is built, and red-team throughput against the loop a
user would write without ``fuzz()``.

- world: ``build_world`` uncached (generate ~52,000 rows, write them to SQLite, plant the
  ties, pick every decisive scenario), against writing the same rows alone — the part any
  seeded SQLite fixture pays.
- red-team: ``fuzz`` on the four sql/* ids (one environment per id and process: the session's
  result cache, the held-out verifier's data and the task truths are built once), against
  the plain Gymnasium-style loop — ``make(env_id)`` for every episode (a fresh read-only
  session, no cache), ``reset`` / ``step`` / ``finalize``, the naive control and the held-out
  verifier. Both play the same episodes with the same policies and judges.

Numbers are wall-clock on a shared 2-core machine; the CPU seconds of this process are given
beside them because other jobs' load moves the wall clock.
"""

from __future__ import annotations

import time

import numpy as np

from rewardkit.envs.fuzz import fuzz
from rewardkit.envs.registry import make
from rewardkit.envs.sql import ENV_IDS
from rewardkit.envs.sql.data import generate
from rewardkit.envs.sql.verifier import naive_stack
from rewardkit.envs.sql.world import _write_db, build_world


def baseline(episodes: int, seed: int) -> int:
    naive = naive_stack()
    policies = tuple(make(ENV_IDS[0]).policies())
    wrong = 0
    for i in range(episodes):
        rng = np.random.default_rng([seed, i])
        env = make(ENV_IDS[(i // len(policies)) % len(ENV_IDS)])
        env.reset(seed=int(rng.integers(0, 2**31)))
        env.policies()[policies[i % len(policies)]](env, rng)
        env.finalize()
        naive.score(env.episode())
        wrong += not env.heldout().correct
        env.session.close()
    return wrong


def _time(fn) -> tuple[float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def run() -> list[dict]:
    rows = []
    builds = [_time(lambda k=k: build_world.__wrapped__(100 + k)) for k in range(3)]
    rows_only = [_time(lambda k=k: _write_db(generate(200 + k), f"bench-{k}")) for k in range(3)]
    (w, c), (bw, _) = min(builds), min(rows_only)
    rows.append(
        {
            "case": f"build the database and 132 decisive tasks: {w:.2f} s wall, {c:.2f} s CPU",
            "ours_s": w,
            "baseline": "generate + write the same rows only",
            "baseline_s": bw,
            "ratio": bw / w,
        }
    )
    make(ENV_IDS[0])
    for n in (2_000, 10_000):
        ours, ours_cpu = _time(lambda n=n: fuzz(episodes=n, rng=n, env_ids=ENV_IDS, progress=False))
        base_n = min(n, 2_000)
        base, _ = _time(lambda b=base_n, n=n: baseline(b, n))
        rows.append(
            {
                "case": f"red-team {n:,} episodes (4 sql ids, fresh seed): {n / ours:,.0f} "
                f"episodes/s ({ours_cpu:.1f} s CPU) vs plain loop {base_n / base:,.0f} episodes/s",
                "ours_s": ours,
                "baseline": f"make() per episode (plain loop), scaled from {base_n:,} episodes",
                "baseline_s": base * n / base_n,
                "ratio": base * n / base_n / ours,
            }
        )
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
