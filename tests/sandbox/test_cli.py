"""``rewardkit sandbox bench`` on a tiny workload: JSON output, artefact, bad options."""

from __future__ import annotations

import json

from rewardkit.cli import main


def test_bench_json(tmp_path, capsys):
    out = tmp_path / "o"
    argv = ["sandbox", "bench", "--programs", "8", "--tests", "4", "--looping", "1",
            "--stride", "8", "--json", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["n_programs"] == 8 and res["n_tests"] == 4
    assert res["categories"]["looping"] == 1
    assert res["ours_pairs_per_s"] > 0 and res["ratio_vs_manager"] > 0
    # Every design computes the same pass matrix on this workload.
    assert res["agreement_manager"] == 1.0 and res["agreement_subprocess"] == 1.0
    saved = json.loads((out / "sandbox_bench.json").read_text())
    assert saved["isolation"] == res["isolation"]


def test_bench_bad_option(capsys):
    assert main(["sandbox", "bench", "--budget", "0"]) == 2
    assert "Invalid value for '--budget'" in capsys.readouterr().err


def test_isolation_report_command(capsys):
    assert main(["sandbox", "isolation"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["mode"] == "strict" and report["confinement"] in ("bwrap", "landlock")
    assert "seccomp-allowlist" in report["levels"] and report["readable"]


def test_floor_bench_reports_both_rates():
    """The floor bench on a tiny workload: every cell passes, both rates and ratios are there
    (no timing threshold: this machine's load moves them)."""
    from rewardkit.sandbox.floor import fork_floor, run_floor_bench

    rate, cpu = fork_floor(1, seconds=0.2)
    assert rate > 0 and cpu > 0
    res = run_floor_bench(8, 4, workers=1, repeats=1)
    assert res.all_passed and res.ratio > 0 and res.cpu_ratio > 0
    assert len(res.programs_per_s) == len(res.floor_forks_per_s) == 1
    assert "seccomp-allowlist" in res.isolation
