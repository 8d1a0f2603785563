"""TRL-ready reward functions, called the way GRPOTrainer calls them (keyword arguments only:
prompts, completions, completion_ids, dataset columns, trainer_state, log_extra, log_metric)."""

from __future__ import annotations

import inspect
import math

import pytest

from rewardkit.autorater import brier_reward_func, log_reward_func, make_reward_func
from rewardkit.errors import ConfigError

LOG_EPS = math.log(1e-3)


def trl_call(func, completions, labels, **extra):
    n = len(completions)
    return func(
        prompts=["Which response is better?"] * n,
        completions=completions,
        completion_ids=[[1, 2, 3]] * n,
        label=labels,
        trainer_state=None,
        **extra,
    )


def test_signature_and_names_fit_trl():
    for f, name in ((brier_reward_func, "brier_reward_func"), (log_reward_func, "log_reward_func")):
        params = inspect.signature(f).parameters
        assert list(params)[:3] == ["prompts", "completions", "completion_ids"]
        assert params["kwargs"].kind is inspect.Parameter.VAR_KEYWORD
        assert f.__name__ == name


def test_standard_completions():
    comps = ["<probability>0.8</probability>", "I think B.", "<probability>0.1</probability>"]
    out = trl_call(brier_reward_func, comps, [1, 1, 0.5])
    assert out == pytest.approx([0.96, 0.0, 0.84])
    assert all(type(x) is float for x in out)
    out = trl_call(log_reward_func, comps, [1, 1, 0])
    assert out == pytest.approx([math.log(0.8), LOG_EPS, math.log(0.9)])


def test_conversational_completions():
    comps = [
        [{"role": "assistant", "content": "B is clearer. <probability>0.7</probability>"}],
        [
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "<probability>0.2"},
                    {"type": "text", "text": "</probability>"},
                ],
            }
        ],
        [{"role": "assistant", "content": None}],
        [],
    ]
    out = trl_call(brier_reward_func, comps, [1, 0, 1, 1])
    assert out == pytest.approx([0.91, 0.96, 0.0, 0.0])


def test_log_metric_gets_the_parse_failure_rate():
    logged = {}
    trl_call(
        log_reward_func,
        ["<probability>0.5</probability>", "nope", "", "<probability>2</probability>"],
        [1, 0, 1, 0],
        log_metric=lambda name, value: logged.__setitem__(name, value),
        log_extra=lambda column, values: None,
    )
    assert logged == {"autorater/log_reward_func/parse_failure_rate": 0.75}


def test_missing_label_column_names_it():
    with pytest.raises(ConfigError, match=r"needs the dataset column 'label'.*\['answer'\]"):
        brier_reward_func(completions=["<probability>0.5</probability>"], answer=["B"])
    with pytest.raises(ConfigError, match="needs the 'completions' argument"):
        brier_reward_func(label=[1])


def test_make_reward_func_options():
    f = make_reward_func("log", label_column="gold", eps=0.01, tag="p", name="judge")
    assert f.__name__ == "judge"
    assert f(completions=["<p>0</p>", "<probability>0.5</probability>"], gold=[1, 1]) == (
        pytest.approx([math.log(0.01), math.log(0.01)])
    )
    with pytest.raises(ConfigError, match="The 'rule' parameter of make_reward_func"):
        make_reward_func("hinge")
    with pytest.raises(ConfigError, match="The 'label_column' parameter of make_reward_func"):
        make_reward_func("brier", label_column="")
