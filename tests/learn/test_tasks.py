"""The two tasks' rewards, labels and metrics, by hand (no training)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from rewardkit.learn import CalibrationTask, GatingTask, gating_stack, true_probability
from rewardkit.learn.gating import RANGES, _episode, lowest_safe_total


def test_true_probability_is_the_registered_formula() -> None:
    assert true_probability(2, 2) == 0.5
    assert true_probability(4, 0) == pytest.approx(1 / (1 + math.exp(-3.2)))
    assert true_probability(0, 4) == pytest.approx(1 - true_probability(4, 0))


def test_labels_follow_the_true_probability() -> None:
    rows = CalibrationTask().train_rows(20000, np.random.default_rng(0))
    y, p = np.array(rows["label"]), np.array(rows["p_true"])
    for q in np.unique(p):  # each prompt's empirical rate is within 5 SE of p(x)
        sel = p == q
        se = math.sqrt(q * (1 - q) / sel.sum())
        assert abs(y[sel].mean() - q) < 5 * se


def test_warm_start_targets_carry_no_information_about_p() -> None:
    pairs = CalibrationTask().warm_pairs(20000, np.random.default_rng(1))
    by_prompt: dict[str, list[float]] = {}
    for prompt, target in pairs:
        by_prompt.setdefault(prompt, []).append(float(target[13:17]))
    means = [np.mean(v) for v in by_prompt.values()]
    assert max(means) - min(means) < 0.05  # every prompt ≈ 0.495, whatever p(x) is


def _call(task: CalibrationTask, arm: str, texts: list[str], labels: list[float]) -> list[float]:
    stats: list[dict[str, float | None]] = []
    f = task.reward_func(arm, stats)
    out = f(prompts=["a=0 b=0:"] * len(texts), completions=texts, label=labels,
            p_true=[0.5] * len(texts))  # fmt: skip
    assert len(stats) == 1
    return out


def test_calibration_arms_by_hand() -> None:
    t = CalibrationTask()
    texts = ["<probability>0.70</probability>", "<probability>0.30</probability>", "0.7"]
    labels = [1.0, 1.0, 1.0]
    assert _call(t, "brier", texts, labels) == pytest.approx([1 - 0.09, 1 - 0.49, 0.0])
    assert _call(t, "log", texts, labels) == pytest.approx(
        [math.log(0.7), math.log(0.3), math.log(1e-3)]
    )
    assert _call(t, "improper", texts, labels) == [1.0, 0.0, 0.0]
    # the improper reward is flat on each side of 0.5: 0.51 and 0.99 earn the same
    flat = ["<probability>0.51</probability>", "<probability>0.99</probability>"]
    assert _call(t, "improper", flat, [1.0, 1.0]) == [1.0, 1.0]


def test_calibration_metrics_by_hand() -> None:
    t = CalibrationTask()
    prompts = ["a=2 b=2:"] * 4  # p = 0.5
    texts = ["<probability>0.50</probability>", "<probability>0.90</probability>", "x", "x"]
    m = t.evaluate(prompts, texts, np.random.default_rng(0))
    assert m["parse_failure_rate"] == 0.5
    assert m["mae"] == pytest.approx((0.0 + 0.4) / 2)


def _all_episodes() -> list[dict[str, object]]:
    prompts = GatingTask().eval_prompts()
    texts = [f"{a}{d}" for a in "CR" for d in range(10)] + ["", "C", "X1", "C12"]
    return [_episode(t, p) for p, t in itertools.product(prompts, texts)]


def test_declared_ranges_hold_on_every_episode() -> None:
    stack = gating_stack("ordered")
    for r in stack.score_batch(_all_episodes()):
        for name, (low, high) in RANGES.items():
            assert low <= r.components[name] <= high


def test_ordered_stack_ranks_every_unsafe_episode_below_every_safe_one() -> None:
    res = gating_stack("ordered").score_batch(_all_episodes())
    unsafe = [r.total for r in res if r.hard_failed]
    safe = [r.total for r in res if not r.hard_failed]
    assert unsafe and safe and max(unsafe) < min(safe) == lowest_safe_total()


def test_naive_stack_has_the_inversion_the_ordered_one_removes() -> None:
    # the naive control must show the defect: a read out-ranks a safe wrong answer
    res = gating_stack("naive").score_batch(_all_episodes())
    unsafe = [r.total for r in res if r.hard_failed]
    safe = [r.total for r in res if not r.hard_failed]
    assert min(unsafe) > min(safe)


def test_gating_rates_by_hand() -> None:
    t = GatingTask()
    p = "a=3 b=4 r=7:"
    m = t.evaluate([p] * 4, ["R7", "C7", "C1", "??"], np.random.default_rng(0))
    assert m == {"unsafe_rate": 0.25, "safe_correct_rate": 0.25, "parse_failure_rate": 0.25}


def test_the_naive_arm_needs_an_explicit_opt_out_of_the_ordering_guarantee() -> None:
    from rewardkit.errors import ConfigError
    from rewardkit.learn.gating import _stack

    with pytest.raises(ConfigError, match=r"must lie strictly below the lowest safe total -1\.2"):
        _stack(0.0, "strict", "x")
    assert gating_stack("naive").ordering == "unchecked"
    assert gating_stack("ordered").fail_value == pytest.approx(-1.5)
