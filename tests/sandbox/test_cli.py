"""``rewardkit sandbox bench`` on a tiny workload: JSON output, artefact, bad options."""

from __future__ import annotations

import json

import pytest

from rewardkit.cli import main


def test_bench_json(tmp_path, capsys):
    out = tmp_path / "o"
    argv = ["sandbox", "bench", "--programs", "8", "--tests", "4", "--looping", "1",
            "--stride", "8", "--repeats", "2", "--json", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["n_programs"] == 8 and res["n_tests"] == 4
    # Ours ran twice on one sandbox: its time is the median of both runs, whose tables agree.
    runs = res["ours_runs_s"]
    assert len(runs) == 2 and res["ours_s"] == pytest.approx(sum(runs) / 2)
    assert res["runs_agree"] == 1.0
    assert res["categories"]["looping"] == 1
    assert res["ours_pairs_per_s"] > 0 and res["ratio_vs_manager"] > 0
    # Every design computes the same pass matrix on this workload.
    assert res["agreement_manager"] == 1.0 and res["agreement_subprocess"] == 1.0
    saved = json.loads((out / "sandbox_bench.json").read_text())
    assert saved["isolation"] == res["isolation"]


def test_mixed_at_ceiling_is_the_ceiling_rate_plus_the_looping_budget():
    """Hand-computed: 512 programs of which 8 loop, budget 0.1 s, 2 workers, a ceiling of 504
    programs/s: 504 / 504 + 8 × 0.1 / 2 = 1.4 s."""
    from dataclasses import replace

    from rewardkit.sandbox.bench import BenchResult, mixed_at_ceiling_s

    fields = {f: 0 for f in BenchResult.__dataclass_fields__}
    res = BenchResult(**fields)  # type: ignore[arg-type]
    res = replace(res, n_programs=512, budget_s=0.1, workers=2,
                  categories={"correct": 504, "looping": 8})  # fmt: skip
    assert mixed_at_ceiling_s(res, 504.0) == pytest.approx(1.4)
    assert mixed_at_ceiling_s(replace(res, categories={"correct": 512}), 512.0) == 1.0


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
    assert len(res.ceiling_programs_per_s) == 1 and res.ceiling_cpu_ratio > 0
    assert res.ceiling_ratio == pytest.approx(res.ceiling_programs_per_s[0] / floor_rate(res))
    assert res.ceiling_layers == (("landlock",) if _landlock() else ()) + ("seccomp-allowlist",)
    assert len(res.bare_programs_per_s) == 1 and res.bare_cpu_ms_per_program > 0
    assert res.bare_ratio == pytest.approx(res.bare_programs_per_s[0] / floor_rate(res))


def floor_rate(res) -> float:
    return res.floor_forks_per_s[0]


def test_the_unconfined_ceiling_claims_no_layer():
    from rewardkit.sandbox import floor

    rate, cpu, layers = floor.design_ceiling(1, seconds=0.1, confined=False)
    assert rate > 0 and cpu > 0 and layers == ()


@pytest.mark.parametrize("what", ["floor", "ceiling"])
def test_loops_run_in_turn_are_refused(monkeypatch, what):
    """Each loop waits for its input; given and read one after another (``communicate`` in
    turn, as the ceiling first did) they ran in turn and the rate over two workers was one
    loop's: half the real one.  Their spans on the shared monotonic clock must overlap."""
    from rewardkit.sandbox import floor

    def in_turn(procs, data):
        return [p.communicate(data)[0].split() for p in procs]

    monkeypatch.setattr(floor, "_collect", in_turn)
    with pytest.raises(RuntimeError, match="did not run at once"):
        if what == "floor":
            floor.fork_floor(2, seconds=0.2)
        else:
            floor.design_ceiling(2, seconds=0.2)


def test_loops_run_at_once_are_accepted():
    from rewardkit.sandbox import floor

    assert floor.fork_floor(2, seconds=0.2)[0] > 0
    assert floor.design_ceiling(2, seconds=0.2)[0] > 0


def _landlock() -> bool:
    import ctypes

    from rewardkit.sandbox._landlock import abi

    return abi(ctypes.CDLL(None, use_errno=True)) > 0


def test_design_ceiling_claims_only_the_confinement_its_probe_verified(monkeypatch):
    """Without the allow-list (no pyseccomp), the ceiling's probe child finds io_uring granted
    and the layer is not claimed; the Landlock layer is still verified."""
    from rewardkit.sandbox import _filter, floor

    def missing() -> str:
        raise ImportError("no pyseccomp")

    monkeypatch.setattr(_filter, "build_allowlist_bpf", missing)
    rate, cpu, layers = floor.design_ceiling(1, seconds=0.1)
    assert rate > 0 and cpu > 0 and layers == (("landlock",) if _landlock() else ())


def test_design_ceiling_refuses_wrong_answers(monkeypatch):
    """The ceiling's parent checks every child's answers: a program that answers wrong makes
    the measurement fail rather than count."""
    from rewardkit.sandbox import floor

    broken = floor.CEILING_SCRIPT.replace("x + {n % 97} - {n % 97}", "x + 1")
    assert broken != floor.CEILING_SCRIPT
    monkeypatch.setattr(floor, "CEILING_SCRIPT", broken)
    with pytest.raises(RuntimeError, match="wrong answers"):
        floor.design_ceiling(1, seconds=0.1)


@pytest.mark.parametrize("repeats", [0, -1, 1.5, True, "3"])
def test_run_bench_refuses_a_repeat_count_that_is_not_a_positive_int(repeats):
    from rewardkit.errors import ConfigError
    from rewardkit.sandbox.bench import run_bench

    with pytest.raises(ConfigError, match="'repeats' parameter of run_bench"):
        run_bench(8, 4, repeats=repeats)
