"""A real TRL ``GRPOTrainer(environment_factory=...)`` run on CPU: the model's tool calls are
executed in the environment and ``get_reward`` reaches the logged rewards (no downloads).

The tiny model (``ToolCallingModel`` in tests/conftest.py, built locally) samples after the
generation prompt one of five whole tool-call tokens (list the warehouses, read one warehouse's
stock, the correct answer, "unknown", a write attempt), and after a tool call it ends the turn;
TRL parses the calls with its own Qwen2.5 template. The environment is the tutorial's warehouse
environment (examples/stock_env.py): its observations are short, which keeps the
character-level sequences small.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

trl = pytest.importorskip("trl", reason="the TRL run needs the [trl] extra")
torch = pytest.importorskip("torch", reason="the TRL run needs the [torch] extra")

from rewardkit.envs.registry import load  # noqa: E402
from rewardkit.integrations.trl import environment  # noqa: E402

TUTORIAL = str(Path(__file__).resolve().parents[2] / "examples" / "stock_env.py")
ENV_ID = "tutorial/stock-check-v1"
TASK = {"seed": 0, "options": {}}
# (tool call, probability) the model samples after the generation prompt
SCRIPT_P = (0.3, 0.3, 0.2, 0.1, 0.1)
SCRIPT_ACTIONS: list[dict[str, Any]] = []


def _script(stock: Any) -> list[dict[str, Any]]:
    env = stock.StockEnv(env_id=ENV_ID)
    env.reset(seed=TASK["seed"])
    ref = env.reference_actions()
    sku = ref[1]["args"]["sku"]
    SCRIPT_ACTIONS[:] = [
        {"tool": "list_warehouses", "args": {}},
        {"tool": "get_stock", "args": {"warehouse": "north", "sku": sku}},
        {"answer": ref[-1]["answer"]},
        {"answer": {"status": "unknown"}},
        {"tool": "adjust_stock", "args": {"record": "r-0", "qty": 5}},
    ]
    return SCRIPT_ACTIONS


# TRL 1.16 itself reads a property that transformers 5.24 deprecates; nothing of ours warns.
@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")
@pytest.mark.filterwarnings("ignore:You are using 'environment_factory':UserWarning")
def test_grpo_environment_factory_executes_tool_calls_and_logs_get_reward(
    grpo_config, tool_calling_model
):
    tcm = tool_calling_model
    script = tcm.calls(_script(load(TUTORIAL)))
    tokenizer = tcm.tokenizer(script)
    model = tcm.model(tokenizer, script, SCRIPT_P, positions=8192)
    Stock = environment(ENV_ID, name="StockEnvTRL")
    rewards_seen = tcm.spy_rewards(Stock)
    trainer = tcm.trainer(
        model,
        tokenizer,
        Stock,
        task=json.dumps(TASK),
        rows=4,
        args=grpo_config(
            max_completion_length=1024,
            max_tool_calling_iterations=3,
            max_steps=2,
            learning_rate=1e-6,
        ),
    )
    # TRL built the tool schemas from our methods: every manifest tool plus answer.
    names = {t.__name__ for t in trainer.tools}
    assert names == {"list_warehouses", "get_stock", "adjust_stock", "answer"}
    trainer.train()

    pool = trainer._environment_pool[None]
    calls = []
    for e in pool:  # the last step's four rollouts
        actions = e.env._actions
        tools = [a["tool"] for a in actions if "tool" in a]
        # one action per model turn: the first turn and at most 3 after tool results
        assert 1 <= len(actions) <= 4, actions
        # every tool call the model made was executed by the environment and is in its ledger
        assert [entry["tool"] for entry in e.env._ledger] == tools
        calls += tools
        assert all(
            a == {"tool": "list_warehouses", "args": {}} or a in SCRIPT_ACTIONS for a in actions
        )
    assert {"list_warehouses", "get_stock"} & set(calls), calls

    logs = [h for h in trainer.state.log_history if "rewards/StockEnvTRL/mean" in h]
    assert len(logs) == 2
    assert rewards_seen and all(r is not None for r in rewards_seen)
    # get_reward's values are what TRL logged: per step, the mean of that step's rewards.
    tcm.assert_logged_means(logs, "rewards/StockEnvTRL/mean", rewards_seen)
    tcm.assert_logged_means(logs, "reward", rewards_seen)
    # the companion logged the verifier's parts through log_metric
    assert {"StockEnvTRL/task", "StockEnvTRL/cost", "StockEnvTRL/gate/unauthorized_write"} <= set(
        logs[0]
    )


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")
@pytest.mark.filterwarnings("ignore:You are using 'environment_factory':UserWarning")
def test_grpo_environment_factory_on_the_fhir_world(grpo_config, tool_calling_model):
    """The same run on fhir/anc-threshold-v1: the model searches the patient, searches the
    Observations, answers (or writes, or gives up); the FHIR ledger records its calls."""
    from transformers.utils import get_json_schema

    env_id = "fhir/anc-threshold-v1"
    task = {"seed": 0, "options": {"trap": "none", "variant": 0}}
    Fhir = environment(env_id)
    probe = Fhir()
    prompt = probe.reset(task=task)
    ref = probe.env.reference_actions()
    actions = [
        ref[0],
        ref[1],
        {"answer": ref[-1]["answer"]},
        {"answer": {"status": "unknown"}},
        {"tool": "create_order", "args": {"patient": ref[1]["args"]["patient"], "code": "751-8"}},
    ]
    tcm = tool_calling_model
    script = tcm.calls(actions)
    corpus = [prompt] + [json.dumps(get_json_schema(getattr(probe, n))) for n in _tool_names(Fhir)]
    for a in actions[:2]:  # the observations the model will be shown
        corpus.append(getattr(probe, a["tool"])(**a["args"]))
    tokenizer = tcm.tokenizer(script, "\n".join(corpus))
    model = tcm.model(tokenizer, script, SCRIPT_P, positions=8192)
    trainer = tcm.trainer(
        model,
        tokenizer,
        Fhir,
        task=task,
        rows=2,
        args=grpo_config(
            per_device_train_batch_size=2,
            max_completion_length=6000,
            max_tool_calling_iterations=3,
            max_steps=1,
            learning_rate=1e-6,
        ),
    )
    trainer.train()
    calls = []
    for e in trainer._environment_pool[None]:
        ledger = e.env.episode().ledger
        tools = [a["tool"] for a in e.env._actions if "tool" in a]
        assert [entry.tool for entry in ledger] == tools  # every call executed and recorded
        assert all(a in actions for a in e.env._actions)
        calls += tools
    assert calls, "the model called no tool"
    (log,) = [h for h in trainer.state.log_history if "rewards/FhirAncThresholdV1/mean" in h]
    assert "FhirAncThresholdV1/gate/unauthorized_write" in log


def _tool_names(cls: type) -> list[str]:
    import inspect

    return [
        n
        for n, _ in inspect.getmembers(cls, predicate=inspect.isfunction)
        if not n.startswith("_") and n not in ("reset", "get_reward")
    ]
