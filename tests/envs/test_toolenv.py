"""ToolEnv: what every tool family shares holds in each of them (fhir/*, sql/*)."""

from __future__ import annotations

import pytest

from rewardkit._json import canonical_json
from rewardkit.envs import make, registered, toolenv
from rewardkit.envs.toolenv import ToolEnv

ONE_PER_FAMILY = ["fhir/anc-threshold-v1", "sql/revenue-v1"]


def test_every_shipped_tool_family_is_a_toolenv():
    shipped = [i for i in registered() if i.split("/")[0] in ("fhir", "sql")]
    assert len(shipped) == 8
    assert all(isinstance(make(i), ToolEnv) for i in shipped)


def _scramble(obj):
    """Edit every container of an observation in place, as a careless agent loop might."""
    if isinstance(obj, dict):
        for v in obj.values():
            _scramble(v)
        obj["edited"] = True
    elif isinstance(obj, list):
        for v in obj:
            _scramble(v)
        obj.append("edited")


def _edit_first_observation(env_id: str) -> tuple[str, str]:
    env = make(env_id)
    env.reset(seed=0)
    obs = env.step(env.reference_actions()[0])[0]
    before = canonical_json(env.episode().observations)
    _scramble(obs)
    return before, canonical_json(env.episode().observations)


@pytest.mark.parametrize("env_id", ONE_PER_FAMILY)
def test_the_agent_gets_a_copy_of_every_observation(env_id):
    before, after = _edit_first_observation(env_id)
    assert before == after


@pytest.mark.parametrize("env_id", ONE_PER_FAMILY)
def test_without_the_copy_an_edit_reaches_the_episode(env_id, monkeypatch):
    """The defence removed: the same edit now changes what the verifiers score."""
    monkeypatch.setattr(toolenv, "copy_observation", lambda obj: obj)
    before, after = _edit_first_observation(env_id)
    assert before != after and '"edited"' in after


@pytest.mark.parametrize(
    "env_id, costs", [(ONE_PER_FAMILY[0], "costs"), (ONE_PER_FAMILY[1], "costs at least")]
)
def test_a_call_over_budget_truncates_and_runs_nothing(env_id, costs):
    env = make(env_id, budget=0.05)
    env.reset(seed=0)
    first = env.reference_actions()[0]
    obs, _, term, trunc, info = env.step(first)
    cost = env.manifest.get(first["tool"]).cost
    assert obs == {"error": f"budget exhausted: {first['tool']} {costs} {cost:g}, 0.05 left"}
    assert trunc and not term and info["cost_spent"] == 0.0
    assert [e.outcome for e in env.episode().ledger] == ["over_budget"]


@pytest.mark.parametrize("env_id", ONE_PER_FAMILY)
def test_an_unknown_tool_is_a_format_error(env_id):
    env = make(env_id)
    env.reset(seed=0)
    obs, _, term, trunc, _ = env.step({"tool": "drop_everything", "args": {}})
    assert obs == {"error": env.manifest.unknown_tool("drop_everything")}
    assert not term and not trunc
    ep = env.episode()
    assert ep.n_format_errors == 1 and [e.outcome for e in ep.ledger] == ["invalid"]
