"""``rewardkit learn calibration|gating``: run a pre-registered GRPO experiment on CPU.

    rewardkit learn calibration [--seeds 0,1,2] [--steps 400] [--json] [--out DIR]
    rewardkit learn gating      [--seeds 0,1,2] [--steps 400] [--json] [--out DIR]

Files go to ``DIR/learn/<experiment>/`` (DIR defaults to ``out``, the folder ``rewardkit demo``
writes, whose report then shows the experiment): ``preregistration.json`` (written before
training), ``summary.json``, ``curves.jsonl``, ``curves.png`` and a manifest. Exit status 0
whatever the outcome (a null result is a result), 2 for bad arguments.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from .._cliutil import MAX_SEED, HelpGroup, common_options, resolve_settings, write_artefacts
from .._json import canonical_json

__all__ = ["learn"]

DEFAULT_SEEDS = (0, 1, 2)
DEFAULT_STEPS = 400
MAX_STEPS = 10_000
MAX_SEEDS = 100


def _seeds(ctx: click.Context, param: click.Parameter, value: str) -> tuple[int, ...]:
    try:
        seeds = tuple(int(s) for s in value.split(","))
    except ValueError:
        seeds = ()
    if (
        not seeds
        or len(seeds) > MAX_SEEDS
        or any(not 0 <= s <= MAX_SEED for s in seeds)
        or len(set(seeds)) != len(seeds)
    ):
        shown = value if len(value) <= 60 else value[:57] + "..."
        raise click.BadParameter(
            f"must be 1 to {MAX_SEEDS} distinct ints in [0, {MAX_SEED}] separated by commas "
            f"(e.g. 0,1,2). Got {shown!r}.",
            ctx=ctx,
            param=param,
        )
    return seeds


def _options(f: Any) -> Any:
    f = click.option(
        "--seeds",
        default=",".join(map(str, DEFAULT_SEEDS)),
        show_default=True,
        callback=_seeds,
        help="Seeds, comma-separated (each seed trains every arm; arms are paired by seed).",
    )(f)
    f = click.option(
        "--steps",
        type=click.IntRange(1, MAX_STEPS),
        default=DEFAULT_STEPS,
        show_default=True,
        help="GRPO steps per arm and seed (at most 10,000; 400 take minutes on CPU).",
    )(f)
    return common_options(f)


@click.group("learn", cls=HelpGroup)
def learn() -> None:
    """Pre-registered GRPO experiments on CPU: do the rewards teach what they claim?"""


def _run(
    name: str,
    ctx: click.Context,
    seeds: tuple[int, ...],
    steps: int,
    as_json: bool | None,
    out: Path | None,
) -> None:
    from rich.console import Console

    from .calibration import CalibrationTask
    from .gating import GatingTask
    from .runner import run_experiment

    as_json, root = resolve_settings(ctx, as_json, out)
    folder = root / "learn" / name
    err = Console(stderr=True)
    task = CalibrationTask() if name == "calibration" else GatingTask()
    t0 = time.perf_counter()
    res = run_experiment(
        task,  # type: ignore[arg-type]
        seeds=seeds,
        steps=steps,
        out=folder,
        on_progress=lambda m: err.print(f"[dim]{m}[/]") if not as_json else None,
    )
    wall = time.perf_counter() - t0
    files: dict[str, Any] = {
        "preregistration.json": res.preregistration,
        "summary.json": res.summary_json(),
        "curves.jsonl": res.curves_jsonl(),
    }
    if (folder / "curves.png").is_file():
        files["curves.png"] = (folder / "curves.png").read_bytes()
    hashes = write_artefacts(folder, files, manifest="manifest.json")
    if as_json:
        click.echo(
            canonical_json(
                {
                    "experiment": name,
                    "out": folder.as_posix(),
                    "preregistration": res.preregistration,
                    "preregistration_hash": res.preregistration_hash,
                    "per_seed": res.summary_json()["runs"],
                    "summary": res.summary,
                    "artefacts": hashes,
                }
            )
        )
    else:
        _print(res, folder, wall)


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.4f}"


def _print(res: Any, folder: Path, wall: float) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    s = res.summary
    table = Table(
        title=f"rewardkit learn {res.experiment} — {s['n_seeds']} seeds, {res.steps} steps"
    )
    for col in ("metric", "arm", "before", "after", "arm − reference (95% CI)"):
        table.add_column(col)
    for name, m in s["metrics"].items():
        for arm, a in m["per_arm"].items():
            pd = m["vs_reference"].get(arm)
            if pd is None:
                ci = "reference"
            elif pd.low is None:
                ci = f"{_fmt(pd.mean)} (one seed: no interval)"
            else:
                ci = f"{_fmt(pd.mean)} [{_fmt(pd.low)}, {_fmt(pd.high)}]"
            table.add_row(name, arm, _fmt(a["mean_before"]), _fmt(a["mean_after"]), ci)
    console.print(table)
    for line in s["effects_found"] or ["no effect found at this number of seeds"]:
        console.print(f"• {line}")
    console.print(f"written to {folder}/ in {wall:.0f} s (pre-registration written first)")


@learn.command("calibration")
@_options
@click.pass_context
def calibration_cmd(
    ctx: click.Context, seeds: tuple[int, ...], steps: int, as_json: bool | None, out: Path | None
) -> None:
    """Brier and log rewards against the improper 'rounded = label' reward (see docs/learn.md)."""
    _run("calibration", ctx, seeds, steps, as_json, out)


@learn.command("gating")
@_options
@click.pass_context
def gating_cmd(
    ctx: click.Context, seeds: tuple[int, ...], steps: int, as_json: bool | None, out: Path | None
) -> None:
    """A naive stack (fail value 0) against the ordered stack on a task where cheating is easy."""
    _run("gating", ctx, seeds, steps, as_json, out)
