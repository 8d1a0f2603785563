"""SqlEnv through the contract: check_env on every id, the reference path right and safe on
every task by both verifiers, options, errors, copies."""

from __future__ import annotations

import pytest

from rewardkit.envs import check_env, make, registered
from rewardkit.envs.sql import ENV_IDS, FAMILY_TRAPS
from rewardkit.errors import ConfigError


def test_registered():
    assert set(ENV_IDS) <= set(registered())
    assert ENV_IDS == (
        "sql/revenue-v1",
        "sql/top-customers-v1",
        "sql/retention-v1",
        "sql/refund-rate-v1",
    )


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_check_env(env_id):
    report = check_env(make(env_id))
    assert report.passed, [c for c in report.checks if not c.passed]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_reference_path_is_right_and_safe_on_every_task(env_id):
    env = make(env_id)
    for trap in FAMILY_TRAPS[env.family]:
        for variant in range(env.variants):
            env.reset(seed=0, options={"trap": trap, "variant": variant})
            for a in env.reference_actions():
                env.step(a)
            v, h = env.finalize(), env.heldout()
            assert not v.hard_failed and v.components["task"] == 1.0, (trap, variant, v)
            assert h.correct and h.safe, (trap, variant, h.reasons)
            assert v.total is not None and v.total >= 3.0


def test_options_and_seed_errors():
    env = make("sql/revenue-v1")
    with pytest.raises(ConfigError, match="'trap' option"):
        env.reset(seed=0, options={"trap": "ties"})
    with pytest.raises(ConfigError, match="'variant' option"):
        env.reset(seed=0, options={"variant": 99})
    with pytest.raises(ConfigError, match="accept"):
        env.reset(seed=0, options={"colour": 1})
    with pytest.raises(ConfigError, match="'seed' parameter"):
        env.reset(seed=-1)


def test_observations_are_copies():
    env = make("sql/revenue-v1")
    obs, _ = env.reset(seed=1)
    obs["tools"][0]["cost"] = 0
    out = env.step({"tool": "query", "args": {"sql": "SELECT store_id FROM stores"}})[0]
    out["rows"][0][0] = 999
    obs2, _ = env.reset(seed=1)
    assert obs2["tools"][0]["cost"] == 0.1
    again = env.step({"tool": "query", "args": {"sql": "SELECT store_id FROM stores"}})[0]
    assert again["rows"][0][0] == 1


def test_malformed_actions_never_raise():
    env = make("sql/retention-v1")
    env.reset(seed=0)
    for bad in [
        "",
        "{",
        b"\xff",
        '{"tool": "query", "args": {"sql": 5}}',
        '{"tool": "query", "args": {"sql": "SELECT 1", "x": 1}}',
        '{"tool": "drop_everything"}',
        '{"answer": {"status": "answered"}}',
        '{"answer": {"status": "unknown", "value": 3}}',
        '{"answer": {"status": "answered", "value": NaN}}',
        '{"answer": {"status": "answered", "value": [1, true]}}',
        '{"answer": {"status": "answered", "value": 1, "value": 2}}',
        "[" * 5000,
    ]:
        obs, _, term, trunc, _ = env.step(bad)
        assert "error" in obs and not term
        if trunc:
            break
    assert env.episode().n_format_errors > 0


def test_budget_and_steps_truncate():
    env = make("sql/revenue-v1", max_steps=3)
    env.reset(seed=0)
    out = [env.step({"tool": "list_tables"}) for _ in range(3)]
    assert out[-1][3] and not out[-1][2]
    assert env.finalize().truncated
