"""SFT targets from dense labels, the swap test for position bias, ECE and the reliability
diagram."""

from __future__ import annotations

import math
import sys
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.calibration import calibration_curve

from rewardkit.autorater import (
    expected_calibration_error,
    parse_probability,
    position_consistency,
    preference_target,
    reliability_diagram,
)
from rewardkit.errors import ConfigError, MissingExtraError

# --- preference_target ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("votes", "text"),
    [
        (["B", "B", "A"], "<probability>0.67</probability>"),
        (["B"] + ["A"] * 7, "<probability>0.13</probability>"),  # 0.125: halves round up
        (["B"] * 3, "<probability>1.00</probability>"),
        (["A"] * 4, "<probability>0.00</probability>"),
        ([1, 0, 0.5, 1], "<probability>0.63</probability>"),  # 2.5 / 4 = 0.625
        ([0.3], "<probability>0.30</probability>"),  # not 0.29999… from binary floats
        (
            [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            "<probability>0.05</probability>",
        ),
    ],
)
def test_preference_target_rounding(votes, text):
    assert preference_target(votes) == text


def test_preference_target_decimals_and_tag():
    assert preference_target(["B", "A", "A"], decimals=3) == "<probability>0.333</probability>"
    assert preference_target(["B"], tag="p") == "<p>1.00</p>"


@given(st.lists(st.sampled_from(["A", "B"]), min_size=1, max_size=200), st.integers(1, 4))
def test_preference_target_parses_back_to_the_rounded_share(votes, decimals):
    q = Fraction(votes.count("B"), len(votes))
    p = parse_probability(preference_target(votes, decimals=decimals))
    assert p is not None
    assert abs(Fraction(p) - q) <= Fraction(1, 2 * 10**decimals) + Fraction(1, 10**15)


@pytest.mark.parametrize(
    ("votes", "match"),
    [
        ([], "non-empty sequence"),
        ("BBA", "non-empty sequence"),
        (["B", "C"], r"Got 'C' at index 1"),
        ([1, 2], r"Got 2 at index 1"),
        ([True], r"Got True at index 0"),
        ([math.nan], r"Got nan at index 0"),
    ],
)
def test_preference_target_bad_votes(votes, match):
    with pytest.raises(ConfigError, match=match):
        preference_target(votes)


def test_preference_target_bad_decimals():
    with pytest.raises(ConfigError, match="The 'decimals' parameter of preference_target"):
        preference_target(["A"], decimals=0)


# --- position_consistency ------------------------------------------------------------------------


def test_position_consistency_hand_values():
    # pairs: consistent (0.8, 0.2); flipped by position (0.7, 0.6); tie both ways (0.5, 0.5);
    # an invalid pair (None).
    pc = position_consistency([0.8, 0.7, 0.5, None], [0.2, 0.6, 0.5, 0.4])
    assert pc.n_pairs == 4 and pc.n_valid == 3
    assert pc.consistency == pytest.approx(2 / 3)
    assert pc.mean_abs_gap == pytest.approx((0.0 + 0.3 + 0.0) / 3)
    assert pc.max_abs_gap == pytest.approx(0.3)
    assert pc.mean_position_bias == pytest.approx(0.1)  # favours the response shown second


def test_position_consistency_of_a_perfect_rater():
    p = np.random.default_rng(3).uniform(size=100)
    pc = position_consistency(p, 1 - p)
    assert pc.consistency == 1.0
    assert pc.max_abs_gap == pytest.approx(0.0, abs=1e-15)


def test_position_consistency_no_valid_pair_gives_none():
    pc = position_consistency([None, math.nan], [0.5, 0.5])
    assert (pc.n_valid, pc.consistency, pc.mean_abs_gap) == (0, None, None)
    assert pc.to_json() == pc.to_json()


def test_position_consistency_length_mismatch():
    with pytest.raises(ConfigError, match=r"one entry per pair\. Got 2 and 1"):
        position_consistency([0.1, 0.2], [0.3])


# --- ECE -----------------------------------------------------------------------------------------


def test_ece_hand_example():
    # Two bins of 4: bin [0.2, 0.4) has p = 0.3 and one B in four (|0.25 − 0.3| = 0.05);
    # bin [0.8, 1.0] has p = 0.9 and four Bs (|1 − 0.9| = 0.1). ECE = 0.5·0.05 + 0.5·0.1.
    cal = expected_calibration_error([0.3] * 4 + [0.9] * 4, [1, 0, 0, 0] + [1] * 4, n_bins=5)
    assert cal.ece == pytest.approx(0.075, abs=1e-12)
    assert cal.bin_counts == (0, 4, 0, 0, 4)
    assert cal.bin_mean_p[1] == pytest.approx(0.3) and cal.bin_mean_y[4] == 1.0
    assert cal.bin_mean_p[0] is None


def test_ece_bin_edges_are_half_open_and_one_is_in_the_last_bin():
    cal = expected_calibration_error([0.0, 0.1, 0.2, 0.9, 1.0], [0, 0, 0, 1, 1], n_bins=10)
    assert cal.bin_counts == (1, 1, 1, 0, 0, 0, 0, 0, 0, 2)


def test_ece_matches_sklearn_calibration_curve():
    rng = np.random.default_rng(4)
    p = rng.uniform(size=3000)
    y = (rng.uniform(size=3000) < p**1.5).astype(int)  # miscalibrated on purpose
    cal = expected_calibration_error(p, y, n_bins=10)
    prob_true, prob_pred = calibration_curve(y, p, n_bins=10, strategy="uniform")
    counts = np.array([c for c in cal.bin_counts if c])
    oracle = float(np.sum(counts / counts.sum() * np.abs(prob_true - prob_pred)))
    assert cal.ece == pytest.approx(oracle, abs=1e-12)
    np.testing.assert_allclose([m for m in cal.bin_mean_y if m is not None], prob_true)


def test_ece_soft_labels_and_invalid_predictions():
    cal = expected_calibration_error([0.25, None, 0.25, math.nan, 7.0], [0.5, 1, 0.5, 0, 1])
    assert (cal.n, cal.n_invalid) == (5, 3)
    assert cal.ece == pytest.approx(0.25)
    assert expected_calibration_error([None], [1]).ece is None


def test_ece_errors():
    with pytest.raises(ConfigError, match="The 'n_bins' parameter of expected_calibration_error"):
        expected_calibration_error([0.5], [1], n_bins=0)
    with pytest.raises(ConfigError, match=r"one label per probability \(2\)\. Got 1"):
        expected_calibration_error([0.5, 0.5], [1])
    with pytest.raises(ConfigError, match="The 'labels' parameter of expected_calibration_error"):
        expected_calibration_error([0.5], [3])


# --- reliability diagram -------------------------------------------------------------------------


def test_reliability_diagram_png_is_deterministic_and_written(tmp_path):
    rng = np.random.default_rng(5)
    p = rng.uniform(size=500)
    cal = expected_calibration_error(p, (rng.uniform(size=500) < p).astype(float))
    a = reliability_diagram(cal, tmp_path / "rel.png")
    b = reliability_diagram(cal)
    assert a[:8] == b"\x89PNG\r\n\x1a\n"
    assert a == b == (tmp_path / "rel.png").read_bytes()
    assert len(a) > 5000  # a real figure, not an empty canvas


def test_reliability_diagram_without_matplotlib_names_the_extra(monkeypatch):
    cal = expected_calibration_error([0.5], [1])
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import now fails
    with pytest.raises(MissingExtraError, match=r"pip install 'rewardkit\[report\]'"):
        reliability_diagram(cal)
