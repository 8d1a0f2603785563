"""``rewardkit sandbox …``: the sandbox's commands.

rewardkit sandbox bench [--programs 512] [--tests 32] [--budget 0.1] [--json] [--out DIR]
rewardkit sandbox isolation [--confinement auto|bwrap|landlock]
rewardkit sandbox run FILE.jsonl [--timeout 2] [--memory-mb 512] [--workers N] [--json]
"""

from __future__ import annotations

import os
import statistics
import warnings
from pathlib import Path

import click

from .._cliutil import (
    FiniteFloatRange,
    HelpGroup,
    common_options,
    resolve_settings,
    write_artefacts,
)
from .._json import canonical_json
from ..errors import ConfigError

__all__ = ["sandbox"]


MAX_PAIRS = 1_000_000  # programs x tests; the default workload has 16,384
TABLE_ROWS = 50  # sandbox run: a table of the problems up to this many, else a summary line


@click.group(cls=HelpGroup)
def sandbox() -> None:
    """Safe, fast execution of generated programs against tests."""


@sandbox.command()
@click.option("--programs", "n_programs", type=click.IntRange(1, 100_000), default=512,
              show_default=True, help="Programs in the workload (at most 100,000).")  # fmt: skip
@click.option("--tests", "n_tests", type=click.IntRange(2, 1_000), default=32, show_default=True,
              help="Tests each program runs (at most 1,000).")  # fmt: skip
@click.option("--budget", "budget_s", type=FiniteFloatRange(0.01, 60), default=0.1,
              show_default=True, help="Time budget per test, seconds (every design).")  # fmt: skip
@click.option("--looping", "n_looping", type=click.IntRange(0, 100_000), default=8,
              show_default=True,
              help="Programs that loop forever on one test (at most --programs).")  # fmt: skip
@click.option("--stride", type=click.IntRange(1, 100_000), default=64, show_default=True,
              help="Design (a) runs 1 in STRIDE programs of each category.")  # fmt: skip
@click.option("--workers", type=click.IntRange(1, 256), default=None,
              help="Parallel workers for every design [default: one per core; at most "
                   "256].")  # fmt: skip
@click.option("--repeats", type=click.IntRange(1, 20), default=3, show_default=True,
              help="Runs of the workload through rewardkit (one sandbox); its time is their "
                   "median.")  # fmt: skip
@common_options
@click.pass_context
def bench(
    ctx: click.Context,
    n_programs: int,
    n_tests: int,
    budget_s: float,
    n_looping: int,
    stride: int,
    workers: int | None,
    repeats: int,
    as_json: bool | None,
    out: Path | None,
) -> None:
    """Throughput against subprocess-per-pair and Manager-per-program, in one run."""
    from rich.console import Console
    from rich.table import Table

    from .bench import mixed_at_ceiling_s, run_bench
    from .floor import run_floor_bench

    as_json, out = resolve_settings(ctx, as_json, out)
    if n_programs * n_tests > MAX_PAIRS:
        raise ConfigError(
            f"The '--programs' and '--tests' options of sandbox bench make {n_programs} x "
            f"{n_tests} program-test pairs; at most {MAX_PAIRS:,} are accepted (each design "
            f"runs every pair). Got {n_programs * n_tests:,}."
        )
    if n_looping > n_programs:
        raise ConfigError(
            f"The '--looping' option of sandbox bench counts programs among --programs "
            f"({n_programs}), so it must be at most {n_programs}. Got {n_looping}."
        )
    console = Console(stderr=True)
    with console.status("trivial workload beside the fork floor…"):
        floor = run_floor_bench(n_programs, n_tests, workers=workers, repeats=3)
    with console.status("running the workload through three designs…"):
        res = run_bench(
            n_programs,
            n_tests,
            budget_s=budget_s,
            n_looping=min(n_looping, n_programs),
            stride=stride,
            workers=workers or os.cpu_count() or 1,
            repeats=repeats,
        )
    hashes = write_artefacts(
        out, {"sandbox_bench.json": res.to_dict(), "sandbox_floor.json": floor.to_dict()}
    )
    if as_json:
        click.echo(
            canonical_json(
                {
                    "out": out.as_posix(),
                    "artefacts": hashes,
                    **res.to_dict(),
                    "floor": floor.to_dict(),
                }
            )
        )
        return
    pairs = res.n_programs * res.n_tests
    table = Table(title=f"{res.n_programs} programs × {res.n_tests} tests, {res.budget_s} s "
                        f"budget, {res.workers} workers, load {res.load_average:.1f}")  # fmt: skip
    for col in ("design", "seconds", "pairs/s", "rewardkit ×", "target", "pass cells agree"):
        table.add_column(col)
    table.add_row("rewardkit sandbox (median of runs)", f"{res.ours_s:.2f}",
                  f"{res.ours_pairs_per_s:,.0f}", "1.0", "", "")  # fmt: skip
    table.add_row(
        f"(a) subprocess per pair (est. from {res.subprocess_programs} programs)",
        f"{res.subprocess_s:.1f}",
        f"{pairs / res.subprocess_s:,.0f}",
        f"{res.ratio_vs_subprocess:.1f}",
        "≥ 100",
        f"{res.agreement_subprocess:.4f}",
    )
    table.add_row(
        "(b) Manager + Process per program",
        f"{res.manager_s:.2f}",
        f"{res.manager_pairs_per_s:,.0f}",
        f"{res.ratio_vs_manager:.1f}",
        "≥ 3",
        f"{res.agreement_manager:.4f}",
    )
    console = Console()
    rates, floors = _rates(floor.programs_per_s), _rates(floor.floor_forks_per_s)
    console.print(
        f"trivial {floor.n_programs} programs × {floor.n_tests} tests, all passing: "
        f"{rates} programs/s beside a fork floor of {floors} forks/s (same cores, alternating "
        f"rounds): {floor.ratio:.1%} of the floor (goal ≥ 50 %); CPU per program "
        f"{floor.cpu_ms_per_program:.2f} ms against {floor.floor_cpu_ms_per_fork:.2f} ms per "
        f"fork: {floor.cpu_ratio:.1%}"
    )
    console.print(
        f"the design's ceiling (a minimal fork per program under "
        f"{' + '.join(floor.ceiling_layers) or 'no verified confinement'}: compile, "
        f"32 calls, one write; no checks) in the "
        f"same rounds: {_rates(floor.ceiling_programs_per_s)} programs/s, "
        f"{floor.ceiling_ratio:.1%} of the floor; {floor.ceiling_cpu_ms_per_program:.2f} ms "
        f"of CPU per program ({floor.ceiling_cpu_ratio:.1%}); the same child with no "
        f"confinement at all: {_rates(floor.bare_programs_per_s)} programs/s, "
        f"{floor.bare_ratio:.1%} of the floor; {floor.bare_cpu_ms_per_program:.2f} ms "
        f"({floor.bare_cpu_ratio:.1%})"
    )
    console.print(table)
    console.print(
        f"rewardkit ran the workload {len(res.ours_runs_s)} times on one sandbox: "
        f"{', '.join(f'{r:.2f}' for r in res.ours_runs_s)} s (median {res.ours_s:.2f} s); "
        f"their pass cells agree {res.runs_agree:.4f}"
    )
    bound = mixed_at_ceiling_s(res, statistics.median(floor.ceiling_programs_per_s))
    console.print(
        f"at the design's ceiling the mixed run would still take ≥ {bound:.2f} s (its "
        f"non-looping programs at the ceiling's rate, the looping ones' budget): at most "
        f"{res.subprocess_s / bound:.0f}× over (a) in this run"
    )
    console.print(
        f"isolation: {', '.join(res.isolation)}; zygote start {res.ours_start_s:.2f} s; "
        f"parent peak RSS {res.parent_peak_rss_mb:.0f} MiB; worker peak RSS "
        f"{', '.join(f'{r:.0f}' for r in res.worker_peak_rss_mb)} MiB; written to {out}/"
    )


def _rates(rates: tuple[float, ...]) -> str:
    return ", ".join(f"{r:,.0f}" for r in rates)


@sandbox.command()
@click.option("--confinement", type=click.Choice(["auto", "bwrap", "landlock"]), default="auto",
              show_default=True, help="bubblewrap, Landlock, or the first that works.")  # fmt: skip
def isolation(confinement: str) -> None:
    """What confines programs on this machine: the isolation report of Sandbox() as JSON.

    Exit 1 when the default strict isolation cannot start here (the report then names what
    is missing and how to install it)."""
    from ..errors import RewardkitError
    from .core import Sandbox

    try:
        with Sandbox(workers=1, confinement=confinement) as sb:
            report = sb.isolation_report()
    except RewardkitError as e:
        click.echo(canonical_json({"mode": "strict", "refused": str(e)}, indent=1))
        raise SystemExit(1) from None
    click.echo(canonical_json(report, indent=1))


@sandbox.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--timeout", "timeout_s", type=FiniteFloatRange(0.01, 600), default=2.0,
              show_default=True, help="Time budget per test, seconds.")  # fmt: skip
@click.option("--memory-mb", type=click.IntRange(64, 1 << 20), default=512, show_default=True,
              help="Address space of each program, MiB.")  # fmt: skip
@click.option("--workers", type=click.IntRange(1, 256), default=None,
              help="Parallel workers [default: one per core; at most 256].")  # fmt: skip
@click.option("--isolation", type=click.Choice(["strict", "basic"]), default="strict",
              show_default=True,
              help="strict confines every program (refuses to start when it cannot); basic "
                   "applies rlimits only.")  # fmt: skip
@common_options
@click.pass_context
def run(
    ctx: click.Context,
    file: Path,
    timeout_s: float,
    memory_mb: int,
    workers: int | None,
    isolation: str,
    as_json: bool | None,
    out: Path | None,
) -> None:
    """Run your problems' programs on their tests (FILE: JSONL, one problem a line).

    Each line: {"id", "programs": [...], "tests": [...] or "asserts": "...", "entry_point",
    "reference": [indices]}; docs/sandbox.md ("Your own problems") gives every field.  Writes
    sandbox_run.json (status, output hash and detail per program and test).  Exit 1 when a
    reference program fails a valid test, 2 for a malformed file."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from .core import Sandbox, SandboxWarning
    from .dataset import load_problems, run_problems

    as_json, out = resolve_settings(ctx, as_json, out)
    loaded = load_problems(file)
    console = Console(stderr=True)

    def line(text: str) -> None:  # one line each, whatever the terminal's width
        console.print(_plain(text), markup=False, highlight=False, soft_wrap=True)

    with warnings.catch_warnings(record=True) as said:  # basic isolation: one line of ours
        warnings.simplefilter("always", SandboxWarning)
        sb = Sandbox(timeout_s=timeout_s, memory_mb=memory_mb, workers=workers, isolation=isolation)
    for w in said:
        line(f"warning: {w.message}")
    with console.status(f"running {len(loaded)} problems…"), sb:
        res = run_problems(loaded, sb, source=str(file))
    write_artefacts(out, {"sandbox_run.json": res})
    if as_json:
        click.echo(canonical_json(res, indent=1))
    elif len(res.problems) > TABLE_ROWS:  # a row each would flood the terminal (and take
        checked = [bool(x.reference) for x in loaded]  # ~0.5 ms a row to draw)
        failed = sum(bool(p.reference_failures) for p in res.problems)
        line(
            f"{file}: {len(res.problems)} problems, "
            f"{sum(len(p.status) for p in res.problems)} programs, "
            f"{sum(len(p.status) * len(p.status[0]) for p in res.problems)} cells; mean pass "
            f"{statistics.fmean(f for p in res.problems for f in p.pass_fraction):.2f}; "
            f"references pass in {sum(checked) - failed} problems and fail in {failed} "
            f"({len(checked) - sum(checked)} without); "
            f"{sum(bool(p.invalid_tests) for p in res.problems)} with invalid tests; "
            f"a row per problem in sandbox_run.json"
        )
        line(f"isolation: {', '.join(res.isolation)}; written to {out}/sandbox_run.json")
    else:
        references = {x.id: x.reference for x in loaded}
        table = Table(title=Text(_plain(f"{file}: {len(res.problems)} problems")))
        for col in ("id", "programs", "tests", "invalid", "mean pass", "reference"):
            table.add_column(col, justify="left" if col == "id" else "right")
        for p in res.problems:
            refs = references[p.id]
            table.add_row(
                Text(_plain(p.id)),
                str(len(p.status)),
                str(len(p.status[0])),
                str(len(p.invalid_tests)),
                f"{statistics.fmean(p.pass_fraction):.2f}",
                "-" if not refs else ("FAIL" if p.reference_failures else "pass"),
            )
        console.print(table)
        line(f"isolation: {', '.join(res.isolation)}; written to {out}/sandbox_run.json")
    for p in res.problems:
        if p.invalid_tests:
            n, first = len(p.status[0]), p.invalid_tests[0]
            none = len(p.invalid_tests) == n
            line(
                f"invalid tests: problem {p.id!r}, {len(p.invalid_tests)} of {n}"
                + (" (no valid test: every program scores 0)" if none else "")
                + f"; test {first['test']}: {first['reason']}"
            )
        for f in p.reference_failures:
            line(
                f"reference failure: problem {p.id!r}, program {f['program']}, test "
                f"{f['test']}: {f['status']}" + (f" ({f['detail']})" if f["detail"] else "")
            )
    if res.reference_failures:
        raise SystemExit(1)


def _plain(text: str) -> str:
    """Text from a file or a program, shown as it is: control characters escaped (no escape
    sequence reaches the terminal); printed without markup."""
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)
