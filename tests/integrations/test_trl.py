"""The TRL adapter called exactly as GRPOTrainer._calculate_rewards calls a reward function."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewardkit.errors import ConfigError
from rewardkit.integrations.trl import levels_reward_func, reward_func
from rewardkit.stack import RewardStack


def trl_call(f: Any, prompts: list[Any], completions: list[Any], **columns: Any) -> Any:
    """What TRL passes: keywords only, columns aligned per completion, trainer hooks."""
    logged: dict[str, list[float]] = {}
    extra: dict[str, list[Any]] = {}
    out = f(
        prompts=prompts,
        completions=completions,
        completion_ids=[[1, 2, 3] for _ in completions],
        **columns,
        trainer_state=object(),
        log_extra=lambda column, values: extra.setdefault(column, []).extend(values),
        log_metric=lambda name, value: logged.setdefault(name, []).append(value),
    )
    return out, logged


def test_one_float_or_none_per_completion(stack: RewardStack) -> None:
    f = reward_func(stack, name="anc")
    texts = ["4", "5", "4 rm -rf /", "CRASH", "4"]
    gold = ["4", "4", "4", "4", None]
    out, logged = trl_call(f, ["2+2="] * 5, texts, ground_truth=gold)
    # 1.0 + 0.5·0.5; wrong; gate fails → fail_value −0.5; crash → None; no gold → fragile only
    assert out == [1.25, 0.25, -0.5, None, 0.25]
    assert f.last_results[3].errors == {"fragile": "RuntimeError: verifier crashed"}
    # exact is still computed on the gated episode ("4 rm -rf /" ≠ "4"): 1, 0, 0, 0, None
    assert logged["anc/exact"] == [pytest.approx(1 / 4)]
    assert logged["anc/exact/frac_none"] == [pytest.approx(1 / 5)]
    assert logged["anc/gate/no_rm"] == [pytest.approx(4 / 5)]
    assert logged["anc/frac_hard_failed"] == [pytest.approx(1 / 5)]
    assert logged["anc/frac_unscorable"] == [pytest.approx(1 / 5)]
    assert logged["anc/frac_errors"] == [pytest.approx(1 / 5)]
    assert logged["anc/length"] == [pytest.approx(sum(map(len, texts)) / 5)]


def test_metric_keys_are_fixed_and_nan_when_nothing_scored(stack: RewardStack) -> None:
    f = reward_func(stack, name="anc")
    _, a = trl_call(f, ["p"], ["x"], ground_truth=[None])
    _, b = trl_call(f, ["p", "q"], ["4", "y"], ground_truth=["4", "1"])
    assert sorted(a) == sorted(b)  # every process must log the same keys
    assert math.isnan(a["anc/exact"][0])  # TRL drops NaN from the mean; never a fake 0
    assert a["anc/exact/frac_none"] == [1.0]


def test_conversational_completions_are_message_lists(stack: RewardStack) -> None:
    f = reward_func(stack, name="anc")
    prompts = [[{"role": "user", "content": "2+2?"}]] * 2
    completions = [
        [{"role": "assistant", "content": "4"}],
        [{"role": "assistant", "content": [{"type": "text", "text": "5"}]}],
    ]
    out, _ = trl_call(f, prompts, completions, ground_truth=["4", "4"])
    assert out == [1.25, 0.25]
    ep = f.episodes(prompts, completions, None, {"ground_truth": ["4", "4"]})[0]
    assert ep["completion"] == completions[0] and ep["text"] == "4"
    assert ep["prompt"] == prompts[0]


def test_stable_name_as_trl_reads_it(stack: RewardStack) -> None:
    utils = pytest.importorskip("trl.trainer.utils")
    assert utils.get_callable_name(reward_func(stack, name="anc")) == "anc"
    assert utils.get_callable_name(reward_func(stack)) == "rewardkit_it_v1"
    assert not utils.is_async_callable(reward_func(stack))

    def exact_match(ep: dict[str, Any]) -> float:
        return float(ep["text"] == ep["ground_truth"])

    f = reward_func(exact_match)
    assert utils.get_callable_name(f) == "exact_match"
    assert trl_call(f, ["p", "p"], ["a", "b"], ground_truth=["a", "a"])[0] == [1.0, 0.0]


def test_plain_function_crash_is_data_not_a_crash() -> None:
    def boom(ep: dict[str, Any]) -> float:
        raise ValueError("bad parse")

    f = reward_func(boom)
    out, logged = trl_call(f, ["p"], ["a"])
    assert out == [None]
    assert f.last_results[0].errors == {"boom": "ValueError: bad parse"}
    assert logged["boom/frac_errors"] == [1.0]


def test_bad_arguments_name_the_parameter(stack: RewardStack) -> None:
    with pytest.raises(ConfigError, match=r"'name' parameter of reward_func is required"):
        reward_func(lambda ep: 1.0)
    with pytest.raises(ConfigError, match=r"'name' parameter of reward_func must be"):
        reward_func(stack, name="a b")
    with pytest.raises(ConfigError, match=r"'stack_or_fn' parameter of reward_func"):
        reward_func(3)  # type: ignore[arg-type]
    f = reward_func(stack, name="anc")
    with pytest.raises(ConfigError, match=r"'ground_truth' parameter of reward function 'anc'"):
        f(prompts=["p", "q"], completions=["a", "b"], ground_truth=["a"])
    with pytest.raises(ConfigError, match=r"dataset column 'text' .* collides"):
        f(prompts=["p"], completions=["a"], text=["b"])
    with pytest.raises(ConfigError, match=r"'completions' parameter .* is required"):
        f(prompts=["p"])


def test_levels_adapter_reads_the_judgment_column() -> None:
    f = levels_reward_func(column="judged")
    rows = [[3] * 12 + [0], [3] * 12, [-1, -1], [{"level": 2, "review": "final"}, 3], [9]]
    out, logged = trl_call(f, ["p"] * 5, ["c"] * 5, judged=rows)
    # seed 000 worked numbers: 12/13·0.85·0.30 and 0.85; all masked → None; (0.60+0.85)/2
    assert out[0] == pytest.approx(12 / 13 * 0.85 * 0.30)
    assert out[1] == pytest.approx(0.85)
    assert out[2] is None
    assert out[3] == pytest.approx((0.60 + 0.85) / 2)
    assert out[4] is None and "trajectory" in f.last_results[4].errors  # level 9 is not mapped
    assert f.__name__ == "levels_B"
    assert logged["levels_B/has_l0"] == [pytest.approx(1 / 3)]  # rows 0, 1, 3 (row 2 masked)


# the stack is stateless, so sharing the fixture across examples is safe
@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(st.sampled_from(["4", "5", "CRASH", "rm -rf", ""]), st.sampled_from(["4", None])),
        min_size=1,
        max_size=12,
    )
)
def test_returns_exactly_the_stack_totals(
    stack: RewardStack, rows: list[tuple[str, str | None]]
) -> None:
    s = stack
    f = reward_func(s, name="anc")
    texts = [t for t, _ in rows]
    gold = [g for _, g in rows]
    out, _ = trl_call(f, ["p"] * len(rows), texts, ground_truth=gold)
    assert len(out) == len(rows)
    expected = [s.score({"text": t, "ground_truth": g}).total for t, g in rows]
    assert out == expected
