"""``rewardkit autorater``: the proper-reward diagnostic and its receipt.

    rewardkit autorater diagnostic --seeds 42 43 44 --device cpu --receipt FILE [--json] [--out DIR]

Prints one row per seed (or the receipt as JSON with --json), writes ``autorater-receipt.json``
(+ manifest) to --out and, with --receipt, the receipt to FILE, atomically. Exit status 1 when a
check of the diagnostic fails, 2 for bad arguments (e.g. --device cuda without a GPU).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from .._cliutil import (
    SEED,
    HelpGroup,
    check_out_file,
    common_options,
    resolve_settings,
    write_artefacts,
)
from .._json import canonical_json, write_atomic
from .proof import receipt


class _SeedsCommand(click.Command):
    """Accepts ``--seeds 42 43 44`` (click options take one value each) by rewriting it to
    ``--seeds 42 --seeds 43 --seeds 44`` before parsing."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        out: list[str] = []
        in_seeds = False
        for a in args:
            if a == "--seeds":
                in_seeds, first = True, True
                out.append(a)
                continue
            if in_seeds and not a.startswith("-"):
                if not first:
                    out.append("--seeds")
                out.append(a)
                first = False
                continue
            in_seeds = False
            out.append(a)
        return super().parse_args(ctx, out)


@click.group(cls=HelpGroup)
def autorater() -> None:
    """Probabilistic autorater rewards (strict parser, Brier / log proper rewards)."""


@autorater.command(cls=_SeedsCommand)
@click.option(
    "--seeds",
    type=SEED,
    multiple=True,
    help="Seeds, space-separated [default: 42 43 44].",
)
@click.option("--device", default="cpu", show_default=True, help="cpu, cuda or cuda:N.")
@click.option(
    "--receipt",
    "receipt_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the receipt JSON to this file.",
)
@common_options
@click.pass_context
def diagnostic(
    ctx: click.Context,
    seeds: tuple[int, ...],
    device: str,
    receipt_path: Path | None,
    as_json: bool | None,
    out: Path | None,
) -> None:
    """Check the proper-reward math per seed and bind the result in a receipt."""
    as_json, out = resolve_settings(ctx, as_json, out)
    if receipt_path is not None:
        # its own artefact autorater-receipt.json holds the same bytes; the manifest does not
        check_out_file(receipt_path, "--receipt", out, ())
    rec = receipt(seeds=seeds or (42, 43, 44), device=device)
    text = canonical_json(rec, indent=1) + "\n"
    if receipt_path is not None:
        write_atomic(receipt_path, text)
    write_artefacts(out, {"autorater-receipt.json": rec})
    if as_json:
        click.echo(canonical_json(rec))
    else:
        _print_table(rec, receipt_path, out)
    if not rec["passed"]:
        sys.exit(1)


def _print_table(rec: dict[str, Any], receipt_path: Path | None, out: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=f"autorater diagnostic on {rec['device']['requested']} ({rec['device']['name']})"
    )
    for col in ("seed", "backend", "propriety err (B / L)", "isolation", "grad → y", "ok"):
        table.add_column(col)
    for seed, d in rec["seeds"].items():
        table.add_row(
            seed,
            d["gradient_backend"],
            f"{d['propriety_brier_max_argmax_error']:.1e} / "
            f"{d['propriety_log_max_argmax_error']:.1e}",
            f"{max(d['isolation_brier_max_abs_diff'], d['isolation_log_max_abs_diff']):.1e}",
            f"{min(d['grad_brier_toward_y_frac'], d['grad_log_toward_y_frac']):.3f}",
            "[green]PASS[/]" if d["passed"] else f"[red]FAIL[/] {', '.join(d['failed'])}",
        )
    console = Console()
    console.print(table)
    console.print(rec["scope"])
    console.print(f"source {rec['source_sha256']}")
    console.print(f"receipt {rec['receipt_sha256']}")
    where = f"{receipt_path} and " if receipt_path is not None else ""
    console.print(f"written to {where}{out}/autorater-receipt.json")
