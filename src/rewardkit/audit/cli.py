"""``rewardkit calibrate`` and ``rewardkit validate``.

    rewardkit calibrate [--config rewardkit.toml] [--n-resamples B] [--no-plots]
                        [--json] [--out DIR]
    rewardkit validate  [--config rewardkit.toml] [--json] [--out DIR]

Exit status: 0 all gates (or the preregistered acceptance) pass, 1 one fails, 2 bad input
(one line on stderr naming the file / field and what is accepted).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from .._cliutil import common_options, resolve_settings, write_artefacts
from .._json import canonical_json
from ..errors import InputError, MappingError
from .config import AuditConfig
from .protocols import level_reward

__all__ = ["calibrate_cmd", "validate_cmd"]


class UnbuildableReward:
    """Stands in for a reward whose configuration is invalid: every call raises its error, so
    the gates that need a reward fail with that error as evidence."""

    default_recipe = "B"
    recipes = ("A", "B", "C")

    def __init__(self, error: Exception) -> None:
        self.error = error

    def __call__(self, steps: Sequence[Any], *, recipe: str, session: bool) -> Any:
        raise self.error


def _build(target: str) -> Any:
    from ._child import build

    try:
        return build((target, {}))
    except (ImportError, AttributeError) as exc:
        raise InputError(f"cannot import '{target}': {exc}", field="factory") from None


def _setup(cfg: AuditConfig, *, need_valid_reward: bool) -> dict[str, Any]:
    """Judge, reward, their factories and the data, from the validated config."""
    from ..bioaudit import Engine, load_benchmark

    judge_factory: tuple[str, dict[str, Any]]
    reward_factory: tuple[str, dict[str, Any]] | None
    if cfg.judge_factory:
        judge, judge_factory = _build(cfg.judge_factory), (cfg.judge_factory, {})
    else:
        judge, judge_factory = Engine(), ("rewardkit.bioaudit:Engine", {})
    reward: Any
    if cfg.reward_factory:
        reward, reward_factory = _build(cfg.reward_factory), (cfg.reward_factory, {})
    else:
        try:
            reward = level_reward(cfg.mapping, cfg.ceiling, cfg.gamma, cfg.recipe)
            reward_factory = reward.factory
        except MappingError as exc:
            if need_valid_reward:
                raise MappingError(
                    f"{cfg.source or 'config'}: field 'reward.mapping': {exc}"
                ) from None
            reward, reward_factory = UnbuildableReward(exc), None
    bm = load_benchmark(Path(cfg.benchmark) if "/" in cfg.benchmark else cfg.benchmark)
    tasks: Sequence[Any] = bm.tasks
    golden: Sequence[Any] = bm.golden
    if cfg.tasks is not None:
        from ..bioaudit import read_tasks

        tasks = read_tasks(cfg.tasks)
    if cfg.golden is not None:
        from ..bioaudit.schema import read_golden

        golden = read_golden(cfg.golden)
    return {
        "judge": judge,
        "judge_factory": judge_factory,
        "reward": reward,
        "reward_factory": reward_factory,
        "tasks": tasks,
        "golden": golden,
        "substrates": bm.substrates,
        "benchmark": {"version": bm.version, "hashes": bm.hashes},
    }


def _config(path: Path | None) -> AuditConfig:
    return AuditConfig() if path is None else AuditConfig.from_toml(path)


_config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="rewardkit.toml with [reward], [judge], [stats], [thresholds], [data].",
)


@click.command("calibrate")
@_config_option
@click.option("--n-resamples", type=click.IntRange(min=1), default=None, help="Bootstrap B.")
@click.option("--plots/--no-plots", default=True, help="Write calibration.png (report extra).")
@common_options
@click.pass_context
def calibrate_cmd(
    ctx: click.Context,
    config_path: Path | None,
    n_resamples: int | None,
    plots: bool,
    as_json: bool | None,
    out: Path | None,
) -> None:
    """Calibrate the reward against gold: recipes A/B/C, the seed §7 table, preregistered."""
    from .._optional import require
    from .calibrate import calibrate

    as_json, out = resolve_settings(ctx, as_json, out)
    cfg = _config(config_path)
    if plots:
        require("matplotlib", "report", "calibration plots (or pass --no-plots)")
    s = _setup(cfg, need_valid_reward=True)
    cal = calibrate(
        s["tasks"],
        judge=s["judge"],
        reward=s["reward"],
        n_resamples=n_resamples or cfg.n_resamples,
        seeds=cfg.seeds,
        confidence_level=cfg.confidence_level,
        alpha=cfg.alpha,
        seed_tolerance=cfg.seed_tolerance,
        out=out,
        plots=plots,
        progress=None if not as_json else False,
    )
    # calibrate() wrote preregistration.json first; these rewrite the same bytes, hashed.
    hashes = write_artefacts(
        out,
        {"calibration.json": cal, "calibration.md": cal.table(), "benchmark.json": s["benchmark"]},
        manifest="calibrate-manifest.json",
    )
    if as_json:
        click.echo(
            canonical_json(
                {
                    "passed": cal.passed,
                    "out": out.as_posix(),
                    "calibration": cal.to_dict(),
                    "artefacts": hashes,
                }
            )
        )
    else:
        from rich.console import Console

        console = Console()
        console.print(
            f"[bold]calibration[/] ({len(s['tasks'])} tasks, "
            f"B = {cal.preregistration.n_resamples}, synthetic benchmark)"
        )
        click.echo(cal.table())
        for f in (*cal.acceptance, *cal.findings):
            mark = "[green]PASS[/]" if f.passed else "[red]FAIL[/]"
            console.print(f"{mark} {f.name}: {f.measured} (expected {f.expected})")
        console.print(
            f"written to {out}/: preregistration.json, calibration.json, calibration.md"
            + (", calibration.png" if plots else "")
        )
    if not cal.passed:
        ctx.exit(1)


@click.command("validate")
@_config_option
@common_options
@click.pass_context
def validate_cmd(
    ctx: click.Context, config_path: Path | None, as_json: bool | None, out: Path | None
) -> None:
    """Run the five reward-validate gates (exit 1 when one fails)."""
    from .validate import validate

    as_json, out = resolve_settings(ctx, as_json, out)
    cfg = _config(config_path)
    s = _setup(cfg, need_valid_reward=False)
    v = validate(
        s["tasks"],
        judge=s["judge"],
        reward=s["reward"],
        golden=s["golden"],
        substrates=s["substrates"],
        judge_factory=s["judge_factory"],
        reward_factory=s["reward_factory"],
        ceiling=cfg.ceiling,
        spike_in_drop=cfg.spike_in_drop,
        n_resamples=cfg.n_resamples,
        rng=cfg.seeds[0],
    )
    hashes = write_artefacts(
        out,
        {"validation.json": v, "benchmark.json": s["benchmark"]},
        manifest="validate-manifest.json",
    )
    if as_json:
        click.echo(
            canonical_json(
                {
                    "passed": v.passed,
                    "out": out.as_posix(),
                    "gates": {g.name: g.passed for g in v.gates},
                    "artefacts": hashes,
                }
            )
        )
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(title="rewardkit validate — five gates (synthetic benchmark)")
        for col in ("gate", "result", "summary"):
            table.add_column(col)
        for g in v.gates:
            table.add_row(g.name, "[green]PASS[/]" if g.passed else "[red]FAIL[/]", g.summary)
        console = Console()
        console.print(table)
        ev = v.evidence
        if "rank_agreement" in ev:
            ra, st = ev["rank_agreement"], ev["stratified"]
            rho, tau = (
                "undefined" if x is None else f"{x:.4f}"
                for x in (ra["spearman"]["value"], ra["kendall_tau_b"]["value"])
            )
            console.print(
                f"evidence (recipe {ev['recipe']}, not a gate): Spearman ρ {rho}, "
                f"Kendall τ_b {tau}, diff {st['diff']:+.3f}, p {st['pvalue']:.4f}"
            )
        console.print(f"written to {out}/validation.json")
    if not v.passed:
        ctx.exit(1)
