"""The sandbox against the two designs users have today, on one workload, in one run:
(a) one subprocess per (program, test) with a timeout (open-r1 / CURE), (b) one Process per
program with a multiprocessing Manager (human-eval / LiveCodeBench / verl prime_code).
512 programs × 32 tests (correct, wrong, raising, 8 looping), budget 0.1 s per test, one worker
per core for every design.  Design (a) is timed on a stratified sample and scaled to the whole
workload (see rewardkit.sandbox.bench).  First row: a trivial all-passing 512 × 32 workload
beside the fork floor of the same cores; its ratio is the fraction of the floor reached
(rewardkit.sandbox.floor).  Second row: the design's ceiling in the same rounds (a minimal fork
per program under Landlock + the seccomp allow-list: compile, 32 calls, one write) beside the
same floor: what any design that runs each program in a fresh confined fork can reach here;
third row: the same minimal child with no confinement at all.  Also: ``rewardkit sandbox bench``."""

from __future__ import annotations

import os
import statistics

from rewardkit.sandbox.bench import mixed_at_ceiling_s, run_bench
from rewardkit.sandbox.floor import run_floor_bench


def run() -> list[dict]:
    floor = run_floor_bench(512, 32, workers=os.cpu_count() or 1, repeats=3)
    res = run_bench(512, 32, budget_s=0.1, n_looping=8, workers=os.cpu_count() or 1)
    case = (
        f"512x32 mix (parent peak {res.parent_peak_rss_mb:.0f} MiB, "
        f"workers {max(res.worker_peak_rss_mb):.0f} MiB)"
    )
    per_program = 1 / statistics.median(floor.programs_per_s)
    per_fork = 1 / statistics.median(floor.floor_forks_per_s)
    per_ceiling = 1 / statistics.median(floor.ceiling_programs_per_s)
    at_ceiling_s = mixed_at_ceiling_s(res, 1 / per_ceiling)  # as `rewardkit sandbox bench`
    return [
        {  # ratio = fraction of the fork floor reached (goal: 0.5)
            "case": f"512x32 trivial, all pass, strict isolation (load {floor.load_average:.1f})",
            "ours_s": per_program,
            "baseline": "fork floor: fork+exit+wait from python -I -S, same cores, same run",
            "baseline_s": per_fork,
            "ratio": floor.ratio,
        },
        {  # the same floor against the least a confined fork per program costs
            "case": "512x32 trivial, the design's ceiling: minimal confined fork per program "
            f"({' + '.join(floor.ceiling_layers) or 'unconfined'})",
            "ours_s": per_ceiling,
            "baseline": "fork floor: fork+exit+wait from python -I -S, same cores, same run",
            "baseline_s": per_fork,
            "ratio": floor.ceiling_ratio,
        },
        {  # the same child with no confinement: what the layers themselves cost
            "case": "512x32 trivial, the same minimal fork per program, unconfined",
            "ours_s": 1 / statistics.median(floor.bare_programs_per_s),
            "baseline": "fork floor: fork+exit+wait from python -I -S, same cores, same run",
            "baseline_s": per_fork,
            "ratio": floor.bare_ratio,
        },
        {
            "case": case,
            "ours_s": res.ours_s,
            "baseline": f"(a) subprocess per pair, est. from {res.subprocess_programs} programs",
            "baseline_s": res.subprocess_s,
            "ratio": res.subprocess_s / res.ours_s,
        },
        {  # the most any confined fork per program could get over (a) here
            "case": f"{case}, a design at the ceiling (bound)",
            "ours_s": at_ceiling_s,
            "baseline": f"(a) subprocess per pair, est. from {res.subprocess_programs} programs",
            "baseline_s": res.subprocess_s,
            "ratio": res.subprocess_s / at_ceiling_s,
        },
        {
            "case": case,
            "ours_s": res.ours_s,
            "baseline": "(b) Manager + Process per program",
            "baseline_s": res.manager_s,
            "ratio": res.manager_s / res.ours_s,
        },
    ]
