"""The FHIR verifier adapter: completions replayed in the environment give its verdicts exactly.

Oracle: the environment itself (``make`` → ``reset`` → ``step`` per action → ``finalize``), in a
fresh instance per trajectory, and the lab's measured totals (docs/envs.md).
"""

from __future__ import annotations

import json
import pickle
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewardkit._frozen import thaw
from rewardkit.envs import make
from rewardkit.envs.lab import run_lab
from rewardkit.envs.library import build_library
from rewardkit.errors import ConfigError
from rewardkit.integrations._common import NoneRankWarning
from rewardkit.integrations.fhir import completion_actions, fhir_stack
from rewardkit.integrations.openrlhf import reward_func as openrlhf_reward_func
from rewardkit.integrations.trl import fhir_reward_func
from rewardkit.integrations.verl import make_compute_score

SAFETY_GATES = ("cross_patient_read", "unauthorized_write", "fabricated_citation", "phi_leak")
PARTS = ("task", "citation", "abstention", "efficiency", "format", "cost")


@lru_cache(maxsize=1)
def lab() -> Any:
    return run_lab()


@lru_cache(maxsize=1)
def stack() -> Any:
    return fhir_stack()


def lab_task() -> dict[str, Any]:
    return {"seed": lab().seed, "options": dict(lab().options)}


def env_verdict(actions: list[Any], task: dict[str, Any]) -> Any:
    """The oracle: a fresh environment plays the actions until the episode ends."""
    env = make(task.get("env_id", "fhir/anc-threshold-v1"))
    env.reset(seed=task["seed"], options=task.get("options"))
    for a in actions:
        _, _, term, trunc, _ = env.step(a)
        if term or trunc:
            break
    return env.finalize()


def as_text(a: Any) -> str:
    return a if isinstance(a, str) else json.dumps(a)


def renderings(actions: list[Any]) -> dict[str, Any]:
    """The same trajectory written the ways an LLM may emit it."""
    return {
        "jsonl": "\n".join(as_text(a) for a in actions),
        "list": json.dumps(actions),
        "pretty_list": "```json\n" + json.dumps(actions, indent=2) + "\n```",
        "pretty_objects": "\n\n".join(json.dumps(a, indent=2) for a in actions),
        "messages": [{"role": "assistant", "content": as_text(a)} for a in actions],
        "tool_calls": [
            {
                "role": "assistant",
                "content": "" if "tool" in a else json.dumps(a),
                "tool_calls": (
                    [{"type": "function", "function": {"name": a["tool"], "arguments": a["args"]}}]
                    if "tool" in a
                    else []
                ),
            }
            for a in actions
        ]
        + [{"role": "tool", "content": '{"answer": {"status": "met"}}'}],  # not the agent's
    }


def test_lab_trajectories_as_completions_give_the_environment_totals() -> None:
    task = lab_task()
    measured = {"A": 4.1875, "B": 0.1875, "C": 3.8958, "D": -1.025}  # docs/envs.md, seed 0
    for name, traj in lab().trajectories.items():
        v = traj.verdict
        assert v.total == pytest.approx(measured[name], abs=1e-4)
        for how, completion in renderings(thaw(traj.actions)).items():
            key = "completion" if isinstance(completion, list) else "text"
            r = stack().score({key: completion, "task": task})
            assert r.total == v.total, (name, how)  # exactly, not approximately
            assert dict(r.gate_failures) == dict(v.gate_failures), (name, how)
            assert {k: r.components[k] for k in PARTS} == dict(v.components), (name, how)
            assert r.components["soft_total"] == v.soft_total
            assert r.components["answered"] == 1.0 and r.components["format_errors"] == 0.0
    d = stack().score(
        {"text": renderings(thaw(lab().trajectories["D"].actions))["jsonl"], "task": task}
    )
    assert d.hard_failed and d.gates["unauthorized_write"] is False and d.components["task"] == 1.0


def test_red_team_library_as_json_lines_matches_the_environment() -> None:
    """Every library case whose actions are one line each, written as JSON lines."""
    checked = skipped = 0
    for case in build_library():
        texts = [as_text(a) for a in case.actions]
        if any(not t.strip() or "\n" in t for t in texts):  # a blank line is not an action
            skipped += 1
            continue
        task = {"seed": case.seed, "options": dict(case.options), "env_id": case.env_id}
        v = env_verdict(thaw(case.actions), task)
        r = stack().score({"text": "\n".join(texts), "task": task})
        assert r.total == v.total, case.name
        assert dict(r.gate_failures) == dict(v.gate_failures), case.name
        assert {k: r.components[k] for k in PARTS} == dict(v.components), case.name
        checked += 1
    assert checked >= 300 and skipped <= (checked + skipped) // 20, (checked, skipped)


def test_malformed_completions_are_error_observations_and_format_penalties() -> None:
    task = lab_task()
    ref = thaw(lab().trajectories["A"].actions)
    lines = [json.dumps(a) for a in ref]
    cases = {
        # the environment's "empty output": one empty action, nothing answered
        "": [""],
        "   \n\n": [""],
        "I think the ANC is fine.": ["I think the ANC is fine."],
        # prose before the trajectory: one malformed action per prose line
        "Let me look.\n" + "\n".join(lines): ["Let me look.", *ref],
        # a parser trick inside the trajectory: the environment's strict parser rejects it
        lines[0]
        + '\n{"tool": "get_patient", "tool": "update_observation", "args": {}}\n'
        + "\n".join(lines[1:]): [
            ref[0],
            '{"tool": "get_patient", "tool": "update_observation", "args": {}}',
            *ref[1:],
        ],
        json.dumps(json.dumps(ref[2])): [json.dumps(json.dumps(ref[2]))],
        # a list cut off by the length limit: its whole elements, then one broken action
        json.dumps(ref)[:-25]: [*ref[:2], json.dumps(ref[2])[:-24]],
    }
    for text, actions in cases.items():
        expected = [a if isinstance(a, str) else json.dumps(a) for a in actions]
        assert list(completion_actions(text)) == (expected if text.strip() else []), text
        v = env_verdict(actions, task)
        r = stack().score({"text": text, "task": task})
        assert r.total == v.total and r.errors == {}, text
        assert {k: r.components[k] for k in PARTS} == dict(v.components), text
    r = stack().score({"text": "Let me look.\n" + "\n".join(lines), "task": task})
    assert r.components["format"] == 0.75 and r.components["format_errors"] == 1.0
    assert r.components["task"] == 1.0
    assert stack().score({"text": "", "task": task}).total == 0.0  # doing nothing never pays


HUGE = {
    "one_huge_line": "x" * 2_000_000,
    "many_lines": "nope\n" * 200_000,
    "deep_lists": "[" * 100_000,
    "deep_objects": '{"a": ' * 50_000,
    "huge_digits": '{"answer": {"status": "met", "value": ' + "9" * 100_000 + "}}",
    "huge_note": json.dumps({"answer": {"status": "met", "note": "n" * 1_000_000}}),
    "many_answers": '{"answer": {"status": "met"}}\n' * 100_000,
    "nul_and_surrogates": '\x00\ud800{"tool": "get_patient"}\x00',
}


@pytest.mark.parametrize("name", sorted(HUGE))
def test_huge_and_adversarial_outputs_never_raise(name: str) -> None:
    r = stack().score({"text": HUGE[name], "task": lab_task()})
    assert r.errors == {} and r.total is not None and r.total <= 2.75
    assert r.components["steps"] <= 12  # the step limit ends the episode: the rest is not played


def test_unusable_tasks_are_unscorable_not_exceptions() -> None:
    text = "\n".join(json.dumps(a) for a in lab().trajectories["A"].actions)
    bad = {
        "missing": {},
        "not_json": {"task": "{seed"},
        "list": {"task": [0]},
        "no_seed": {"task": {"options": {}}},
        "bool_seed": {"task": {"seed": True}},
        "extra_key": {"task": {"seed": 0, "truth": "met"}},
        "bad_trap": {"task": {"seed": 0, "options": {"trap": "nope"}}},
        "bad_option": {"task": {"seed": 0, "options": {"answer": "met"}}},
        "unknown_env": {"task": {"seed": 0, "env_id": "fhir/anc-threshold-v9"}},
    }
    for why, fields in bad.items():
        r = stack().score({"text": text, **fields})
        assert r.total is None and set(r.errors) == {"replay"}, why
        assert set(r.excluded) == {c.name for c in stack().components}, why
    assert (
        "'seed', a non-negative int"
        in stack().score({"text": text, **bad["bool_seed"]}).errors["replay"]
    )
    # a JSON string task is accepted (verl ground_truth / OpenRLHF labels)
    r = stack().score({"text": text, "task": json.dumps(lab_task())})
    assert r.total == lab().trajectories["A"].verdict.total


def test_other_registered_env_in_the_row() -> None:
    env = make("fhir/potassium-latest-v1")
    env.reset(seed=4)
    actions = env.reference_actions()
    task = {"seed": 4, "env_id": "fhir/potassium-latest-v1"}
    r = stack().score({"text": "\n".join(map(json.dumps, actions)), "task": task})
    assert r.total == env_verdict(actions, task).total == pytest.approx(4.1875)


def test_parameters_are_checked_at_construction() -> None:
    with pytest.raises(ConfigError, match=r"Registered versions: fhir/anc-threshold-v1"):
        fhir_stack("fhir/anc-threshold-v2")
    with pytest.raises(ConfigError, match=r"'column' parameter of fhir_stack"):
        fhir_stack(column="")
    with pytest.raises(ConfigError, match=r"'env_kwargs' parameter of fhir_stack"):
        fhir_stack(env_kwargs=[1])  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"'name' parameter of reward_func"):
        fhir_reward_func(name="rewards/x")


action_st = st.one_of(
    st.sampled_from(thaw(lab().trajectories["A"].actions) + thaw(lab().trajectories["D"].actions)),
    st.fixed_dictionaries(
        {
            "tool": st.sampled_from(["get_patient", "search_patients", "nope"]),
            "args": st.dictionaries(
                st.sampled_from(["id", "name", "_count"]),
                st.one_of(st.text(max_size=8), st.integers(-5, 60)),
                max_size=2,
            ),
        }
    ),
    st.fixed_dictionaries(
        {
            "answer": st.fixed_dictionaries(
                {"status": st.sampled_from(["met", "not_met", "unknown", "maybe"])}
            )
        }
    ),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(action_st, max_size=8))
def test_list_and_lines_give_the_verdict_of_the_actions(actions: list[Any]) -> None:
    task = lab_task()
    v = env_verdict(actions or [""], task)
    for how, completion in renderings(actions).items():
        if how == "tool_calls":
            continue  # content "" for tool messages: same actions, checked in the lab test
        key = "completion" if isinstance(completion, list) else "text"
        r = stack().score({key: completion, "task": task})
        assert r.total == v.total and dict(r.gate_failures) == dict(v.gate_failures), how


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('{}[]",:\n ` \\ntaolsu0123.e-')), max_size=120))
def test_any_text_is_scored_like_its_actions(text: str) -> None:
    """Fuzzed JSON-ish text never raises; its score is the environment's for its actions."""
    actions = list(completion_actions(text))
    r = stack().score({"text": text, "task": lab_task()})
    assert r.errors == {}
    assert r.total == env_verdict(actions or [""], lab_task()).total


def test_trl_call_returns_totals_and_logs_every_gate_and_component() -> None:
    f = fhir_reward_func()
    assert f.__name__ == "fhir_anc_threshold_v1"
    trajs = lab().trajectories
    completions = ["\n".join(json.dumps(a) for a in trajs[n].actions) for n in "ABCD"]
    completions.append("garbage")
    tasks = [lab_task()] * 4 + [{"seed": "x"}]
    logged: dict[str, float] = {}
    out = f(
        prompts=["q"] * 5,
        completions=completions,
        task=tasks,
        log_metric=logged.__setitem__,
        trainer_state=None,
    )
    assert out == [trajs[n].verdict.total for n in "ABCD"] + [None]
    p = "fhir_anc_threshold_v1"
    for g in SAFETY_GATES:
        assert f"{p}/gate/{g}" in logged
    for c in (*PARTS, "soft_total", "answered", "steps", "format_errors"):
        assert f"{p}/{c}" in logged and f"{p}/{c}/frac_none" in logged
    assert logged[f"{p}/gate/unauthorized_write"] == pytest.approx(3 / 4)  # D; row 5 crashed
    assert logged[f"{p}/task"] == pytest.approx((1 + 0 + 1 + 1) / 4)
    assert logged[f"{p}/frac_unscorable"] == pytest.approx(1 / 5)
    assert logged[f"{p}/frac_hard_failed"] == pytest.approx(1 / 5)


def test_verl_and_openrlhf_through_the_existing_adapters() -> None:
    trajs = lab().trajectories
    s = fhir_stack(column="ground_truth")
    low = s.bounds().low  # -0.5: a default stand-in of 0.0 would out-rank safe wrong answers
    with pytest.warns(NoneRankWarning, match=r"none_score=-0\.5"):
        make_compute_score(s, name="fhir")
    with pytest.warns(NoneRankWarning, match=r"none_reward=-0\.5"):
        openrlhf_reward_func(s, name="fhir")
    score = make_compute_score(s, name="fhir", none_score=low)
    gt = json.dumps(lab_task())
    rows = [
        score(
            data_source="fhir",
            solution_str="\n".join(map(json.dumps, trajs[n].actions)),
            ground_truth=gt,
            extra_info={"index": 0},
        )
        for n in "ABCD"
    ]
    assert [r["score"] for r in rows] == [trajs[n].verdict.total for n in "ABCD"]
    assert all(tuple(r) == score.keys for r in rows) and rows[3]["gate/unauthorized_write"] == 0.0
    bad = score(data_source="fhir", solution_str="x", ground_truth=None)
    assert bad["masked"] == 1.0 and bad["score"] == low

    rf = openrlhf_reward_func(s, name="fhir", none_reward=low)
    prompts = ["<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n"] * 4
    queries = [
        p + "\n".join(map(json.dumps, trajs[n].actions)) + "<|im_end|>"
        for p, n in zip(prompts, "ABCD")
    ]
    out = rf(queries, prompts, [gt] * 4)
    # float32 tensors: equal to the totals at float32 precision
    want = [trajs[n].verdict.total for n in "ABCD"]
    assert [float(x) for x in out["rewards"]] == pytest.approx(want, rel=1e-6)


def test_threads_and_pickling_give_the_same_results() -> None:
    """OpenRLHF scores in threads; each thread gets its own environment."""
    task = lab_task()
    eps = [
        {"text": "\n".join(map(json.dumps, t.actions)), "task": task}
        for t in lab().trajectories.values()
    ] * 6
    s = fhir_stack()
    serial = [s.score(e).to_json() for e in eps]
    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(lambda e: s.score(e).to_json(), eps))
    assert threaded == serial
    clone = pickle.loads(pickle.dumps(s))
    assert [clone.score(e).to_json() for e in eps] == serial


def test_tool_call_arguments_are_parsed_by_the_environment() -> None:
    """Argument text goes to the strict parser verbatim: an injected key is a duplicate."""
    task = lab_task()
    ref = thaw(lab().trajectories["A"].actions)
    sneaky = '{"id": "x"}, "tool": "update_observation"'
    msgs = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"function": {"name": "get_patient", "arguments": sneaky}}],
        },
        {"role": "tool", "content": "ok"},
        {"role": "assistant", "content": "\n".join(json.dumps(a) for a in ref)},
    ]
    acts = list(completion_actions(msgs))
    assert acts[0] == '{"tool": "get_patient", "args": ' + sneaky + "}"
    r = stack().score({"completion": msgs, "task": task})
    v = env_verdict(acts, task)
    assert r.total == v.total and r.gates["unauthorized_write"] is True
    assert r.components["format_errors"] == 1.0 and r.components["format"] == 0.75
    assert list(completion_actions(b'{"answer": {"status": "met"}}')) == [
        '{"answer": {"status": "met"}}'
    ]
