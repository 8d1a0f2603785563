"""lab rlvr and the weight sweep on the SQL family (through their generic hooks)."""

from __future__ import annotations

import numpy as np
import pytest

from rewardkit.envs import make
from rewardkit.envs.lab import run_lab
from rewardkit.envs.sql import ENV_IDS
from rewardkit.envs.sql.verifier import DEFAULT_WEIGHTS, build_stack
from rewardkit.envs.sweep import _play, _totals, sweep
from rewardkit.errors import ConfigError


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_lab_passes_on_every_family(env_id):
    lab = run_lab(env_id=env_id)
    assert lab.passed, [c for c in lab.checks if not c.passed]
    assert lab.label == "environment PASS, training not-run"
    order = sorted(lab.advantages, key=lambda n: -lab.advantages[n])
    assert order[0] == "A" and order[-1] == "D"


def test_sweep_totals_equal_the_stack_and_concise_is_preferred():
    data, spec = _play(["sql/revenue-v1"], 1)
    for weights in ({}, {"cost": 8.0}, {"task": 0.5, "efficiency": 4.0}):
        w = {**DEFAULT_WEIGHTS, **weights}
        totals = _totals(data, w, spec)
        # recompute with the real stack on fresh episodes of the same behaviours
        env = make("sql/revenue-v1", verifier=build_stack(w))
        for name, behaviour in spec["behaviours"].items():
            got = []
            for options in spec["tasks"]:
                env.reset(seed=0, options=options)
                for a in behaviour(env):
                    if env.step(a)[2]:
                        break
                got.append(env.finalize().total)
            assert totals[name] == pytest.approx(float(np.mean(got)))
    res = sweep(env_ids=ENV_IDS, variants=1, grid=(0.0, 1.0, 4.0))
    assert res.default_choice == "concise"
    assert all(row[1] == "concise" for row in res.preferred.values())
    assert res.success["concise"] == 1.0 and res.success["never_call"] == 0.0


def test_sweep_refuses_mixed_families():
    with pytest.raises(ConfigError, match="mixes environments"):
        sweep(env_ids=("sql/revenue-v1", "fhir/anc-threshold-v1"), variants=1, grid=(0.0, 1.0))
