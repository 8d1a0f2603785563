"""The self-play section of ``rewardkit demo``: IG on a small table, the seed's Miller–Madow
numbers, the P1 check, the aliasing-bug probe and a short simulation (a few seconds)."""

from __future__ import annotations

import math

import numpy as np

from .._plotting import optional_figures
from .._results import Check, Section
from .bank import load_bank
from .infogain import ig_rewards, miller_madow_bias, plugin_mi
from .predictions import mm_bound, mm_peak, p1_check
from .probes import build_probe_pool, detection_rate
from .simulate import SimConfig, SimulationResult, simulate

__all__ = ["demo_section", "seed_checks"]

DEMO_TASKS = ("remove_all", "sum_evens", "max_of", "is_palindrome", "longest_run", "swap_ends")


def _close(name: str, measured: float, expected: float, tol: float = 1e-12) -> Check:
    return Check(name, f"{expected:.6f}", f"{measured:.6f}", abs(measured - expected) <= tol)


# The seed's numbers, written out (seed 003, the ⚠️ correction block and the two asymptotes;
# SPEC §8), as the oracle for mm_bound / mm_peak: never recomputed from their formulas here.
SEED_PEAK_M16 = 0.21875  # "峰值在 Ĉ=8，为 7/32 ≈ 0.219 nats" (m = 16)
SEED_PEAK_C_HAT = 8
SEED_SPARSE_C12 = 0.09375  # (15 − Ĉ)/32 at Ĉ = 12: 3/32
SEED_SMALL_G = 0.078125  # G/(2m) at G = 5, m = 32: 5/64
SEED_LARGE_G = 0.234375  # 1/4 − 1/(2m) at m = 32: 15/64


def seed_checks() -> list[Check]:
    """The Miller–Madow bound and peak against the seed's literal numbers."""
    m16 = [mm_bound(c, 16) for c in range(1, 17)]
    peak_at = 1 + m16.index(max(m16))
    return [
        _close(
            "Miller–Madow bound: peak 7/32 ≈ 0.219 nats (m = 16)", mm_peak(16, 15), SEED_PEAK_M16
        ),
        Check(
            "Miller–Madow bound: the peak sits at Ĉ = 8 (m = 16)",
            f"{SEED_PEAK_C_HAT}",
            f"{peak_at}",
            peak_at == SEED_PEAK_C_HAT,
        ),
        _close(
            "Miller–Madow bound: (15 − Ĉ)/32 above Ĉ = 8 (Ĉ = 12)",
            mm_bound(12, 16),
            SEED_SPARSE_C12,
        ),
        _close("Miller–Madow bound: asymptote G/(2m), G = 5, m = 32", mm_peak(32, 5), SEED_SMALL_G),
        _close("Miller–Madow bound: asymptote 1/4 − 1/(2m), m = 32", mm_peak(32, 40), SEED_LARGE_G),
    ]


def demo_section() -> Section:
    checks: list[Check] = []
    # 1. IG on a hand table: test 0 splits y perfectly, test 1 half-way, test 2 is constant
    E = np.array([[1, 1, 1], [1, 0, 1], [0, 1, 1], [0, 0, 1]], bool)
    y = np.array([1.0, 1.0, 0.5, 0.0])
    mi = plugin_mi(E, y)
    mm = miller_madow_bias(E, y)
    ig = ig_rewards(E, y, correction="exact_null")
    checks += [
        _close("plug-in MI of a perfect split = ln 2", float(mi[0]), math.log(2)),
        _close("Miller–Madow (S−R−C+1)/(2N), S=3 R=2 C=3 N=4", float(mm[0]), -1 / 8),
        Check("constant column gets reward 0", "0.0", f"{ig.reward[2]}", ig.reward[2] == 0.0),
    ]
    checks += seed_checks()
    # 2. P1 on null tables at m = 16
    p1 = p1_check(m=16, n_per_bucket=300, rng=0)
    dense_ok = all(b.holds for b in p1.buckets if b.c_hat <= 8)
    sparse_fail = [b.c_hat for b in p1.buckets if b.c_hat > 8 and not b.holds]
    z = max(abs(b.measured_null_mi - b.exact_null_mi) / b.se for b in p1.buckets)
    checks += [
        Check(
            "P1 at m = 16: within 2× for Ĉ ≤ 8, refuted on sparse tables",
            "holds Ĉ ≤ 8; fails some Ĉ > 8",
            f"holds Ĉ ≤ 8: {dense_ok}; fails Ĉ ∈ {sparse_fail}",
            dense_ok and bool(sparse_fail),
        ),
        Check("exact null = simulated null mean (max |z| per bucket)", "≤ 4", f"{z:.2f}", z <= 4),
    ]
    # 3. the aliasing bug (CoVer appendix E.4: remove_all rebinds its input list instead of
    # copying it): a suite of modal "value absent" tests never rejects it
    bank = load_bank(task_ids=DEMO_TASKS)
    task = bank.task("remove_all")
    modal = [
        t for t in task.gt_tests if t.input in ("([1, 2, 3], 9)", "([5, 6], 1)", "([8, 8], 3)")
    ]
    pool = build_probe_pool(bank, rng=0)
    ds = detection_rate(pool, {"remove_all": modal})
    alias = ds.per_family.get("aliasing")
    checks.append(
        Check(
            "aliasing bug: value-absent tests miss it, D_s(aliasing) < 1",
            "< 1",
            f"{alias}",
            alias is not None and alias < 1.0,
        )
    )
    # 4. a short simulation (6 tasks, arm A and the control, 60 steps). pass@1 rising is not
    # checked: the control (coder ignores the tests) shows it too, so it cannot fail for a
    # broken test reward. What the IG reward itself must do is move the verifier off the
    # always-pass generator, whose constant columns earn 0 while discriminative tests earn > 0.
    sim = simulate(("A", "control"), 60, rng=0, n_seeds=1, bank=bank, config=SimConfig())
    mass = [r["generator_mass"]["trivial"] for r in sim.records if r["arm"] == "A"]
    start, end = mass[0], float(np.mean(mass[-10:]))
    checks.append(
        Check(
            "simulation (arm A): IG moves the verifier off always-pass tests",
            f"trivial-generator mass < {start:.3f} (uniform start) over the last 10 steps",
            f"{start:.3f} → {end:.3f}",
            end < start - 0.05,
        )
    )
    figures = optional_figures(lambda: _figures(sim))
    return Section(
        "selfplay",
        "Self-play test rewards: IG with its null, the bias model, the aliasing probe, simulation",
        tuple(checks),
        {
            "selfplay_ig.json": ig.to_dict(),
            "selfplay_p1.json": p1.to_dict(),
            "selfplay_aliasing_detection.json": ds.to_dict(),
            "selfplay_simulation.json": {k: v for k, v in sim.to_dict().items() if k != "records"},
        },
        figures,
        "Information-gain test rewards with their exact null, the check of the Miller–Madow "
        "bias model on null tables, the aliasing probe (a program that edits its input list), "
        "and a short self-play simulation whose instruments "
        "(D_s, H(y), null MI) are plotted per step. The simulation runs a control arm whose "
        "coder ignores the tests: D_s falling while pass@1 rises happens there too, so that "
        "pattern is not credited to the IG reward; only paired differences against the control "
        "are (selfplay_simulation.json, 'vs_control').",
    )


def _figures(sim: SimulationResult) -> dict[str, bytes]:
    from .plots import render_curves

    return {
        f"Simulation ({len(DEMO_TASKS)} tasks, {sim.steps} steps): D_s, H(y) and null-MI mean "
        "per step": render_curves(sim, panels=("D_s", "H_y", "null_mi_mean"), panel_in=(3.4, 3.0))
    }
