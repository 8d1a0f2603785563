"""The environment contract: check_env on every id, snapshots, truncation, errors."""

from __future__ import annotations

import json

import pytest

from rewardkit.envs import Env, check_env, make, registered
from rewardkit.envs.fhir import ENV_IDS
from rewardkit.envs.fhir.env import FhirEnv
from rewardkit.errors import ConfigError, EnvError


def test_every_registered_id_is_checked_here():
    fhir = {i for i in registered() if i.startswith("fhir/")}
    assert fhir == set(ENV_IDS)  # completeness: a new fhir id needs a check below


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("seed", [0, 11])
def test_check_env_passes(env_id, seed):
    report = check_env(make(env_id), seed=seed)
    assert report.passed, [c for c in report.checks if not c.passed]
    assert len(report.checks) == 13


class LeakyEnv(FhirEnv):
    def _step(self, action):
        obs, term, trunc, info = super()._step(action)
        return obs, term, trunc, {**info, "truth": self._truth.status}


def test_check_env_catches_a_verifier_leak():
    env = LeakyEnv("anc-threshold", env_id="fhir/anc-threshold-v1")
    report = check_env(env)
    failed = [c.name for c in report.checks if not c.passed]
    assert "no verifier keys or versions in obs / info" in failed
    (leak,) = [c for c in report.checks if c.name == "no verifier keys or versions in obs / info"]
    assert "truth" in leak.measured


def test_snapshot_replay_reproduces_verdict_bytes_mid_and_end():
    env = make("fhir/potassium-latest-v1")
    env.reset(seed=4, options={"trap": "lookalike"})
    ref = env.reference_actions()
    env.step(ref[0])
    mid = env.snapshot()
    assert json.loads(mid)["actions"] == [ref[0]]
    env.step(ref[1])
    env.step(ref[2])
    v = env.finalize()
    assert Env.replay(env.snapshot()).to_json() == v.to_json()
    again = Env.from_snapshot(mid)  # resumable: continue from the middle
    again.step(ref[1])
    again.step(ref[2])
    assert again.finalize().to_json() == v.to_json()


def test_tampered_snapshot_lineage_is_refused():
    env = make("fhir/anc-threshold-v1")
    env.reset(seed=1)
    snap = json.loads(env.snapshot())
    snap["lineage"] = "sha256:" + "0" * 64
    with pytest.raises(EnvError, match=r"lineage .* differs"):
        Env.from_snapshot(json.dumps(snap))
    with pytest.raises(EnvError, match="Not a replayable"):
        Env.from_snapshot(b"{}")


def test_out_of_order_calls_raise_env_error():
    env = make("fhir/anc-threshold-v1")
    with pytest.raises(EnvError, match=r"step\(\) called before reset\(\)"):
        env.step("{}")
    with pytest.raises(EnvError, match=r"finalize\(\) called before reset\(\)"):
        env.finalize()
    env.reset(seed=0)
    env.step('{"answer": {"status": "unknown"}}')
    with pytest.raises(EnvError, match="after the episode ended"):
        env.step('{"answer": {"status": "unknown"}}')


def test_max_steps_truncates():
    env = make("fhir/anc-threshold-v1", max_steps=3)
    env.reset(seed=0)
    outs = [env.step("oops") for _ in range(3)]
    assert [o[3] for o in outs] == [False, False, True]
    assert [o[2] for o in outs] == [False, False, False]
    v = env.finalize()
    assert v.truncated and not v.terminated and v.components["format"] == 0.0
    assert outs[-1][1] == v.total == 0.0


def test_budget_truncates_without_running_the_call():
    env = make("fhir/anc-threshold-v1", budget=2.5)
    env.reset(seed=0)
    sp, so, _ = env.reference_actions()
    env.step(sp)
    env.step(so)
    obs, _, term, trunc, info = env.step(so)
    assert "budget exhausted" in obs["error"] and trunc and not term
    assert info["cost_spent"] == 2.0
    assert env.finalize().cost_spent == 2.0


def test_reset_without_seed_continues_a_deterministic_stream():
    a, b = make("fhir/anc-threshold-v1"), make("fhir/anc-threshold-v1")
    ids_a = [a.reset()[1]["task_id"] for _ in range(5)]
    ids_b = [b.reset()[1]["task_id"] for _ in range(5)]
    assert ids_a == ids_b and len(set(ids_a)) > 1


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"seed": -1}, "'seed' parameter of fhir/anc-threshold-v1.reset must be a non-negative"),
        ({"seed": 1.5}, "'seed' parameter"),
        ({"options": {"trap": "nope"}}, "'trap' option .* must be one of"),
        ({"options": {"variant": 99}}, r"'variant' option .* must be an int in \[0, 5\]"),
        ({"options": {"colour": 1}}, "accept \\['trap', 'variant'\\]. Got 'colour'"),
    ],
)
def test_bad_reset_arguments(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        make("fhir/anc-threshold-v1").reset(**kwargs)


def test_bad_family():
    with pytest.raises(ConfigError, match="'family' parameter of FhirEnv must be one of"):
        FhirEnv("sodium", env_id="x/y-v1")


MALFORMED = [
    "",
    "{",
    "null",
    '{"tool": "nope", "args": {}}',
    '{"tool": "get_patient"}',
    '{"tool": "search_observations", "args": {"patient": "p", "code": "751-8", "_count": 0}}',
    '{"tool": "get_patient", "args": {"id": 3}}',
    '{"answer": {"status": "met", "value": NaN}}',
    '"{}"',
    '{"answer": {"status": "met"}, "x": 1}',
]


@pytest.mark.parametrize("raw", MALFORMED)
def test_every_malformed_action_gives_an_error_observation_and_a_format_penalty(raw):
    env = make("fhir/anc-threshold-v1")
    env.reset(seed=2)
    obs, reward, term, trunc, _ = env.step(raw)
    assert set(obs) == {"error"} and reward == 0.0 and not term and not trunc
    for a in env.reference_actions():
        env.step(a)
    v = env.finalize()
    assert v.components["format"] == 0.75 and v.components["task"] == 1.0


def _crash(ep):
    raise RuntimeError("component down")


class UnflaggedEnv(FhirEnv):
    """Hides that the reward is a placeholder (the pre-fix behaviour)."""

    def step(self, action):
        obs, reward, term, trunc, info = super().step(action)
        info.pop("reward_is_none", None)
        return obs, reward, term, trunc, info


def test_an_unscorable_episode_is_flagged_in_info_not_a_silent_zero(monkeypatch):
    from rewardkit.envs.fhir import verifier

    env = make("fhir/anc-threshold-v1")
    env.reset(seed=0)
    *_, (_, reward, term, _, info) = [env.step(a) for a in env.reference_actions()]
    assert term and reward == 4.1875 and "reward_is_none" not in info  # scored: no flag

    monkeypatch.setitem(verifier.COMPONENTS, "task", _crash)
    env = make("fhir/anc-threshold-v1")
    env.reset(seed=0)
    *early, (_, reward, term, _, info) = [env.step(a) for a in env.reference_actions()]
    assert env.finalize().total is None and "task" in env.finalize().errors
    assert term and type(reward) is float and reward == 0.0  # Gymnasium still gets a float
    assert info["reward_is_none"] is True
    assert "could not score" in info["reward_none_reason"]
    assert "task" not in info["reward_none_reason"]  # says that, not which: no verifier leak
    assert all("reward_is_none" not in step[4] for step in early)
    assert check_env(env).passed  # the checker accepts the flag (no forbidden key)
    bad = check_env(UnflaggedEnv("anc-threshold", env_id="fhir/anc-threshold-v1"))
    flag = next(c for c in bad.checks if c.name.startswith("final reward is the verdict"))
    assert not flag.passed and "reward_is_none=False" in flag.measured
