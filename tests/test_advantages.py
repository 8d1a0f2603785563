"""Group advantages against reference computations of TRL's and verl's formulas."""

from __future__ import annotations

import json
import statistics
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rewardkit.advantages import group_advantages, minimum_pass
from rewardkit.errors import ConfigError, ZeroVarianceWarning


def trl_reference(rewards, G, eps=1e-4):
    """TRL GRPOTrainer, scale_rewards="group": (r - mean) / (std_unbiased + 1e-4), per group of
    G contiguous completions (rewards.view(-1, G).mean/std, repeat_interleave)."""
    out = []
    for g in range(len(rewards) // G):
        chunk = rewards[g * G : (g + 1) * G]
        m, s = statistics.fmean(chunk), statistics.stdev(chunk)
        out += [(r - m) / (s + eps) for r in chunk]
    return out


def verl_reference(scores, index, eps=1e-6):
    """verl compute_grpo_outcome_advantage: id2score by uid, torch.mean / torch.std."""
    by = {}
    for s, i in zip(scores, index):
        by.setdefault(i, []).append(s)
    out = []
    for s, i in zip(scores, index):
        grp = by[i]
        m, sd = statistics.fmean(grp), statistics.stdev(grp)
        out.append((s - m) / (sd + eps))
    return out


@pytest.mark.parametrize("seed", range(5))
def test_zscore_matches_trl(seed):
    rng = np.random.default_rng(seed)
    G = int(rng.integers(2, 17))
    rewards = rng.normal(size=G * int(rng.integers(1, 9))).tolist()
    adv = group_advantages(rewards, G, eps=1e-4)
    np.testing.assert_allclose(adv.values, trl_reference(rewards, G), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_zscore_matches_verl_with_shuffled_uids(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(8, 64))
    index = [f"uid-{u}" for u in rng.integers(0, 5, size=n)]
    # every uid needs >= 2 samples for a defined std in both implementations
    index = [i for i in index if index.count(i) >= 2]
    scores = rng.uniform(0, 1, size=len(index)).tolist()
    adv = group_advantages(scores, index, eps=1e-6)
    np.testing.assert_allclose(adv.values, verl_reference(scores, index), rtol=1e-10, atol=1e-12)
    assert adv.group_ids == tuple(dict.fromkeys(index))


def test_center_is_dr_grpo():
    rewards = [1.0, 0.0, 0.5, 0.25, 0.75, 0.0]
    adv = group_advantages(rewards, 3, method="center")
    np.testing.assert_allclose(
        adv.values, [0.5, -0.5, 0.0, -0.08333333333333333, 0.41666666666666663, -0.3333333333333333]
    )


def test_jitter_is_amplified_by_zscore_and_not_by_maxnorm():
    jitter = [0.5] * 15 + [0.501]
    z = group_advantages(jitter, 16, method="zscore", eps=1e-6)
    # hand computation: u = 0.001 * 15/16, std = 0.001 / 4 → u / (std + 1e-6) = 3.7350...
    assert z.max_abs == pytest.approx(0.0009375 / (0.00025 + 1e-6), rel=1e-6)
    assert z.max_abs == pytest.approx(3.74, abs=0.01)
    m = group_advantages(jitter, 16, method="maxnorm", resolution=1e-2)
    assert m.max_abs <= 0.1
    assert m.max_abs == pytest.approx(0.0009375 / 1e-2)
    assert m.low_variance_groups == (0,)


@given(st.lists(st.floats(-10, 10, allow_nan=False), min_size=2, max_size=32), st.floats(1e-6, 1.0))
def test_maxnorm_bounded_and_never_amplifies_sub_resolution_gaps(rewards, resolution):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroVarianceWarning)
        a = group_advantages(rewards, len(rewards), method="maxnorm", resolution=resolution)
    assert np.all(np.abs(a.values) <= 1.0 + 1e-12)
    u = np.asarray(rewards) - np.mean(rewards)
    # |A| = |u| / max(max|u|, δ) <= |u| / δ: a gap below δ never becomes larger than itself/δ
    assert np.all(np.abs(a.values) <= np.abs(u) / resolution + 1e-9)
    if np.ptp(rewards) <= resolution:
        assert np.all(np.abs(a.values) <= np.ptp(rewards) / resolution + 1e-9)


def test_none_and_nan_rewards_are_excluded():
    rewards = [1.0, None, 0.0, float("nan"), 0.5, 0.5]
    adv = group_advantages(rewards, [0, 0, 0, 0, 1, 1], eps=1e-6)
    assert adv.n_excluded == 2
    assert np.isnan(adv.values[1]) and np.isnan(adv.values[3])
    ref = verl_reference([1.0, 0.0], ["a", "a"])
    np.testing.assert_allclose(adv.values[[0, 2]], ref)
    assert adv.group_size.tolist() == [2, 2]
    assert adv.tolist()[1] is None
    assert adv.frac_zero_std == 0.5  # group 1 has two equal rewards


def test_singleton_and_empty_groups():
    adv = group_advantages([1.0, None, None, 0.3, 0.7], ["a", "b", "c", "c", "c"])
    assert adv.values[0] == 0.0 and adv.singleton_groups == ("a",)
    assert np.isnan(adv.group_mean[1]) and np.isnan(adv.group_std[1])
    assert adv.group_size.tolist() == [1, 0, 2]
    assert json.loads(adv.to_json())["group_mean"][1] is None
    assert np.isnan(adv.values[1])


def test_drop_routing_is_reported():
    rewards = [0.5, 0.5005, 0.4998, 0.0, 1.0, 0.5]
    adv = group_advantages(rewards, 3, resolution=1e-2, on_low_variance="drop")
    assert adv.dropped_groups == (0,) and adv.low_variance_groups == (0,)
    assert np.all(adv.values[:3] == 0.0)
    np.testing.assert_allclose(adv.values[3:], verl_reference(rewards[3:], [1, 1, 1]))
    keep = group_advantages(rewards, 3, resolution=1e-2, on_low_variance="keep")
    assert keep.dropped_groups == () and keep.low_variance_groups == (0,)
    assert keep.max_abs > 1.0
    mx = group_advantages(rewards, 3, resolution=1e-2, on_low_variance="maxnorm")
    assert np.all(np.abs(mx.values[:3]) <= 0.1)
    np.testing.assert_allclose(mx.values[3:], keep.values[3:])


def test_zero_variance_batch_warns():
    with pytest.warns(ZeroVarianceWarning, match="every group with at least 2 rewards has zero"):
        adv = group_advantages([1.0, 1.0, 0.0, 0.0], 2)
    assert adv.frac_zero_std == 1.0 and np.all(adv.values == 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        group_advantages([1.0, 1.0, 0.0, 1.0], 2)


def test_eps_zero_handles_zero_std_group():
    with pytest.warns(ZeroVarianceWarning):
        adv = group_advantages([2.0, 2.0], 2, eps=0.0)
    assert np.all(adv.values == 0.0)


def test_to_json_is_deterministic_and_has_nulls():
    adv = group_advantages([1.0, None, 0.0, 0.5], ["x", "x", "y", "y"])
    text = adv.to_json()
    assert text == group_advantages([1.0, None, 0.0, 0.5], ["x", "x", "y", "y"]).to_json()
    assert '"values":[' in text and "null" in text


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (
            {"method": "rank"},
            r"The 'method' parameter of group_advantages must be one of 'zscore', "
            r"'center', 'maxnorm'\. Got 'rank'\.",
        ),
        ({"eps": -1.0}, r"The 'eps' parameter of group_advantages must be a float in \[0, inf\)"),
        (
            {"resolution": 0.0},
            r"The 'resolution' parameter of group_advantages must be a float in "
            r"\(0, inf\) or None\. Got 0\.0\.",
        ),
        (
            {"on_low_variance": "drop"},
            r"'on_low_variance' parameter of group_advantages needs a "
            r"'resolution'",
        ),
        ({"groups": 3}, r"as a group size must divide the number of rewards \(4\)\. Got 3\."),
        ({"groups": [0, 1]}, r"one group id per reward \(4\) or a group size\. Got 2 ids\."),
        (
            {"groups": 0},
            r"The 'groups' parameter of group_advantages must be an int >= 1\. Got 0\.",
        ),
        ({"groups": [[0], [0], [1], [1]]}, r"Group ids given to group_advantages must be hashable"),
    ],
)
def test_bad_parameters_are_named(kwargs, match):
    args = {"groups": 2, **kwargs}
    with pytest.raises(ConfigError, match=match):
        group_advantages([1.0, 0.0, 1.0, 0.5], **args)


def test_bad_rewards_are_named():
    with pytest.raises(ConfigError, match=r"finite floats or None\. Got inf at index 1"):
        group_advantages([1.0, float("inf")], 2)
    with pytest.raises(ConfigError, match=r"sequence of floats or None"):
        group_advantages([1.0, "x"], 2)


def test_minimum_pass():
    rewards = [0.9, 0.2, 0.5, 0.1, None, None, 0.8, 0.79]
    mp = minimum_pass(rewards, 2, threshold=0.8)
    assert mp.n_groups == 3 and mp.n_pass == 2 and mp.frac_pass == pytest.approx(2 / 3)
    assert mp.best == (0.9, 0.5, None, 0.8)
    assert mp.failing_groups == (1,) and mp.empty_groups == (2,)
    with pytest.raises(ConfigError, match=r"The 'threshold' parameter of minimum_pass"):
        minimum_pass(rewards, 2, threshold=None)


@pytest.mark.parametrize(
    "groups",
    [
        [3, 1, 3, 2, 1, 2],
        np.array([3, 1, 3, 2, 1, 2]),
        ["c", "a", "c", "b", "a", "b"],
        np.array(["c", "a", "c", "b", "a", "b"]),
        [("c",), ("a",), ("c",), ("b",), ("a",), ("b",)],
        [3, "a", 3, 2.5, "a", 2.5],
    ],
)
def test_group_ids_keep_first_appearance_order_on_every_path(groups):
    rewards = [0.0, 1.0, 1.0, 0.2, 0.0, 0.6]
    adv = group_advantages(rewards, groups, method="center")
    np.testing.assert_allclose(adv.values, [-0.5, 0.5, 0.5, -0.2, -0.5, 0.2])
    assert len(adv.group_ids) == 3
    assert [adv.group_ids.index(g) for g in (groups[0], groups[1], groups[3])] == [0, 1, 2]
    assert adv.group_mean.tolist() == pytest.approx([0.5, 0.5, 0.4])
