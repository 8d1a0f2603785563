"""RewardStack: hard gates first, components always logged, failures recorded not raised."""

from __future__ import annotations

import functools
import json

import pytest

from rewardkit.errors import ConfigError
from rewardkit.stack import Component, Gate, GateOutcome, RewardResult, RewardStack


def task(ep):
    return ep.get("task")


def cost(ep):
    return -0.1 * ep.get("calls", 0)


def no_write(ep):
    writes = tuple(ep.get("writes", ()))
    return GateOutcome(not writes, writes)


def boom(ep):
    raise RuntimeError("verifier exploded")


def make(**kw):
    return RewardStack(
        gates=[Gate("no_write", no_write), Gate("scope", lambda ep: ep.get("patient") == "p1")],
        components=[
            Component("task", task),
            Component("cost", cost, weight=0.5, range=(-1.0, 0.0)),
            Component("length", lambda ep: 42.0, weight=0.0),
        ],
        version="t-v1",
        **kw,
    )


def test_clean_episode_sums_weighted_components():
    r = make().score({"task": 1.0, "calls": 2, "patient": "p1"})
    assert r.total == pytest.approx(1.0 - 0.1)
    assert not r.hard_failed and r.gate_failures == {} and r.errors == {}
    assert r.components == {"task": 1.0, "cost": pytest.approx(-0.2), "length": 42.0}
    assert r.gates == {"no_write": True, "scope": True}


def test_failed_gate_gives_fail_value_and_components_are_still_reported():
    r = make(fail_value=-1.0).score(
        {"task": 1.0, "calls": 1, "writes": ["w1", "w2"], "patient": "p1"}
    )
    assert r.hard_failed and r.total == -1.0
    assert r.gate_failures == {"no_write": ("w1", "w2")}
    assert r.components["task"] == 1.0 and r.components["length"] == 42.0
    assert r.gates["no_write"] is False


def test_bare_bool_gate():
    r = make().score({"task": 1.0, "patient": "p2"})
    assert r.hard_failed and r.gate_failures == {"scope": ()}
    # fail_value="below" (the default): lowest safe total −0.5 minus 0.1 × the span 1.5
    assert r.total == pytest.approx(-0.65) and make().fail_value == r.total


def test_none_components_are_excluded_and_listed():
    r = make().score({"task": None, "calls": 1, "patient": "p1"})
    assert r.excluded == ("task",)
    assert r.components["task"] is None
    assert r.total == pytest.approx(-0.05)
    rec = r.to_record()
    assert rec["reward/task"] is None  # never logged as 0


def test_nan_component_is_an_error_not_a_silent_exclusion():
    r = make().score({"task": float("nan"), "patient": "p1"})
    assert r.errors["task"] == (
        "ValueError: component 'task' returned nan; return None when it cannot score"
    )
    assert r.total is None and r.components["task"] is None and "task" in r.excluded


def test_all_weighted_components_none_gives_none_total():
    stack = RewardStack(components=[Component("task", task)])
    assert stack.score({"task": None}).total is None


def test_raising_component_is_recorded_and_batch_survives():
    stack = RewardStack(components=[Component("task", task), Component("judge", boom)])
    rs = stack.score_batch([{"task": 1.0}, {"task": 0.0}])
    for r in rs:
        assert r.errors == {"judge": "RuntimeError: verifier exploded"}
        assert r.total is None
        assert r.components["judge"] is None and "judge" in r.excluded
        assert r.components["task"] is not None


def test_on_error_fail_and_raise():
    comps = [Component("task", task), Component("judge", boom)]
    r = RewardStack(components=comps, on_error="fail", fail_value=-2.0).score({"task": 1.0})
    assert r.total == -2.0 and not r.hard_failed and "judge" in r.errors
    with pytest.raises(RuntimeError, match="verifier exploded"):
        RewardStack(components=comps, on_error="raise").score({"task": 1.0})


def test_raising_gate_is_recorded_and_a_failed_gate_dominates():
    stack = RewardStack(
        gates=[Gate("crash", boom), Gate("scope", lambda ep: ep["ok"])],
        components=[Component("task", task)],
    )
    r = stack.score({"task": 1.0, "ok": True})
    assert r.total is None and r.errors["crash"].startswith("RuntimeError")
    assert r.gates == {"crash": None, "scope": True}
    assert r.to_record()["gate/crash"] is None
    r = stack.score({"task": 1.0, "ok": False})
    assert r.hard_failed and r.total == pytest.approx(-0.1)


def test_bad_return_types_are_errors_on_the_result():
    stack = RewardStack(
        gates=[Gate("g", lambda ep: "yes")], components=[Component("c", lambda ep: "1.0")]
    )
    r = stack.score({})
    assert "returned str" in r.errors["g"] and "returned str" in r.errors["c"]


def test_to_record_keys():
    r = make().score({"task": 1.0, "calls": 0, "patient": "p1"})
    assert set(r.to_record()) == {
        "reward/total",
        "reward/hard_failed",
        "reward/task",
        "reward/cost",
        "reward/length",
        "gate/no_write",
        "gate/scope",
    }
    assert r.to_record()["gate/scope"] == 1


def test_version_and_config_hash_in_every_result():
    a, b = make(), make()
    r = a.score({"task": 1.0, "patient": "p1"})
    assert r.version == "t-v1"
    assert r.config_hash == b.config_hash and r.config_hash.startswith("sha256:")
    other = RewardStack(components=[Component("task", task, weight=2.0)], version="t-v1")
    assert other.config_hash != a.config_hash
    parsed = json.loads(r.to_json())
    assert parsed["config_hash"] == a.config_hash


def test_partial_functions_have_stable_config():
    def scaled(ep, k):
        return k * ep["task"]

    s1 = RewardStack(components=[Component("t", functools.partial(scaled, k=2), range=(0, 2))])
    s2 = RewardStack(components=[Component("t", functools.partial(scaled, k=2), range=(0, 2))])
    assert s1.config_hash == s2.config_hash
    assert s1.score({"task": 1.0}).total == 2.0


def test_renormalize():
    stack = RewardStack(
        components=[
            Component("a", lambda ep: ep["a"]),
            Component("b", lambda ep: ep["b"], weight=3.0),
        ],
        renormalize=True,
    )
    assert stack.score({"a": 1.0, "b": None}).total == pytest.approx(4.0)
    assert stack.score({"a": 1.0, "b": 1.0}).total == pytest.approx(4.0)


@pytest.mark.parametrize(
    "build, match",
    [
        (
            lambda: RewardStack(components=[Component("a", task, weight=0.0)]),
            r"at least one component with a non-zero weight",
        ),
        (
            lambda: RewardStack(gates=[Gate("a", no_write)], components=[Component("a", task)]),
            r"'a' appears twice",
        ),
        (
            lambda: RewardStack(components=[Component("a", task)], on_error="ignore"),
            r"The 'on_error' parameter of RewardStack must be one of 'none', 'fail', 'raise'\. "
            r"Got 'ignore'\.",
        ),
        (
            lambda: RewardStack(components=[Component("a", task)], fail_value=float("inf")),
            r"The 'fail_value' parameter of RewardStack must be one of 'below' or a finite "
            r"float\. Got inf\.",
        ),
        (
            lambda: RewardStack(components=[Component("a", task)], version=""),
            r"The 'version' parameter of RewardStack must be a non-empty string",
        ),
        (lambda: RewardStack(components=[task]), r"must hold Component objects\. Got function"),
        (lambda: Component("total", task), r"must not be one of \('total', 'hard_failed'\)"),
        (lambda: Component("a/b", task), r"without '/'"),
        (lambda: Component("a", task, weight="1"), r"The 'weight' parameter of Component 'a'"),
        (lambda: Component("a", 1.0), r"The 'fn' of Component 'a' must be callable"),
        (lambda: Gate("g", None), r"The 'check' of Gate 'g' must be callable"),
    ],
)
def test_bad_configuration_is_named(build, match):
    with pytest.raises(ConfigError, match=match):
        build()


def test_result_is_frozen():
    r = make().score({"task": 1.0, "patient": "p1"})
    assert isinstance(r, RewardResult)
    with pytest.raises(AttributeError):
        r.total = 5.0  # type: ignore[misc]


def test_required_component_none_makes_total_none():
    stack = RewardStack(
        components=[
            Component("task", task, required=True),
            Component("cost", cost, weight=0.5, range=(-1.0, 0.0)),
        ]
    )
    r = stack.score({"task": None, "calls": 1})
    assert r.total is None and r.excluded == ("task",)
    assert r.components["cost"] == pytest.approx(-0.1)
    assert stack.score({"task": 1.0, "calls": 1}).total == pytest.approx(0.95)
    with pytest.raises(ConfigError, match=r"The 'required' parameter of Component 'a' must be"):
        Component("a", task, required="yes")


def test_code_hash_changes_with_code_and_config_hash_with_bound_arguments():
    def k(ep, scale):
        return scale * ep["task"]

    a = RewardStack(components=[Component("t", lambda ep: ep["a"])])
    b = RewardStack(components=[Component("t", lambda ep: ep["b"])])
    assert a.config_hash == b.config_hash  # same names and weights: the portable configuration
    assert a.code_hash != b.code_hash  # but the code differs
    p2 = RewardStack(components=[Component("t", functools.partial(k, scale=2))])
    p3 = RewardStack(components=[Component("t", functools.partial(k, scale=3))])
    assert p2.config_hash != p3.config_hash
