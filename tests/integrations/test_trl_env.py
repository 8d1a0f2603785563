"""The TRL environment class (without a trainer run) and the async reward function.

The class is what TRL's ``environment_factory`` receives: its public methods must be exactly
the environment's tools plus ``answer``, each with a JSON schema that transformers can build
(TRL uses ``get_json_schema``); calls must reach the environment unchanged.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
from typing import Any

import pytest

from rewardkit.envs import make
from rewardkit.errors import ConfigError
from rewardkit.integrations.trl import (
    MixedNoneWarning,
    async_reward_func,
    environment,
    mixed_none_warning,
)
from rewardkit.stack import Component, RewardStack

TASK = {"seed": 0, "options": {"trap": "none", "variant": 0}}


def _tools(cls: type) -> list[str]:  # what TRL takes for tools: public functions on the class
    return sorted(
        n
        for n, _ in inspect.getmembers(cls, predicate=inspect.isfunction)
        if not n.startswith("_") and n not in ("reset", "get_reward")
    )


def test_fhir_class_exposes_the_manifest_and_answer_with_schemas():
    transformers = pytest.importorskip("transformers")
    Fhir = environment("fhir/anc-threshold-v1")
    assert Fhir.__name__ == "FhirAncThresholdV1"
    e = Fhir()
    manifest = sorted(t["name"] for t in e.env.tools())
    assert _tools(Fhir) == sorted([*manifest, "answer"])
    schemas = {
        n: transformers.utils.get_json_schema(getattr(e, n))["function"] for n in _tools(Fhir)
    }
    obs = schemas["search_observations"]["parameters"]
    assert obs["required"] == ["patient", "code"]
    assert obs["properties"]["_sort"]["enum"] == ["date", "-date"]
    assert obs["properties"]["_count"]["type"] == "integer"
    ans = schemas["answer"]["parameters"]
    assert ans["required"] == ["status"] and ans["properties"]["evidence"]["type"] == "array"
    assert ans["properties"]["status"]["enum"] == ["met", "not_met", "unknown"]


def test_reference_path_through_the_methods_gives_the_environment_verdict():
    Fhir = environment("fhir/anc-threshold-v1")
    e = Fhir()
    prompt = e.reset(prompt=[{"role": "user", "content": ""}], task=json.dumps(TASK))
    oracle = make("fhir/anc-threshold-v1")
    obs, _ = oracle.reset(seed=0, options=TASK["options"])
    assert prompt == obs["prompt"]
    ref = oracle.reference_actions()
    for action in ref:
        oracle.step(action)
        if "tool" in action:
            out = json.loads(getattr(e, action["tool"])(**action["args"]))
            assert "error" not in out
        else:
            e.answer(**action["answer"])
    assert e.get_reward() == oracle.finalize().total is not None
    assert len(e.env.episode().ledger) == len(ref) - 1


def test_a_wrong_argument_is_the_environments_error_and_penalty_not_an_exception():
    e = environment("fhir/anc-threshold-v1")()
    e.reset(task=TASK)
    out = json.loads(e.search_patients(nme="Maria"))  # a typo the model made
    assert "no argument 'nme'" in out["error"]
    assert e.env.episode().ledger[-1].outcome == "invalid"
    assert e.env.episode().n_format_errors == 1


def test_calls_after_the_answer_are_not_executed():
    e = environment("fhir/anc-threshold-v1")()
    e.reset(task=TASK)
    e.answer(status="unknown")
    out = json.loads(e.search_patients(name="Maria"))
    assert "episode has ended" in out["error"]
    assert e.env.episode().ledger == ()


def test_missing_or_bad_task_is_reported_not_defaulted():
    e = environment("fhir/anc-threshold-v1")()
    with pytest.raises(ConfigError, match="no task column 'task'"):
        e.reset(prompt="x")
    with pytest.raises(ConfigError, match="needs 'seed'"):
        e.reset(task={"options": {}})
    with pytest.raises(ConfigError, match="names the environment"):
        e.reset(task={"seed": 0, "env_id": "fhir/potassium-latest-v1"})


def test_get_reward_is_none_when_the_verifier_cannot_score():
    def never(ep: Any) -> float | None:
        return None

    stack = RewardStack(components=[Component("task", never)], version="never")
    e = environment("fhir/anc-threshold-v1", env_kwargs={"verifier": stack})()
    e.reset(task=TASK)
    e.answer(status="unknown")
    assert e.get_reward() is None


def test_metrics_companion_logs_a_fixed_key_set_and_never_scores():
    Fhir = environment("fhir/anc-threshold-v1")
    envs = [Fhir(), Fhir()]
    for k, e in enumerate(envs):
        e.reset(task=TASK)
        e.answer(status="unknown" if k else "met")
    logged: dict[str, float] = {}
    out = Fhir.metrics(completions=[[], []], environments=envs, log_metric=logged.__setitem__)
    assert out == [None, None]
    assert "FhirAncThresholdV1/gate/phi_leak" in logged and "FhirAncThresholdV1/task" in logged
    assert logged["FhirAncThresholdV1/frac_unscorable"] == 0.0
    assert not inspect.isfunction(Fhir.metrics)  # not a tool


def test_tutorial_environment_needs_no_fhir():
    from pathlib import Path

    from rewardkit.envs.registry import load

    load(str(Path(__file__).resolve().parents[2] / "examples" / "stock_env.py"))
    Stock = environment("tutorial/stock-check-v1")
    assert _tools(Stock) == ["adjust_stock", "answer", "get_stock", "list_warehouses"]


def test_mixed_none_warning_per_aggregation_mode():
    assert mixed_none_warning("rk", ["rk"], [1.0], "sum_then_normalize") is None
    assert mixed_none_warning("rk", ["rk", "eval"], [1.0, 0.0], "sum_then_normalize") is None
    s = mixed_none_warning("rk", ["rk", "len"], [1.0, 0.5], "sum_then_normalize")
    assert s is not None and "summed as 0" not in s and "sums a None from it as 0" in s
    g = mixed_none_warning("rk", ["rk", "len"], [1.0, 0.5], "normalize_then_sum")
    assert g is not None and "group's mean" in g
    assert issubclass(MixedNoneWarning, UserWarning)


def test_async_reward_respects_the_concurrency_limit():
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}
    release = threading.Event()

    def judge(ep: dict[str, Any]) -> float:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        release.wait(timeout=5)  # the judge waits on "the network"
        with lock:
            state["now"] -= 1
        return float(len(ep["text"]))

    f = async_reward_func(judge, max_concurrency=3)

    async def run() -> list[float | None]:
        task = asyncio.ensure_future(f(prompts=["p"] * 9, completions=["ab"] * 9))
        while state["peak"] < 3:  # wait until the limit is reached, then let them finish
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        release.set()
        return await task

    assert asyncio.run(run()) == [2.0] * 9
    assert state["peak"] == 3  # never more than the limit in flight
    with pytest.raises(ConfigError, match="max_concurrency"):
        async_reward_func(judge, max_concurrency=0)
