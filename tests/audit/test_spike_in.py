"""spike_in: the strong anchor on fakes and on the shipped benchmark (seed 000 §5)."""

from __future__ import annotations

import pytest
from audit_fakes import SUBSTRATES, FakeJudge, dec

from rewardkit.audit import LevelReward, spike_in
from rewardkit.errors import ConfigError

DROP_13 = 0.85 - 12 / 13 * 0.85 * 0.30  # 0.614615…, seed 000 §7.2


def test_fakes_pass_with_the_seed_drop():
    s = spike_in(
        judge=FakeJudge(),
        reward=LevelReward(),
        substrates=SUBSTRATES,
        candidates={p: (dec("bad", 12),) for p in ("deg", "pan", "scrna")},
    )
    assert s.passed and s.recipe == "B" and s.paradigms == {"deg": True, "pan": True, "scrna": True}
    for c in s.cases:
        assert c.n_steps == 13 and c.injected_level == 0 and c.clean_levels == (3,) * 12
        assert c.clean_reward == pytest.approx(0.85)
        assert c.injected_reward == pytest.approx(12 / 13 * 0.85 * 0.30)
        assert c.drop == pytest.approx(DROP_13)


def test_a_candidate_the_judge_does_not_call_l0_fails_its_paradigm():
    s = spike_in(
        judge=FakeJudge(),
        reward=LevelReward(),
        substrates=SUBSTRATES,
        candidates={"deg": (dec("bad", 12),), "pan": (dec("bad", 12), dec("meh", 12))},
    )
    assert not s.passed and s.paradigms == {"deg": True, "pan": False}
    meh = s.cases[-1]
    assert meh.injected_level == 1 and not meh.passed


def test_recipe_a_drop_is_below_the_threshold():
    # Recipe A has no hard penalty: 0.85 - 12/13*0.85 = 0.065 < 0.30, so the anchor catches it.
    s = spike_in(
        judge=FakeJudge(),
        reward=LevelReward(),
        substrates=SUBSTRATES,
        candidates={"deg": (dec("bad", 12),)},
        recipe="A",
    )
    assert not s.passed and s.cases[0].drop == pytest.approx(0.85 / 13)


def test_missing_substrate_is_named():
    with pytest.raises(ConfigError, match="no substrate 'foo_correct'"):
        spike_in(
            judge=FakeJudge(), reward=LevelReward(), substrates=SUBSTRATES, candidates={"foo": ()}
        )


def test_shipped_benchmark_passes_on_all_three_paradigms():
    from rewardkit.bioaudit import INJECTION_CANDIDATES, PARADIGMS, Engine, load_benchmark

    bm = load_benchmark()
    s = spike_in(
        judge=Engine(),
        reward=LevelReward(),
        substrates=bm.substrates,
        candidates=INJECTION_CANDIDATES,
    )
    assert s.passed and tuple(s.paradigms) == PARADIGMS
    assert len(s.cases) == sum(len(v) for v in INJECTION_CANDIDATES.values())
    for c in s.cases:
        assert c.clean_reward == pytest.approx(0.85) and c.injected_level == 0
        assert c.drop == pytest.approx(DROP_13)
