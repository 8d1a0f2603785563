"""The ``rewardkit`` command.

    rewardkit --version
    rewardkit demo [--out DIR] [--json]

Subcommands are registered in ``_commands.COMMANDS`` and imported only when used, so that
``rewardkit --help`` stays fast and an area's optional dependencies load only for its commands.
Exit status: 0 success, 1 a check or gate failed, 2 bad arguments or bad input (one line on
stderr naming what was wrong and what is accepted, nothing written), 3 an internal error (one
line; ``--debug`` shows the traceback). A data file that uses a field's old name is read, with
one line ``rewardkit: warning: <file>, line N: field '<old>' is deprecated; rename it to
'<new>' ...`` on stderr.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from pathlib import Path
from typing import Any

import click

from ._cliutil import HelpGroup, common_options, resolve_settings, write_artefacts
from ._commands import COMMANDS
from ._journal import Journal
from ._json import canonical_json
from ._version import __version__
from .errors import RenamedFieldWarning, RewardkitError

__all__ = ["cli", "main"]


class LazyGroup(HelpGroup):
    """A click group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS:
            module, attr = COMMANDS[cmd_name].split(":")
            cmd = getattr(importlib.import_module(module), attr)
            if not isinstance(cmd, click.Command):
                raise TypeError(f"{COMMANDS[cmd_name]} is not a click command")
            return cmd
        return super().get_command(ctx, cmd_name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(
    __version__, "--version", prog_name="rewardkit", message="%(prog)s %(version)s"
)
@common_options
def cli(as_json: bool | None, out: Path | None) -> None:
    """Build verifiable rewards for LLM RL and prove them before training."""


@click.command()
@common_options
@click.pass_context
def demo(ctx: click.Context, as_json: bool | None, out: Path | None) -> None:
    """Run the main job on the embedded defaults; write its artefacts and report.html to --out."""
    from rich.console import Console
    from rich.table import Table

    from ._json import write_atomic
    from ._optional import have
    from .demo import DemoReport, run_demo
    from .learn.demo import artefact_sections

    as_json, out = resolve_settings(ctx, as_json, out)
    console = Console(stderr=as_json)
    err = Console(stderr=True)
    report = run_demo(progress=None)  # a progress bar on stderr when it is a terminal
    # `rewardkit learn … --out` runs in the same folder appear too (the demo does not train)
    report = DemoReport((*report.sections, *artefact_sections(out)), report.skipped)
    artefacts: dict[str, Any] = {
        name: obj for s in report.sections for name, obj in s.artefacts.items()
    }
    artefacts["checks.json"] = {s.name: [c.to_dict() for c in s.checks] for s in report.sections}
    hashes = write_artefacts(out, artefacts)
    report_path: Path | None = None
    if have("jinja2") and have("matplotlib"):
        from .report import render_report

        with err.status("writing report.html…"):
            html = render_report(report, artefacts=hashes)
            report_path = write_atomic(out / "report.html", html)
    else:
        err.print(
            "report.html not written: the HTML report needs the optional packages jinja2 and "
            "matplotlib. Install them with: pip install 'rewardkit[report]'"
        )
    if as_json:
        click.echo(
            canonical_json(
                {
                    "passed": report.passed,
                    "out": out.as_posix(),
                    "artefacts": hashes,
                    "checks": artefacts["checks.json"],
                    "report": None if report_path is None else report_path.as_posix(),
                    "skipped": report.skipped,
                }
            )
        )
    else:
        table = Table(title="rewardkit demo — embedded defaults")
        for col in ("section", "check", "expected", "measured", "ok"):
            table.add_column(col)
        for s in report.sections:
            for c in s.checks:
                ok = "[green]PASS[/]" if c.passed else "[red]FAIL[/]"
                table.add_row(s.name, c.name, c.expected, c.measured, ok)
        console.print(table)
        for spec, why in sorted(report.skipped.items()):
            console.print(f"[dim]skipped {spec}: {why}[/]")
        console.print(f"artefacts written to {out}/ ({len(hashes)} files + manifest.json)")
        if report_path is not None:
            console.print(f"report: {report_path}")
    if not report.passed:
        sys.exit(1)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _short_words(text: str, limit: int = 300) -> str:
    """``text`` with every word longer than ``limit`` characters cut: a 5,000-digit number or
    a 5,000-character name typed as an option value is echoed back by the check that refuses
    it, and the one line should stay readable."""
    return " ".join(
        w if len(w) <= limit else f"{w[:40]}... ({len(w)} characters)" for w in text.split(" ")
    )


def _show_renamed(show: Any) -> Any:
    """A ``warnings.showwarning`` that prints a renamed field as one line on stderr."""

    def showwarning(message: Any, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        if issubclass(category, RenamedFieldWarning):
            click.echo(f"rewardkit: warning: {_one_line(str(message))}", err=True)
        else:
            show(message, category, *args, **kwargs)

    return showwarning


def main(argv: list[str] | None = None) -> int:
    """Entry point; see :func:`_main`. A :class:`~rewardkit.errors.RenamedFieldWarning` (a
    data file using a field's old name) is shown as one line ``rewardkit: warning: ...``."""
    with warnings.catch_warnings():
        warnings.simplefilter("default", RenamedFieldWarning)
        warnings.showwarning = _show_renamed(warnings.showwarning)
        return _main(argv)


def _main(argv: list[str] | None = None) -> int:
    """Entry point. Exit status: 0 success; 1 a gate or check failed; 2 bad arguments or bad
    input (one line on stderr: ``rewardkit: error: <file>[, line N][, field F]: <what>
    (<what is accepted>)``); 3 an internal error (one line, and the hint to rerun with
    ``--debug`` for the traceback). ``--debug`` anywhere in the arguments lets the
    traceback of an internal error through."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    args = [a for a in args if a != "--debug"]
    # A run that ends in bad input (2), an internal error (3) or an interrupt (130) leaves
    # --out as it found it: the artefacts it wrote are removed, the ones it replaced restored.
    journal = Journal().open()
    code: int | None = None
    try:
        code = _run(args, debug)
    finally:
        if code is None or code in (2, 3, 130):
            journal.rollback()
        else:
            journal.commit()
    return code


def _run(args: list[str], debug: bool) -> int:
    try:
        rv = cli.main(args=args, prog_name="rewardkit", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
        return 2
    except click.UsageError as exc:
        click.echo(f"rewardkit: error: {_short_words(_one_line(exc.format_message()))}", err=True)
        return 2
    except RewardkitError as exc:
        click.echo(f"rewardkit: error: {_short_words(_one_line(str(exc)))}", err=True)
        return 2
    except click.Abort:
        click.echo("rewardkit: aborted", err=True)
        return 130
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except SystemExit as exc:  # a command's sys.exit(1): a failed gate or check
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # a bug (also GeneratorExit & co.): one line, traceback on request
        if debug:
            raise
        click.echo(
            f"rewardkit: internal error: {type(exc).__name__}: {_one_line(str(exc))[:300]} "
            "(this is a bug; rerun with --debug for the traceback)",
            err=True,
        )
        return 3
    return int(rv) if isinstance(rv, int) else 0


if __name__ == "__main__":
    sys.exit(main())
