"""Any action whatever gives an error observation, never an exception; a snapshot records
exactly what was judged (replayed verdict == live verdict); observations are the agent's copies."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewardkit.envs import Env, make, toolenv
from rewardkit.envs import core as core_mod


@pytest.fixture(scope="module")
def env():
    return make("fhir/anc-threshold-v1")


def _deep(n, leaf):
    for _ in range(n):
        leaf = {"x": leaf}
    return leaf


def _deep_text(n):
    return '{"x":' * n + "1" + "}" * n


def weird_actions(env):
    _sp, _so, ans = env.reference_actions()
    a = ans["answer"]
    return {
        "deep_dict": _deep(5000, 1),
        "deep_list": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],
        "deep_text": _deep_text(5000),
        "deep_answer_text": '{"answer": {"status": "met", "note": ' + _deep_text(3000) + "}}",
        "bytes_utf8": json.dumps(ans).encode(),
        "bytes_not_utf8": b"\xff\xfe{",
        "nan_value": {"answer": {**a, "value": math.nan}},
        "inf_value": {"answer": {**a, "value": math.inf}},
        "tuple_evidence": {"answer": {**a, "evidence": tuple(a["evidence"])}},
        "tuple_action": ("tool", "get_patient"),
        "set_args": {"tool": "get_patient", "args": {"id": {"p-1"}}},
        "int_key": {"answer": {**a, 1: 2}},
        "neg_zero": {"answer": {**a, "value": -0.0}},
        "object": object(),
        "none": None,
        "one_mb_text": "x" * 1_000_000,
        "one_mb_note": {"answer": {**a, "note": "y" * 1_000_000}},
        "one_mb_json": json.dumps({"answer": {**a, "note": "z" * 1_000_000}}),
        "float_action": 1.5,
    }


NAMES = [
    "deep_dict",
    "deep_list",
    "deep_text",
    "deep_answer_text",
    "bytes_utf8",
    "bytes_not_utf8",
    "nan_value",
    "inf_value",
    "tuple_evidence",
    "tuple_action",
    "set_args",
    "int_key",
    "neg_zero",
    "object",
    "none",
    "one_mb_text",
    "one_mb_note",
    "one_mb_json",
    "float_action",
]


def _live_and_replay(env, actions):
    env.reset(seed=0, options={"trap": "none", "variant": 3})
    for a in actions:
        obs, *_rest = env.step(a)
        if _rest[1] or _rest[2]:
            break
    live = env.finalize().to_json()
    return live, Env.replay(env.snapshot()).to_json(), obs


@pytest.mark.parametrize("name", NAMES)
def test_any_action_is_an_error_observation_and_replays_to_the_same_verdict(env, name):
    env.reset(seed=0, options={"trap": "none", "variant": 3})
    sp, so, ans = env.reference_actions()
    action = weird_actions(env)[name]
    live, replay, _ = _live_and_replay(env, [sp, so, action, ans])
    assert live == replay
    env.reset(seed=0, options={"trap": "none", "variant": 3})
    obs = env.step(action)[0]
    if name != "bytes_utf8":  # UTF-8 JSON bytes are the reference answer itself: accepted
        assert "error" in obs, obs


def test_the_reported_nan_and_tuple_answers_score_the_same_live_and_replayed(env):
    """The issue's reproductions: a NaN value and a tuple of evidence scored 0 live and > 1.6
    when replayed (the snapshot's JSON turned NaN into null and the tuple into a list)."""
    env.reset(seed=0, options={"trap": "none", "variant": 3})
    sp, so, ans = env.reference_actions()
    for bad in (
        {"answer": {**ans["answer"], "value": math.nan}},
        {"answer": {**ans["answer"], "evidence": tuple(ans["answer"]["evidence"])}},
    ):
        live, replay, _ = _live_and_replay(env, [sp, so, bad])
        assert live == replay
        assert json.loads(live)["total"] == 0.0  # no answer was recorded: nothing pays


def test_without_the_recording_the_replay_differs(env, monkeypatch):
    monkeypatch.setattr(core_mod, "recorded_action", lambda a: a)
    env.reset(seed=0, options={"trap": "none", "variant": 3})
    sp, so, ans = env.reference_actions()
    bad = {"answer": {**ans["answer"], "evidence": tuple(ans["answer"]["evidence"])}}
    live, replay, _ = _live_and_replay(env, [sp, so, bad])
    assert live != replay


JSONISH = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
    | st.binary(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=8) | st.integers(), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        JSONISH,
        st.fixed_dictionaries({"answer": JSONISH}),
        st.fixed_dictionaries({"tool": st.sampled_from(["get_patient", "x"]), "args": JSONISH}),
    )
)
def test_generated_actions_never_raise_and_replay_exactly(action):
    env = _ENV
    live, replay, _ = _live_and_replay(env, [action])
    assert live == replay


_ENV = make("fhir/anc-threshold-v1")


def test_observations_are_copies(env):
    env.reset(seed=0, options={"trap": "none", "variant": 3})
    sp, so, ans = env.reference_actions()
    before = {
        "prompt": env.reset(seed=0, options={"trap": "none", "variant": 3})[0],
        "world": json.dumps(env.world.resource(ans["answer"]["evidence"][0]), sort_keys=True),
    }
    clean = _live_and_replay(env, [sp, so, ans])[0]
    obs0, _ = env.reset(seed=0, options={"trap": "none", "variant": 3})
    obs0["tools"].clear()  # edit the prompt's tool list
    obs1 = env.step(sp)[0]
    pid = obs1["result"]["entry"][0]["resource"]["id"]
    obs1["result"]["entry"][0]["resource"]["birthDate"] = "1900-01-01"
    obs2 = env.step(so)[0]
    res = obs2["result"]["entry"][0]["resource"]
    res["status"] = "entered-in-error"
    res["valueQuantity"]["value"] = -1
    obs2["result"]["entry"].append({"resource": {"resourceType": "Observation", "id": "o-fake"}})
    env.step(ans)
    assert env.finalize().to_json() == clean  # the verdict did not move
    assert env.world.patients[pid]["birthDate"] != "1900-01-01"
    assert json.dumps(env.world.resource(res["id"]), sort_keys=True) == before["world"]
    assert env.reset(seed=0, options={"trap": "none", "variant": 3})[0] == before["prompt"]
    assert env.heldout().reasons == ()


def test_without_the_copies_an_edit_reaches_the_world(monkeypatch):
    monkeypatch.setattr(toolenv, "copy_observation", lambda obj: obj)
    env = make("fhir/anc-threshold-v1")
    env.reset(seed=0, options={"trap": "none", "variant": 3})
    sp, _so, _ans = env.reference_actions()
    obs1 = env.step(sp)[0]
    pid = obs1["result"]["entry"][0]["resource"]["id"]
    saved = env.world.patients[pid]["birthDate"]
    obs1["result"]["entry"][0]["resource"]["birthDate"] = "1900-01-01"
    try:
        assert env.world.patients[pid]["birthDate"] == "1900-01-01"
    finally:
        env.world.patients[pid]["birthDate"] = saved
