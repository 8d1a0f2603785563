"""The ``rewardkit`` command.

    rewardkit --version
    rewardkit demo [--out DIR] [--json]

Exit status: 0 success, 1 a check or gate failed, 2 bad arguments or bad input (one line on
stderr naming what was wrong and what is accepted).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ._json import canonical_json, content_hash, write_atomic
from ._version import __version__
from .errors import RewardkitError

__all__ = ["cli", "main"]


def _common(f: Any) -> Any:
    """--json and --out on every subcommand (they are accepted before the subcommand too)."""
    f = click.option(
        "--json",
        "as_json",
        is_flag=True,
        default=None,
        help="Print machine-readable JSON instead of tables.",
    )(f)
    f = click.option(
        "--out",
        "out",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Directory for the JSON artefacts [default: out].",
    )(f)
    return f


def _settings(ctx: click.Context, as_json: bool | None, out: Path | None) -> tuple[bool, Path]:
    parent = ctx.find_root().params
    j = as_json if as_json is not None else bool(parent.get("as_json"))
    o = out if out is not None else (parent.get("out") or Path("out"))
    return j, o


def write_artefacts(out: Path, artefacts: dict[str, Any]) -> dict[str, str]:
    """Write each artefact atomically as canonical JSON; return name → content hash."""
    hashes: dict[str, str] = {}
    for name, obj in sorted(artefacts.items()):
        text = canonical_json(obj, indent=1) + "\n"
        write_atomic(out / name, text)
        hashes[name] = content_hash(text.encode("utf-8"))
    write_atomic(
        out / "manifest.json",
        canonical_json({"rewardkit": __version__, "artefacts": hashes}, indent=1) + "\n",
    )
    return hashes


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(
    __version__, "--version", prog_name="rewardkit", message="%(prog)s %(version)s"
)
@_common
def cli(as_json: bool | None, out: Path | None) -> None:
    """Build verifiable rewards for LLM RL and prove them before training."""


@cli.command()
@_common
@click.pass_context
def demo(ctx: click.Context, as_json: bool | None, out: Path | None) -> None:
    """Run the main job on the embedded defaults and write its artefacts to --out."""
    from rich.console import Console
    from rich.table import Table

    from .demo import run_demo

    as_json, out = _settings(ctx, as_json, out)
    console = Console(stderr=as_json)
    with console.status("running the demo…") as status:
        report = run_demo(progress=lambda title: status.update(f"done: {title}"))
    artefacts = {name: obj for s in report.sections for name, obj in s.artefacts.items()}
    artefacts["checks.json"] = {s.name: [c.to_dict() for c in s.checks] for s in report.sections}
    hashes = write_artefacts(out, artefacts)
    if as_json:
        click.echo(
            canonical_json(
                {
                    "passed": report.passed,
                    "out": out.as_posix(),
                    "artefacts": hashes,
                    "checks": artefacts["checks.json"],
                }
            )
        )
    else:
        table = Table(title="rewardkit demo — embedded defaults")
        for col in ("section", "check", "expected", "measured", "ok"):
            table.add_column(col)
        for s in report.sections:
            for c in s.checks:
                table.add_row(
                    s.name,
                    c.name,
                    c.expected,
                    c.measured,
                    "[green]PASS[/]" if c.passed else "[red]FAIL[/]",
                )
        console.print(table)
        console.print(f"artefacts written to {out}/ ({len(hashes)} files + manifest.json)")
    if not report.passed:
        sys.exit(1)


def main(argv: list[str] | None = None) -> int:
    """Entry point: usage and input errors become one line on stderr and exit status 2."""
    try:
        rv = cli.main(args=argv, prog_name="rewardkit", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
        return 2
    except click.UsageError as exc:
        click.echo(f"rewardkit: error: {exc.format_message()}", err=True)
        return 2
    except RewardkitError as exc:
        click.echo(f"rewardkit: error: {exc}", err=True)
        return 2
    except click.Abort:
        click.echo("rewardkit: aborted", err=True)
        return 130
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    return int(rv) if isinstance(rv, int) else 0


if __name__ == "__main__":
    sys.exit(main())
