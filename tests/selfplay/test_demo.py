"""The self-play demo section runs and every check passes."""

from __future__ import annotations

import pytest

from rewardkit.selfplay import demo as demo_module
from rewardkit.selfplay.demo import demo_section
from rewardkit.selfplay.predictions import mm_bound


def test_demo_section_passes():
    s = demo_section()
    assert s.name == "selfplay" and len(s.checks) >= 10
    failed = [c for c in s.checks if not c.passed]
    assert not failed, failed
    assert {"selfplay_ig.json", "selfplay_p1.json", "selfplay_simulation.json"} <= set(s.artefacts)


def test_seed_checks_use_the_seeds_literal_numbers():
    checks = {c.name: c for c in demo_module.seed_checks()}
    assert all(c.passed for c in checks.values()), checks
    expected = sorted(c.expected for c in checks.values())
    # 7/32, 3/32, 5/64, 15/64 and Ĉ = 8, as seed 003 and SPEC §8 state them.
    assert expected == ["0.078125", "0.093750", "0.218750", "0.234375", "8"]


def _dense_only(c_hat, m, R=2):
    return (c_hat - 1) / (2.0 * m)  # the seed's uncorrected (Ĉ − 1)/32, full tables assumed


def _last_c_hat(m, G):
    return mm_bound(min(m, G + 1), m)  # the bound at the largest Ĉ, not its maximum


@pytest.mark.parametrize(
    ("name", "fake", "failing"),
    [
        # the error the seed corrects (15/32 = 0.469 nats): peak, its place, the sparse bound
        ("mm_bound", _dense_only, {"peak 7/32", "at Ĉ = 8", "Ĉ = 12", "1/4"}),
        ("mm_peak", _last_c_hat, {"peak 7/32", "1/4"}),
    ],
)
def test_a_wrong_bound_fails_the_seed_checks(monkeypatch, name, fake, failing):
    monkeypatch.setattr(demo_module, name, fake)
    if name == "mm_bound":  # mm_peak calls mm_bound from its own module
        monkeypatch.setattr("rewardkit.selfplay.predictions.mm_bound", fake)
    failed = [c.name for c in demo_module.seed_checks() if not c.passed]
    assert {f for f in failing if any(f in n for n in failed)} == failing, failed
