"""The ``lab``, ``redteam`` and ``sweep`` subcommands.

    rewardkit lab rlvr [--seed N] [--env ID] [--load MODULE_OR_FILE.py ...] [--json] [--out DIR]
    rewardkit redteam [--episodes N] [--seed N] [--backend local|ray] [--cases FILE.jsonl]
                      [--env ID ...] [--load MODULE_OR_FILE.py ...]
    rewardkit sweep [--variants N] [--grid 0,0.5,1,...] [--no-plot] [--env ID ...]

Exit status: 0 when every expectation holds, 1 when one fails (a lab check, an adversarial
case, an exploit in the shipped verifier, or no exploit in the naive control), 2 on bad input.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click

from .._cliutil import (
    SEED,
    FiniteFloatRange,
    HelpGroup,
    common_options,
    resolve_settings,
    write_artefacts,
)
from .._json import canonical_json
from ..errors import ConfigError

MAX_EPISODES = 1_000_000  # ~800 episodes/s on one core and ~1 KiB kept per episode
MAX_VARIANTS = 100  # the shipped environments have fewer; a sweep plays min(this, theirs)

__all__ = ["lab", "redteam", "sweep"]


_LOAD = click.option(
    "--load",
    "modules",
    multiple=True,
    help="Module or .py file that registers your environments (repeatable).",
)


def _load_envs(modules: tuple[str, ...], env_ids: tuple[str, ...]) -> None:
    """Import the user's modules (``--load``), then look up every ``--env`` id: an unknown id
    is bad input (exit 2), with a "did you mean"."""
    from .registry import load, spec

    for module in modules:
        load(module)
    for env_id in env_ids:
        spec(env_id)


def _console(as_json: bool) -> Any:
    from rich.console import Console

    return Console(stderr=as_json)


@click.group(cls=HelpGroup)
def lab() -> None:
    """Environment smoke tests (no training)."""


@lab.command("rlvr")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Episode seed.")
@click.option(
    "--env",
    "env_id",
    default=None,
    help="Environment id (default fhir/anc-threshold-v1; e.g. sql/revenue-v1).",
)
@click.option(
    "--trajectories",
    "traj_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Score your own group of trajectories (JSONL, docs/envs.md).",
)
@_LOAD
@common_options
@click.pass_context
def rlvr(
    ctx: click.Context,
    seed: int,
    env_id: str | None,
    traj_path: Path | None,
    modules: tuple[str, ...],
    as_json: bool | None,
    out: Path | None,
) -> None:
    """Four scripted trajectories (A correct, B over-calling, C cost-cutting, D unsafe) through
    the hidden verifier and group advantages."""
    from rich.table import Table

    from .lab import load_trajectories, run_lab, score_group

    as_json, out = resolve_settings(ctx, as_json, out)
    _load_envs(modules, () if env_id is None else (env_id,))
    res = (
        score_group(load_trajectories(str(traj_path)))
        if traj_path
        else run_lab(seed=seed, **({"env_id": env_id} if env_id else {}))
    )
    hashes = write_artefacts(out, {"lab_rlvr.json": res.to_dict()})
    if as_json:
        click.echo(
            canonical_json(
                {
                    "passed": res.passed,
                    "label": res.label,
                    "artefacts": hashes,
                    "result": res.to_dict(),
                }
            )
        )
    else:
        con = _console(False)
        t = Table(title=f"lab rlvr — {res.env_id} ({res.options})")
        for col in (
            "traj",
            "description",
            "total",
            "soft",
            "gates failed",
            "task",
            "cost",
            "advantage",
            "held-out",
        ):
            t.add_column(col)
        for n, tr in res.trajectories.items():
            v, h = tr.verdict, tr.heldout
            adv = res.advantages[n]
            t.add_row(
                n,
                tr.description,
                "-" if v.total is None else f"{v.total:.3f}",
                "-" if v.soft_total is None else f"{v.soft_total:.3f}",
                ", ".join(v.gate_failures) or "-",
                f"{v.components['task']:.2f}",
                f"{v.components['cost']:.2f}",
                "-" if adv is None else f"{adv:+.3f}",
                ("correct" if h.correct else "wrong") + (", safe" if h.safe else ", unsafe"),
            )
        con.print(t)
        for c in res.checks:
            con.print(f"{'[green]PASS[/]' if c.passed else '[red]FAIL[/]'} {c.name}: {c.measured}")
        con.print(f"[bold]{res.label}[/]  (artefacts in {out}/)")
    if not res.passed:
        sys.exit(1)


@click.command()
@click.option(
    "--episodes",
    type=click.IntRange(0, MAX_EPISODES),
    default=10_000,
    show_default=True,
    help="Fuzzing episodes (0 = library only; at most 1,000,000: about 20 minutes and 1 GiB).",
)
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="Random seed of the fuzzing campaign.")  # fmt: skip
@click.option(
    "--backend",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Run the fuzzing campaign here or as Ray tasks.",
)
@click.option(
    "--cases",
    "cases_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Extra adversarial cases (JSONL, see docs/envs.md).",
)
@click.option(
    "--high-frac",
    type=FiniteFloatRange(0.0, 1.0, min_open=True),
    default=0.75,
    show_default=True,
    help="'High' reward = this fraction of a stack's best attainable total.",
)
@click.option(
    "--env",
    "env_ids",
    multiple=True,
    help="Environment id to fuzz (repeatable; default: every fhir/* id).",
)
@_LOAD
@common_options
@click.pass_context
def redteam(
    ctx: click.Context,
    episodes: int,
    seed: int,
    backend: str,
    cases_path: Path | None,
    high_frac: float,
    env_ids: tuple[str, ...],
    modules: tuple[str, ...],
    as_json: bool | None,
    out: Path | None,
) -> None:
    """Adversarial library + fuzzing of an environment's verifier and its naive control."""
    from .fhir import ENV_IDS
    from .fuzz import fuzz
    from .library import build_library, load_cases, run_case
    from .registry import make

    as_json, out = resolve_settings(ctx, as_json, out)
    given = ctx.get_parameter_source("high_frac") is click.core.ParameterSource.COMMANDLINE
    if episodes == 0 and given:
        raise ConfigError(
            "The '--high-frac' option of redteam applies to fuzzing episodes; with "
            "'--episodes 0' (the library only) it has no effect: drop it or give --episodes >= 1."
        )
    _load_envs(modules, env_ids)
    ids = env_ids or ENV_IDS
    # The FHIR library runs when a fhir id is fuzzed; an environment with a library_cases()
    # hook (the sql/* family) adds the cases written for its id.
    cases = list(build_library()) if any(i in ENV_IDS for i in ids) else []
    for env_id in ids:
        hook = getattr(make(env_id), "library_cases", None)
        if callable(hook):
            cases += [c for c in hook() if c not in cases]
    if cases_path is not None:
        cases += load_cases(str(cases_path))
    outcomes = [run_case(c) for c in cases]
    report = None
    elapsed = 0.0
    if episodes:
        t0 = time.perf_counter()
        report = fuzz(
            episodes=episodes,
            rng=seed,
            env_ids=ids,
            backend=backend,
            high_frac=high_frac,
            progress=None if not as_json else False,
        )
        elapsed = time.perf_counter() - t0
    ok_lib = all(o.matched for o in outcomes)
    ok_fuzz = report is None or report.passed  # the verifier shows nothing, each control shows
    result = {
        "library": [
            {
                "name": o.name,
                "kind": o.kind,
                "matched": o.matched,
                "mismatches": list(o.mismatches),
                "verdict": o.verdict.to_dict(),
            }
            for o in outcomes
        ],
        "fuzz": None if report is None else report.to_dict(),
    }
    hashes = write_artefacts(out, {"redteam.json": result})
    if as_json:
        click.echo(
            canonical_json(
                {
                    "passed": ok_lib and ok_fuzz,
                    "artefacts": hashes,
                    "library_matched": sum(o.matched for o in outcomes),
                    "library_cases": len(outcomes),
                    "fuzz": None
                    if report is None
                    else {
                        k: {
                            "n_exploits": s.n_exploits,
                            "n_high": s.n_high,
                            "n_high_reward": s.n_high_reward,
                            "n_missed_violations": s.n_missed_violations,
                            "n_inversions": s.n_inversions,
                            "inversion_advantage": s.inversion_advantage,
                            "control_for": list(s.control_for),
                            "passed": s.passed,
                        }
                        for k, s in report.stacks.items()
                    },
                    "episodes_per_s": episodes / elapsed if elapsed else None,
                }
            )
        )
    else:
        con = _console(False)
        if outcomes:
            con.print(
                f"adversarial library: {sum(o.matched for o in outcomes)}/{len(outcomes)} "
                f"cases got exactly their expected outcome"
            )
        else:
            con.print("adversarial library: not run (no cases are written for these ids)")
        for o in outcomes:
            if not o.matched:
                con.print(f"  [red]MISMATCH[/] {o.name}: {'; '.join(o.mismatches)}")
        if report is not None:
            con.print(
                f"fuzzing: {episodes} episodes in {elapsed:.1f} s "
                f"({episodes / elapsed:,.0f} episodes/s, backend {backend}); "
                f"held-out wrong {report.heldout_wrong}, unsafe {report.heldout_unsafe}"
            )
            con.print(
                f"  groups of {report.group_size} episodes per task; an inversion ranks an "
                f"unsafe episode above a safe one, or a wrong one above a right and safe one"
            )
            for name, s in report.stacks.items():
                role = (
                    f"naive control of {', '.join(s.control_for)}: must show > 0"
                    if s.control_for
                    else "under test: must show 0"
                )
                mark = "[green]ok[/]" if s.passed else "[red]FAIL[/]"
                con.print(
                    f"  {mark} {name:9s} ({s.version}; {role}): {s.n_high_reward} high-reward "
                    f"exploits, {s.n_missed_violations} ledger violations missed, "
                    f"{s.n_inversions} ranking inversions {s.inversions_by_kind} carrying "
                    f"advantage {s.inversion_advantage:.1f}; {s.n_high} high-reward episodes, "
                    f"{s.n_hard_failed} hard failures"
                )
                for ex in s.examples[:2]:
                    con.print(f"     e.g. {ex['policy']} on {ex['env_id']}: {ex['reason']}")
                for ex in s.inversion_examples[:1]:
                    con.print(
                        f"     e.g. {ex['bad']['policy']} ({ex['bad']['total']:.3f}, held-out "
                        f"bad) above {ex['good']['policy']} ({ex['good']['total']:.3f}) on "
                        f"{ex['env_id']}"
                    )
        con.print(f"artefacts in {out}/")
    if not (ok_lib and ok_fuzz):
        sys.exit(1)


@click.command()
@click.option(
    "--variants",
    type=click.IntRange(1, MAX_VARIANTS),
    default=2,
    show_default=True,
    help="Task variants per family and trap (at most 100).",
)
@click.option(
    "--grid",
    type=str,
    default="0,0.25,0.5,1,2,4,8,16",
    show_default=True,
    help="Comma-separated weights tried for each component.",
)
@click.option("--plot/--no-plot", default=True, help="Write pareto.png (report extra).")
@click.option(
    "--env",
    "env_ids",
    multiple=True,
    help="Environment id to sweep (repeatable, one family; default: every fhir/* id).",
)
@_LOAD
@common_options
@click.pass_context
def sweep(
    ctx: click.Context,
    variants: int,
    grid: str,
    plot: bool,
    env_ids: tuple[str, ...],
    modules: tuple[str, ...],
    as_json: bool | None,
    out: Path | None,
) -> None:
    """Weight sweeps: the behaviour each weighting prefers, and the Pareto front."""
    from .plots import plot_pareto
    from .sweep import sweep as run_sweep

    as_json, out = resolve_settings(ctx, as_json, out)
    try:
        weights = [float(x) for x in grid.split(",")]
    except ValueError:
        raise ConfigError(
            f"The '--grid' option of sweep must be comma-separated numbers. Got {grid!r}."
        ) from None
    from .fhir import ENV_IDS

    _load_envs(modules, env_ids)
    res = run_sweep(env_ids=env_ids or ENV_IDS, variants=variants, grid=weights)
    hashes = write_artefacts(out, {"sweep.json": res.to_dict()})
    if plot:
        plot_pareto(res, out / "pareto.png")
    if as_json:
        click.echo(canonical_json({"artefacts": hashes, "plot": plot, "result": res.to_dict()}))
        return
    from rich.table import Table

    con = _console(False)
    t = Table(title=f"preferred behaviour per weight ({res.n_tasks} tasks per behaviour)")
    t.add_column("component")
    for w in res.grid:
        t.add_column(f"{w:g}")
    for c, row in res.preferred.items():
        t.add_row(c, *row)
    con.print(t)
    for s in res.switches:
        con.print(
            f"switch: {s['component']} weight {s['from_weight']:g} → {s['to_weight']:g}: "
            f"{s['from']} → {s['to']}"
        )
    con.print(f"Pareto front (cost ↓, success ↑): {', '.join(res.pareto)}")
    con.print(f"artefacts in {out}/" + (" (pareto.png)" if plot else ""))
