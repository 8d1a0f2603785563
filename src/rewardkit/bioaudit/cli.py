"""``rewardkit bioaudit``: audit trajectories and rebuild the frozen benchmark.

    rewardkit bioaudit audit FILE [--rulepack default|deg|pan|scrna|PATH] [--json]
    rewardkit bioaudit generate [--seed N] [--out DIR] [--json]

``audit`` reads a JSONL file of trajectories (schema in ``bioaudit.schema``; the benchmark's
task and golden files work too) and prints each decision's level with the rules behind it.
``generate`` writes the benchmark files and compares their hashes with the shipped v1.2.0:
with the default seed it exits 1 unless every file is reproduced byte for byte.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from .._cliutil import SEED, HelpGroup, common_options, resolve_settings
from .._json import canonical_json, content_hash
from .engine import Engine

__all__ = ["bioaudit"]


@click.group(cls=HelpGroup)
def bioaudit() -> None:
    """The bio-audit reference world: rule engine and frozen synthetic benchmark."""


@bioaudit.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--rulepack",
    default="default",
    show_default=True,
    help="'default' (all three packs), a paradigm (deg, pan, scrna) or a TOML rule pack path.",
)
@common_options
@click.pass_context
def audit(
    ctx: click.Context, file: Path, rulepack: str, as_json: bool | None, out: Path | None
) -> None:
    """Print the engine's level and rule ids for every decision of every trajectory in FILE."""
    from rich.console import Console
    from rich.table import Table

    from .schema import read_trajectories

    as_json, _ = resolve_settings(ctx, as_json, out)
    engine = Engine(rulepack)
    trajectories = read_trajectories(file)
    results: list[dict[str, Any]] = []
    for t in trajectories:
        judgments = engine.audit(t.decisions, paradigm=t.paradigm)
        results.append(
            {
                "trajectory_id": t.trajectory_id,
                "paradigm": t.paradigm,
                "decisions": [
                    {"decision_id": d["decision_id"], "action": d["action"], **j.to_dict()}
                    for d, j in zip(t.decisions, judgments)
                ],
            }
        )
    if as_json:
        click.echo(
            canonical_json(
                {
                    "file": file.as_posix(),
                    "rulepack": {p: pack.hash for p, pack in sorted(engine.packs.items())},
                    "trajectories": results,
                }
            )
        )
        return
    console = Console()
    for r in results:
        table = Table(title=f"{r['trajectory_id']} ({r['paradigm'] or 'paradigm from context'})")
        for col in ("decision", "action", "level", "rules"):
            table.add_column(col)
        for d in r["decisions"]:
            table.add_row(
                d["decision_id"], d["action"], str(d["level"]), ", ".join(d["rule_ids"]) or "-"
            )
        console.print(table)
    levels = [d["level"] for r in results for d in r["decisions"]]
    console.print(
        f"{len(results)} trajectories, {len(levels)} decisions; levels "
        + ", ".join(f"{lv}: {levels.count(lv)}" for lv in (3, 2, 1, 0, -1))
    )


@bioaudit.command()
@click.option("--seed", type=SEED, default=None, help="Generator seed [default: the shipped one].")
@common_options
@click.pass_context
def generate(ctx: click.Context, seed: int | None, as_json: bool | None, out: Path | None) -> None:
    """Rebuild the synthetic benchmark into --out and compare it with the shipped v1.2.0."""
    from .benchmark import load_benchmark
    from .generator import DEFAULT_SEED
    from .generator import generate as _generate

    as_json, out_dir = resolve_settings(ctx, as_json, out)
    seed = DEFAULT_SEED if seed is None else seed
    files = _generate(seed, out=out_dir)
    shipped = load_benchmark().hashes

    rows = {
        name: {"hash": content_hash(data), "shipped": shipped.get(name)}
        for name, data in files.items()
        if name != "manifest.json"
    }
    identical = all(r["hash"] == r["shipped"] for r in rows.values())
    if as_json:
        click.echo(
            canonical_json(
                {
                    "seed": seed,
                    "out": out_dir.as_posix(),
                    "files": rows,
                    "identical": identical,
                }
            )
        )
    else:
        for name, r in rows.items():
            mark = "identical" if r["hash"] == r["shipped"] else "differs"
            click.echo(f"{name:18s} {r['hash']}  {mark}")
        click.echo(f"written to {out_dir}/ (seed {seed}); synthetic benchmark")
    if not identical:  # as documented: exit 1 unless every file is byte-identical
        sys.exit(1)
