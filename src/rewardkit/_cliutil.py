"""Shared pieces of the ``rewardkit`` subcommands: --json / --out, artefact writing, output.

A subcommand module (``rewardkit.<area>.cli``) defines click commands with
``@common_options`` and a ``click.pass_context`` first argument, calls
``resolve_settings(ctx, as_json, out)``, writes its artefacts with ``write_artefacts`` and exits
1 when a gate or check fails. Bad input raises ``RewardkitError`` subclasses; the entry point
turns them into one line on stderr and exit status 2.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

from ._json import canonical_json, content_hash, write_atomic
from ._version import __version__
from .errors import ConfigError

__all__ = [
    "MAX_SEED",
    "REWARD_LIMIT",
    "SEED",
    "FiniteFloatRange",
    "HelpGroup",
    "refuse_repeated",
    "refuse_unused",
    "check_out",
    "check_out_file",
    "common_options",
    "resolve_settings",
    "write_artefacts",
]


# Bounds shared by every command (docs/cli.md, "Numbers and repeated options").
MAX_SEED = 2**32 - 1  # numpy's legacy seeding and torch's generators take seeds below 2**32
SEED = click.IntRange(0, MAX_SEED)
REWARD_LIMIT = 1e6  # a reward value or threshold given on the command line: |x| <= 1e6


def refuse_repeated(cmd: click.Command, ctx: click.Context, args: list[str]) -> None:
    """Refuse a single-valued option given more than once (click would keep the last one).

    Options declared ``multiple`` (``--seeds``, ``--load``, ``--env``) may repeat."""
    parser = cmd.make_parser(ctx)
    try:
        values, _, order = parser.parse_args(args=list(args))
    except click.UsageError:
        return  # the command's own parse reports it
    seen: set[str | None] = set()
    for p in order:
        if not isinstance(p, click.Option) or p.multiple or p.count or p.is_eager:
            continue
        if p.name in seen:
            names = "/".join(o for o in [*p.opts, *p.secondary_opts])
            takes = "a flag" if p.is_flag else "it takes one value"
            raise click.UsageError(
                f"Option '{names}' was given more than once ({takes}: give it once).", ctx
            )
        seen.add(p.name)
    refuse_empty_paths(cmd, ctx, values)


def refuse_empty_paths(cmd: click.Command, ctx: click.Context, values: dict[str, Any]) -> None:
    """Refuse a path given as the empty string (``--out ""``, an unset shell variable): click
    reads it as ".", so a command would write into, or read, the working directory. A NUL
    byte (possible only through ``main(argv)``) is refused too: no file can be named so."""
    for p in cmd.params:
        if not isinstance(p.type, click.Path) or p.name not in values:
            continue
        given = values[p.name]
        for v in given if isinstance(given, (list, tuple)) else [given]:
            what = p.opts[0] if isinstance(p, click.Option) else p.human_readable_name
            if v == "":
                raise click.UsageError(
                    f"Invalid value for '{what}': an empty path (give a file or folder name; "
                    "'.' for the working directory).",
                    ctx,
                )
            if isinstance(v, str) and "\0" in v:  # only from a caller of main(), not a shell
                raise click.UsageError(
                    f"Invalid value for '{what}': a path with a NUL byte ({v!r}).", ctx
                )


def refuse_unused(ctx: click.Context, names: tuple[str, ...], applies_to: str) -> None:
    """Refuse options given on the command line that the chosen mode does not read (they
    would be silently ignored): ``names`` are parameter names, ``applies_to`` says where they
    apply."""
    given = [
        p
        for p in ctx.command.params
        if p.name in names
        and ctx.get_parameter_source(p.name) is click.core.ParameterSource.COMMANDLINE
    ]
    if given:
        opts = ", ".join(p.opts[0] for p in given)
        verb = "applies" if len(given) == 1 else "apply"
        raise click.UsageError(f"{opts} {verb} to {applies_to} only: drop it", ctx)


class HelpGroup(click.Group):
    """A click group whose command list shows each command's first sentence whole (wrapped),
    never cut with "...", and that refuses an option given twice (to itself or to the
    command it runs)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        refuse_repeated(self, ctx, args)
        return super().parse_args(ctx, args)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, cmd, rest = super().resolve_command(ctx, args)
        if cmd is not None and not isinstance(cmd, click.Group) and not ctx.resilient_parsing:
            refuse_repeated(cmd, click.Context(cmd, parent=ctx, info_name=name), rest)
        return name, cmd, rest

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is None or cmd.hidden:
                continue
            text = cmd.short_help or (cmd.help or "").strip()
            first = " ".join(text.split("\n\n")[0].split())
            rows.append((name, first))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


class FiniteFloatRange(click.FloatRange):
    """click.FloatRange that also refuses nan, inf and -inf (a NaN passes every comparison)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            x = super().convert(value, param, ctx)
        except click.BadParameter:
            read = _float_or_none(value)
            mantissa = str(value).lower().split("e")[0]
            if read != 0.0 or not any(d in mantissa for d in "123456789"):
                raise
            # "1e-400" underflows to 0.0: say so, not "0.0 is not in the range"
            self.fail(
                f"{value!r} (read as {read!r}) is not in the range {self._describe_range()}",
                param,
                ctx,
            )
        if not math.isfinite(x):
            self.fail(
                f"{value!r} is not a finite number (finite numbers in {self._describe_range()})",
                param,
                ctx,
            )
        return x


def _float_or_none(value: Any) -> float | None:
    try:
        return float(value) if isinstance(value, str) else None
    except ValueError:
        return None


def common_options(f: Any) -> Any:
    """--json and --out on a command (also accepted before the subcommand)."""
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


def resolve_settings(
    ctx: click.Context, as_json: bool | None, out: Path | None
) -> tuple[bool, Path]:
    """The command's --json / --out, falling back to the ones given before the subcommand."""
    root = ctx.find_root().params
    for name, here in (("--out", out), ("--json", as_json)):
        if here is not None and root.get(name.strip("-").replace("json", "as_json")) is not None:
            raise click.UsageError(
                f"Option '{name}' was given both before and after the subcommand (give it once).",
                ctx,
            )
    j = as_json if as_json is not None else bool(root.get("as_json"))
    o = out if out is not None else (root.get("out") or Path("out"))
    check_out(o)
    return j, o


_ARTEFACT_NAME_ROOM = 80  # bytes kept for an artefact's name (and its temporary file's)


def check_out(out: Path, option: str = "--out") -> None:
    """Refuse an --out folder that cannot be created or written, before any work is done.

    Accepted: an existing writable directory, or a path whose nearest existing ancestor is a
    writable directory (the folders are made when the artefacts are written)."""
    accepted = "(a directory that exists or can be created, and is writable)"
    if "\0" in str(out):
        raise ConfigError(f"{option} {out!r}: a path with a NUL byte {accepted}")
    try:
        _check_out(out, accepted, option)
    except OSError as exc:  # a name too long (ENAMETOOLONG), a loop of links, ...
        raise ConfigError(f"{option} {out}: {exc.strerror or exc} {accepted}") from None


def _check_out(out: Path, accepted: str, option: str) -> None:
    if out.is_symlink() and not out.exists():
        raise ConfigError(f"{option} {out}: a symbolic link to nothing {accepted}")
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{option} {out}: is a file, not a directory {accepted}")
    probe = out
    while not probe.exists():
        if probe.is_symlink():
            raise ConfigError(f"{option} {out}: {probe} is a symbolic link to nothing {accepted}")
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise ConfigError(f"{option} {out}: {probe} is a file, not a directory {accepted}")
    # The artefacts' paths must fit the file system's limits too (checked before any work):
    # each folder name, and the whole path with room for an artefact's name.
    name_max = os.pathconf(probe, "PC_NAME_MAX")
    path_max = os.pathconf(probe, "PC_PATH_MAX")
    for part in out.parts:
        if len(os.fsencode(part)) > name_max:
            raise ConfigError(
                f"{option} {out}: a folder name longer than {name_max} bytes {accepted}"
            )
    if len(os.fsencode(str(out))) > path_max - 2 * _ARTEFACT_NAME_ROOM:
        raise ConfigError(
            f"{option} {out}: a path longer than {path_max - 2 * _ARTEFACT_NAME_ROOM} bytes "
            f"{accepted}"
        )
    try:  # os.access says yes to root even where nothing can be written (/proc, read-only)
        fd, tmp = tempfile.mkstemp(prefix=".rewardkit-probe-", dir=probe)
    except OSError as exc:
        raise ConfigError(
            f"{option} {out}: {probe} is not writable: {exc.strerror} {accepted}"
        ) from None
    os.close(fd)
    os.unlink(tmp)


def check_out_file(path: Path, option: str, out: Path, artefacts: Iterable[str]) -> None:
    """Refuse an output file option (``--receipt FILE``) that cannot be written, or that the
    command's --out folder would overwrite or be blocked by, before any work is done."""
    if "\0" in str(path):
        raise ConfigError(f"{option} {path!r}: a path with a NUL byte (a file name)")
    target, folder = os.path.abspath(path), os.path.abspath(out)
    if target == folder or folder.startswith(target.rstrip(os.sep) + os.sep):
        raise ConfigError(
            f"{option} {path}: is the --out folder {out} or a folder above it (a file outside "
            "--out, or in it under a name that is not an artefact's)"
        )
    for name in (*artefacts, "manifest.json"):
        if target == os.path.abspath(out / name):
            raise ConfigError(
                f"{option} {path}: the artefact {name} in --out {out} would overwrite it (a file "
                "outside --out, or in it under a name that is not an artefact's)"
            )
    check_out(path.parent, option)
    # written through a temporary file named ".<name>.<8 characters>.tmp" beside it
    if len(os.fsencode(path.name)) + 16 > _name_max():
        raise ConfigError(
            f"{option} {path}: a file name longer than {_name_max() - 16} bytes (a shorter name)"
        )


def _name_max() -> int:
    try:
        return int(os.pathconf(".", "PC_NAME_MAX"))
    except (OSError, ValueError):
        return 255


def write_artefacts(
    out: Path, artefacts: dict[str, Any], *, manifest: str = "manifest.json"
) -> dict[str, str]:
    """Write each artefact atomically (canonical JSON for objects, raw for bytes / str) and
    update the folder's manifest of SHA-256 hashes; return name → hash of this call's files."""
    hashes: dict[str, str] = {}
    for name, obj in sorted(artefacts.items()):
        if isinstance(obj, bytes):
            data = obj
        elif isinstance(obj, str):
            data = obj.encode("utf-8")
        else:
            data = (canonical_json(obj, indent=1) + "\n").encode("utf-8")
        write_atomic(out / name, data)
        hashes[name] = content_hash(data)
    # Commands share an --out folder: keep the other commands' entries whose files are still
    # there, so the manifest always covers every artefact in the folder.
    listed = dict(hashes)
    try:
        previous = json.loads((out / manifest).read_text(encoding="utf-8")).get("artefacts", {})
    except (OSError, ValueError, AttributeError):
        previous = {}
    if isinstance(previous, dict):
        for name, digest in previous.items():
            if name not in listed and isinstance(digest, str) and (out / name).is_file():
                listed[name] = digest
    write_atomic(
        out / manifest,
        canonical_json({"rewardkit": __version__, "artefacts": listed}, indent=1) + "\n",
    )
    return hashes
