"""The sql family through TRL's environment_factory adapter: tools as typed methods whose JSON
schemas transformers can build (what TRL does), an episode played through them, and the
reward equal to the hidden verifier's total."""

from __future__ import annotations

import pytest

from rewardkit.integrations.trl_env import environment

transformers_utils = pytest.importorskip("transformers.utils")


def test_environment_factory_plays_an_sql_episode():
    Revenue = environment("sql/revenue-v1")
    env = Revenue()
    prompt = env.reset(task={"seed": 0, "options": {"trap": "refunds", "variant": 0}})
    assert "net revenue" in prompt
    schemas = {
        name: transformers_utils.get_json_schema(getattr(env, name))
        for name in ("list_tables", "describe_table", "query", "answer")
    }
    props = schemas["answer"]["function"]["parameters"]["properties"]
    assert props["status"]["enum"] == ["answered", "unknown"]
    assert props["ids"]["items"]["type"] == "integer"
    query, answer = env.env.reference_actions()
    out = env.query(query["args"]["sql"])
    assert '"query_id":"q1"' in out
    env.answer(status="answered", value=answer["answer"]["value"], evidence=["q1"])
    verdict = env.env.finalize()
    assert env.get_reward() == verdict.total and verdict.components["task"] == 1.0
    assert len(env.env.episode().ledger) == 1


def test_list_answers_go_through_ids():
    Top = environment("sql/top-customers-v1")
    env = Top()
    env.reset(task={"seed": 0, "options": {"trap": "ties", "variant": 0}})
    query, answer = env.env.reference_actions()
    env.query(query["args"]["sql"])
    env.answer(status="answered", ids=answer["answer"]["value"], evidence=["q1"])
    assert env.env.finalize().components["task"] == 1.0
    env.reset(task={"seed": 0, "options": {"trap": "ties", "variant": 0}})
    env.query("DELETE FROM orders")
    env.answer(status="unknown", evidence=["q1"])
    assert env.get_reward() == -1.0
