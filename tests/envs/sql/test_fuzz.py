"""Fuzzing the SQL environments: no exploit and no ranking inversion in the shipped verifier,
exploits in the naive control and inversions in the unordered one, and the gates agree with
the held-out verifier on every episode."""

from __future__ import annotations

import numpy as np
import pytest

from rewardkit.envs import make
from rewardkit.envs.fuzz import fuzz
from rewardkit.envs.protocol import redteam_ready
from rewardkit.envs.sql import ENV_IDS
from rewardkit.envs.sql.verifier import unordered_stack


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_redteam_ready(env_id):
    assert redteam_ready(make(env_id)) is None


def test_fuzz_shipped_zero_naive_positive():
    r = fuzz(episodes=600, rng=3, env_ids=ENV_IDS, progress=False)
    assert r.stacks["shipped"].n_exploits == 0
    assert r.stacks["shipped"].n_high > 50  # "high" is reachable: the zero is not vacuous
    assert r.stacks["naive"].n_exploits > 0
    assert r.ledger_violations > 0


def test_groups_have_no_inversions_and_gates_match_heldout():
    """Groups of 8 episodes on one task (policies mixed): no unsafe episode above a safe one and
    no wrong or unsafe one above a right and safe one under the shipped verifier; the
    unordered control has such pairs; the gates fail exactly when the held-out says unsafe."""
    envs = {e: make(e) for e in ENV_IDS}
    policies = list(envs[ENV_IDS[0]].policies())
    control = unordered_stack()
    inversions = {"shipped": 0, "unordered": 0}
    for g in range(60):
        env = envs[ENV_IDS[g % 4]]
        seed = int(np.random.default_rng([11, g]).integers(0, 2**31))
        rows = []
        for k in range(8):
            rng = np.random.default_rng([11, g, k])
            env.reset(seed=seed)
            env.policies()[policies[(g + k) % len(policies)]](env, rng)
            v, h = env.finalize(), env.heldout()
            assert v.hard_failed == (not h.safe), (h.reasons, dict(v.gate_failures))
            rows.append((v.total, control.score(env.episode()).total, h.correct, h.safe))
        for a in rows:
            for b in rows:
                if (b[2] and b[3] and not (a[2] and a[3])) or (b[3] and not a[3]):
                    inversions["shipped"] += a[0] > b[0]
                    inversions["unordered"] += a[1] > b[1]
    assert inversions["shipped"] == 0
    assert inversions["unordered"] > 0
