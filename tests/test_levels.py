"""Level mapping, masks and recipes A/B/C against the seed's worked numbers (seed 000 §2–5)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rewardkit.errors import ConfigError, InputError, MappingError
from rewardkit.levels import (
    DEFAULT_MAPPING,
    MASK_REASONS,
    LevelMapping,
    Step,
    score_trajectory,
)

CLEAN = [Step(3)] * 12
INJECTED = [*CLEAN, Step(0)]


# --- the seed's worked numbers -----------------------------------------------------------------


@pytest.mark.parametrize("recipe", ["A", "B", "C"])
def test_twelve_l3_steps_give_the_ceiling(recipe):
    r = score_trajectory(CLEAN, recipe=recipe)
    assert r.value == 0.85
    assert r.step_rewards == (0.85,) * 12
    assert r.mask_reasons == (None,) * 12


def test_injected_l0_worked_numbers():
    a = score_trajectory(INJECTED, recipe="A").value
    b = score_trajectory(INJECTED, recipe="B").value
    clean_b = score_trajectory(CLEAN, recipe="B").value
    # Hand computation from seed 000 §5: A = 12/13 * 0.85, B = A * 0.30.
    assert a == pytest.approx(0.7846153846153846, abs=1e-15)
    assert b == pytest.approx(0.2353846153846154, abs=1e-15)
    assert f"{a:.6f}" == "0.784615" and f"{b:.6f}" == "0.235385"
    assert clean_b - b == pytest.approx(0.6146153846153846, abs=1e-15)
    assert clean_b - b >= 0.30


def test_threshold_rationale_holds_for_every_length():
    # drop >= 0.85 * (1 - gamma) * (n - 1) / n >= 0.2975 for every n >= 2 (seed 000 §5)
    for n in range(2, 60):
        clean = score_trajectory([Step(3)] * (n - 1), recipe="B").value
        injected = score_trajectory([Step(3)] * (n - 1) + [Step(0)], recipe="B").value
        assert clean - injected >= 0.85 * 0.7 * 0.5 - 1e-12
    n2 = score_trajectory([Step(3), Step(0)], recipe="B").value
    assert 0.85 - n2 == pytest.approx(0.85 - 0.425 * 0.30)


def test_c_with_uniform_weights_equals_a_exactly():
    for steps in (CLEAN, INJECTED, [Step(1), Step(2), Step(-1), Step(0), Step(3)]):
        a = score_trajectory(steps, recipe="A").value
        assert score_trajectory(steps, recipe="C").value == a
        assert score_trajectory(steps, recipe="C", weights=[1.0] * len(steps)).value == a


def test_c_weights_sequence_and_callable():
    steps = [Step(3), Step(1)]
    r = score_trajectory(steps, recipe="C", weights=[3.0, 1.0])
    assert r.value == pytest.approx((3 * 0.85 + 0.30) / 4)
    r2 = score_trajectory(steps, recipe="C", weights=lambda s: [3.0, 1.0])
    assert r2.value == r.value
    # masked steps leave the denominator even with a weight
    r3 = score_trajectory([Step(3), Step(-1)], recipe="C", weights=[1.0, 100.0])
    assert r3.value == 0.85
    zero = score_trajectory(steps, recipe="C", weights=[0.0, 0.0])
    assert zero.value is None and zero.meta["weight_sum"] == 0.0


def test_b_penalises_iff_an_unmasked_l0_exists():
    masked_l0 = [Step(3, "final"), Step(0, "revoked")]
    r = score_trajectory(masked_l0, recipe="B", session=True)
    assert r.value == 0.85 and r.meta["has_unmasked_l0"] is False
    r = score_trajectory(masked_l0, recipe="B", session=False)
    assert r.value == pytest.approx(0.425 * 0.30) and r.meta["has_unmasked_l0"] is True


# --- masks ---------------------------------------------------------------------------------


def test_each_mask_reason():
    steps = [
        Step(3, "final"),
        Step(-1, "final"),
        Step(2, "revoked"),
        Step(2, "provisional"),
        Step(1, None),
    ]
    r = score_trajectory(steps, session=True)
    assert r.mask_reasons == (
        None,
        "level_minus_one",
        "revoked",
        "provisional_not_final",
        "no_review_record",
    )
    assert r.step_rewards == (0.85, None, None, None, None)
    assert r.value == 0.85
    assert r.meta["review_mode"] == "session"
    assert r.meta["n_masked"] == 4
    assert r.meta["mask_counts"] == {m: 1 for m in MASK_REASONS}


def test_mask_precedence_level_minus_one_first():
    for review in ("revoked", "provisional", None, "final"):
        r = score_trajectory([Step(-1, review), Step(3, "final")], session=True)
        assert r.mask_reasons[0] == "level_minus_one"


def test_session_false_treats_every_step_as_final():
    steps = [Step(3, "revoked"), Step(2, "provisional"), Step(1, None)]
    r = score_trajectory(steps, recipe="A", session=False)
    assert r.meta["review_mode"] == "all_final"
    assert r.mask_reasons == (None, None, None)
    assert r.value == pytest.approx((0.85 + 0.60 + 0.30) / 3)


def test_all_masked_is_none_never_zero():
    for recipe in "ABC":
        r = score_trajectory([Step(-1), Step(-1)], recipe=recipe)
        assert r.value is None
        assert r.step_rewards == (None, None)
    assert score_trajectory([Step(3, "revoked")], session=True).value is None
    assert score_trajectory([], recipe="A").value is None


def test_three_recipes_same_schema():
    outs = [score_trajectory(INJECTED, recipe=r).to_dict() for r in "ABC"]
    assert len({tuple(sorted(o)) for o in outs}) == 1
    assert len({tuple(sorted(o["meta"])) for o in outs[:2]}) == 1
    assert all(o["experimental_uncalibrated"] is True for o in outs)
    assert all(len(o["step_rewards"]) == 13 for o in outs)
    assert {o["meta"]["mapping_hash"] for o in outs} == {DEFAULT_MAPPING.hash}


def test_steps_accept_ints_and_mappings():
    r = score_trajectory([3, {"level": 0, "review": "final"}], recipe="A")
    assert r.value == pytest.approx(0.425)
    r = score_trajectory([3, {"level": 0, "review": "final"}], recipe="A", session=True)
    assert r.value == 0.0 and r.mask_reasons == ("no_review_record", None)


# --- property tests ------------------------------------------------------------------------

levels = st.integers(min_value=-1, max_value=3)
reviews = st.sampled_from(["final", "provisional", "revoked", None])
steps_st = st.lists(st.builds(Step, levels, reviews), max_size=40)


@given(steps_st, st.booleans(), st.floats(0, 1))
def test_value_within_zero_and_ceiling_and_b_le_a(steps, session, gamma):
    a = score_trajectory(steps, recipe="A", session=session, gamma=gamma)
    b = score_trajectory(steps, recipe="B", session=session, gamma=gamma)
    assert (a.value is None) == (b.value is None)
    if a.value is not None:
        assert 0.0 <= a.value <= DEFAULT_MAPPING.ceiling
        assert 0.0 <= b.value <= a.value


@given(steps_st, st.booleans(), st.randoms(use_true_random=False))
def test_a_and_b_invariant_to_step_order(steps, session, rnd):
    shuffled = list(steps)
    rnd.shuffle(shuffled)
    for recipe in "AB":
        assert (
            score_trajectory(steps, recipe=recipe, session=session).value
            == score_trajectory(shuffled, recipe=recipe, session=session).value
        )


@given(steps_st.filter(bool), st.data())
def test_masking_a_step_never_changes_other_step_rewards(steps, data):
    i = data.draw(st.integers(0, len(steps) - 1))
    masked = list(steps)
    masked[i] = Step(-1, steps[i].review)
    before = score_trajectory(steps, session=True)
    after = score_trajectory(masked, session=True)
    assert after.step_rewards[i] is None
    for j in range(len(steps)):
        if j != i:
            assert after.step_rewards[j] == before.step_rewards[j]
            assert after.mask_reasons[j] == before.mask_reasons[j]


@given(st.lists(st.floats(0, 10, allow_nan=False), min_size=2, max_size=2))
def test_c_is_a_weighted_mean_within_step_extremes(ws):
    steps = [Step(3), Step(0)]
    r = score_trajectory(steps, recipe="C", weights=ws)
    if sum(ws) == 0:
        assert r.value is None
    else:
        assert 0.0 <= r.value <= 0.85
        # oracle in exact rationals (floats underflow at subnormal weights such as 5e-324)
        expected = Fraction(0.85) * Fraction(ws[0]) / (Fraction(ws[0]) + Fraction(ws[1]))
        assert r.value == pytest.approx(float(expected))


# --- LevelMapping validation ----------------------------------------------------------------


def test_default_mapping():
    assert DEFAULT_MAPPING.values == {0: 0.0, 1: 0.30, 2: 0.60, 3: 0.85}
    assert DEFAULT_MAPPING.ceiling == 0.85
    assert DEFAULT_MAPPING.hash.startswith("sha256:")


@pytest.mark.parametrize(
    "values, ceiling, match",
    [
        (
            {0: 0.0, 1: 0.6, 2: 0.3, 3: 0.85},
            0.85,
            r"Level 2 maps to 0\.3, below level 1's 0\.6: .*non-decreasing",
        ),
        ({0: 0.0, 1: 0.3, 2: 0.9, 3: 0.85}, 0.85, r"Level 2 maps to 0\.9, above the ceiling 0\.85"),
        (
            {0: 0.0, 1: 0.3, 2: 0.6, 3: 0.8},
            0.85,
            r"top level 3 maps to 0\.8, below the ceiling 0\.85",
        ),
        ({-1: 0.0, 0: 0.0, 1: 0.85}, 0.85, r"Level -1 is mapped to 0\.0, but -1 is reserved"),
        ({0: -0.1, 1: 0.85}, 0.85, r"Level 0 maps to -0\.1, below 0"),
        ({0: 0.0, 2: 0.85}, 0.85, r"level 1 is missing"),
        ({0: 0.0, 1: float("nan")}, 0.85, r"Level 1 maps to nan"),
        ({0: 0.0, 1: 0.85}, -1.0, r"ceiling of a LevelMapping must be a finite float > 0"),
    ],
)
def test_mapping_rejects_bad_maps(values, ceiling, match):
    with pytest.raises(MappingError, match=match):
        LevelMapping(values=values, ceiling=ceiling)


def test_custom_mapping_changes_rewards_and_hash():
    m = LevelMapping(values={0: 0.0, 1: 0.5, 2: 1.0}, ceiling=1.0)
    r = score_trajectory([2, 1], recipe="A", mapping=m)
    assert r.value == 0.75
    assert r.meta["mapping_hash"] == m.hash != DEFAULT_MAPPING.hash
    with pytest.raises(ConfigError, match=r"Step 0 has level 3, which the mapping does not know"):
        score_trajectory([3], mapping=m)


def test_mapping_from_toml(tmp_path):
    p = tmp_path / "m.toml"
    p.write_text("ceiling = 0.85\n[values]\n0 = 0.0\n1 = 0.30\n2 = 0.60\n3 = 0.85\n")
    assert LevelMapping.from_toml(p) == DEFAULT_MAPPING
    p.write_text("ceiling = 0.85\n[values]\n0 = 0.0\n1 = 0.9\n")
    with pytest.raises(MappingError, match=r"m\.toml: Level 1 maps to 0\.9, above the ceiling"):
        LevelMapping.from_toml(p)
    p.write_text("ceiling = 0.85\n[values]\nzero = 0.0\n")
    with pytest.raises(InputError, match=r"m\.toml, field 'values\.zero': level keys must be"):
        LevelMapping.from_toml(p)
    p.write_text("ceiling = [\n")
    with pytest.raises(InputError, match=r"m\.toml: not valid TOML"):
        LevelMapping.from_toml(p)
    with pytest.raises(InputError, match=r"missing\.toml: no such file"):
        LevelMapping.from_toml(tmp_path / "missing.toml")


# --- parameter validation -------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (
            {"gamma": 1.5},
            r"The 'gamma' parameter of score_trajectory must be a float in \[0, 1\]\. "
            r"Got 1\.5\.",
        ),
        ({"gamma": math.nan}, r"'gamma' parameter of score_trajectory .* Got nan"),
        (
            {"recipe": "D"},
            r"The 'recipe' parameter of score_trajectory must be one of 'A', 'B', "
            r"'C'\. Got 'D'\.",
        ),
        ({"weights": [1.0] * 13}, r"'weights' parameter of score_trajectory applies to recipe 'C'"),
        ({"recipe": "C", "weights": [1.0]}, r"must give one weight per step \(13\)\. Got 1\."),
        (
            {"recipe": "C", "weights": [-1.0] * 13},
            r"The 'weights' parameter of score_trajectory must be a callable or a sequence of "
            r"any number of values, each a float in \[0, inf\) or None",
        ),
        ({"session": "yes"}, r"The 'session' parameter of score_trajectory must be a bool"),
        (
            {"mapping": {0: 0.0}},
            r"The 'mapping' parameter of score_trajectory must be a LevelMapping",
        ),
    ],
)
def test_bad_parameters_are_named(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        score_trajectory(INJECTED, **kwargs)


@pytest.mark.parametrize(
    "step, match",
    [
        (lambda: Step(-2), r"The 'level' of a Step must be an int >= -1"),
        (lambda: Step(True), r"The 'level' of a Step must be an int"),
        (
            lambda: Step(3, "approved"),
            r"The 'review' of a Step must be one of final, provisional, "
            r"revoked or None\. Got 'approved'",
        ),
    ],
)
def test_bad_steps(step, match):
    with pytest.raises(ConfigError, match=match):
        step()


def test_bad_step_items():
    with pytest.raises(ConfigError, match=r"Step 1 must be a Step, an int level"):
        score_trajectory([3, "3"])
    with pytest.raises(ConfigError, match=r"Step 0 must have a 'level'"):
        score_trajectory([{"lvl": 3}])
    with pytest.raises(
        ConfigError,
        match=r"'steps' parameter of score_trajectory must be a "
        r"sequence",
    ):
        score_trajectory("333")


def test_c_with_subnormal_weights_does_not_underflow():
    # found by hypothesis: w·r underflowed, giving 0.5 instead of the mean 0.425
    r = score_trajectory([Step(3), Step(0)], recipe="C", weights=[5e-324, 5e-324])
    assert r.value == pytest.approx(0.425)
