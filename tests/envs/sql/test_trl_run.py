"""A real TRL ``GRPOTrainer(environment_factory=...)`` run on CPU over ``sql/revenue-v1``: the
model's tool calls run as SQL in the environment (read-only session, authorizer, ledger) and
``get_reward`` reaches the logged rewards, hard gates included (no downloads).

The tiny model (``ToolCallingModel`` in tests/conftest.py, built locally) samples after the
generation prompt one of five whole tool-call tokens — the reference query, the right answer
citing q1, "unknown", a DELETE, SELECT * on customers — and after a tool call it ends the turn.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

trl = pytest.importorskip("trl", reason="the TRL run needs the [trl] extra")
torch = pytest.importorskip("torch", reason="the TRL run needs the [torch] extra")

from rewardkit.envs import make  # noqa: E402
from rewardkit.integrations.trl import environment  # noqa: E402

ENV_ID = "sql/revenue-v1"
TASK = {"seed": 0, "options": {"trap": "refunds", "variant": 0}}
SCRIPT_P = (0.35, 0.25, 0.1, 0.15, 0.15)


def _script() -> list[dict[str, Any]]:
    env = make(ENV_ID)
    env.reset(**TASK)
    query, answer = env.reference_actions()
    return [
        query,
        {"answer": {**answer["answer"], "evidence": ["q1"]}},
        {"answer": {"status": "unknown", "evidence": ["q1"]}},
        {"tool": "query", "args": {"sql": "DELETE FROM refunds"}},
        {"tool": "query", "args": {"sql": "SELECT * FROM customers LIMIT 2"}},
    ]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")
@pytest.mark.filterwarnings("ignore:You are using 'environment_factory':UserWarning")
def test_grpo_runs_sql_tool_calls_and_logs_the_verifier(grpo_config, tool_calling_model):
    tcm = tool_calling_model
    actions = _script()
    script = tcm.calls(actions)
    tokenizer = tcm.tokenizer(script)
    model = tcm.model(tokenizer, script, SCRIPT_P, positions=16384)
    Sql = environment(ENV_ID, name="SqlRevenueTRL")
    seen = tcm.spy_rewards(Sql)
    trainer = tcm.trainer(
        model,
        tokenizer,
        Sql,
        task=json.dumps(TASK),
        rows=4,
        args=grpo_config(
            max_completion_length=2048,
            max_tool_calling_iterations=3,
            max_steps=2,
            learning_rate=1e-6,
        ),
    )
    assert {t.__name__ for t in trainer.tools} == {
        "list_tables",
        "describe_table",
        "query",
        "answer",
    }
    trainer.train()

    calls = []
    for e in trainer._environment_pool[None]:
        played = e.env._actions
        assert 1 <= len(played) <= 4, played
        assert all(a in actions for a in played), played
        queries = [a["args"]["sql"] for a in played if a.get("tool") == "query"]
        # every query the model sent was run by the session and is in the ledger, in order
        assert [x.sql for x in e.env._ledger if x.tool == "query"] == queries
        calls += queries
    assert calls, "the model called no tool"
    logs = [h for h in trainer.state.log_history if "rewards/SqlRevenueTRL/mean" in h]
    assert len(logs) == 2 and seen and all(r is not None for r in seen)
    tcm.assert_logged_means(logs, "rewards/SqlRevenueTRL/mean", seen)
    assert {"SqlRevenueTRL/task", "SqlRevenueTRL/gate/write_attempt"} <= set(logs[0])
