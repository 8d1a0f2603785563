"""``rewardkit calibrate`` and ``rewardkit validate``: any reward on the user's own data, or the
bio-audit preset when asked for by name.

    rewardkit calibrate --rewards FILE --gold FILE [--strata FIELD] [--good-min X]
    rewardkit calibrate --reward module:factory --gold FILE [...]
    rewardkit validate  --reward module:factory [--items FILE] [--golden FILE]
                        [--spike-in FILE] [--perturb module:function] [--range LOW:HIGH]
    rewardkit calibrate | validate --preset bioaudit [--config rewardkit.toml]

Exit status: ``calibrate`` 0 when the preregistered criteria pass, 1 when one fails;
``validate`` 0 when all five gates ran and passed, 1 when a gate failed, 4 when every gate
that ran passed but some were not run for lack of data (``--allow-not-run``: 0); 2 bad input
(one line on stderr naming the file / line / field and what is accepted).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from .._cliutil import (
    REWARD_LIMIT,
    FiniteFloatRange,
    common_options,
    refuse_unused,
    resolve_settings,
    write_artefacts,
)
from .._json import canonical_json
from ..errors import InputError, MappingError
from .config import AuditConfig
from .protocols import level_reward

__all__ = ["calibrate_cmd", "validate_cmd"]

MAX_RESAMPLES = 1_000_000  # percentile intervals to ~0.001; the memory check still applies
MAX_BINS = 1_000
MAX_GENERATOR_SEEDS = 10_000  # each regenerates the benchmark: ~0.2 s, so ~30 minutes
GOLD_LIMIT = 1e15  # gold labels are numbers with |x| <= 1e15

NO_DATA = (
    "no data given: {what}; or --preset bioaudit for the shipped synthetic bio-audit benchmark"
)


class UnbuildableReward:
    """Stands in for a level reward whose configuration is invalid: every call raises its
    error, so the gates that need a reward fail with that error as evidence."""

    default_recipe = "B"
    recipes = ("A", "B", "C")

    def __init__(self, error: Exception) -> None:
        self.error = error

    def __call__(self, steps: Sequence[Any], *, recipe: str, session: bool) -> Any:
        raise self.error


def _build(target: str, field: str) -> Any:
    from ._child import build
    from .userreward import _add_cwd

    _add_cwd(None)
    try:
        return build((target, {}))
    except (ImportError, AttributeError) as exc:
        raise InputError(f"cannot import '{target}': {exc}", field=field) from None


def _preset_setup(
    cfg: AuditConfig, *, preset: str | None, need_valid_reward: bool, miss: float, spur: float
) -> dict[str, Any]:
    """Judge, level reward, their factories and the data for the bio-audit preset (or the
    user's bio-audit-format tasks from rewardkit.toml)."""
    from .preset import bioaudit_inputs, preset_judge

    use_bench = preset == "bioaudit" or cfg.benchmark is not None
    if not use_bench and cfg.tasks is None:
        raise InputError(
            NO_DATA.format(what="the config names no tasks ([data] tasks = FILE)"),
            path=cfg.source,
            field="data.tasks",
        )
    p = (
        bioaudit_inputs(cfg.benchmark or "v1.2.0", miss_rate=miss, spurious_rate=spur)
        if (use_bench)
        else None
    )
    judge, judge_factory = preset_judge(miss, spur) if p is None else (p.judge, p.judge_factory)
    if cfg.judge_factory:
        judge, judge_factory = _build(cfg.judge_factory, "judge.factory"), (cfg.judge_factory, {})
    reward: Any
    reward_factory: tuple[str, dict[str, Any]] | None
    if cfg.reward_factory:
        reward = _build(cfg.reward_factory, "reward.factory")
        reward_factory = (cfg.reward_factory, {})
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
    tasks: Sequence[Any] = p.tasks if p is not None else ()
    golden: Sequence[Any] | None = p.golden if p is not None else None
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
        "substrates": p.substrates if p is not None else None,
        "candidates": p.candidates if p is not None else None,
        "benchmark": dict(p.benchmark) if p is not None else None,
        "engine": dict(p.engine) if p is not None else None,
        "note": p.note if p is not None else "",
    }


def _config(path: Path | None) -> AuditConfig:
    return AuditConfig() if path is None else AuditConfig.from_toml(path)


def _preset_options(f: Any) -> Any:
    f = click.option(
        "--spurious-rate",
        type=FiniteFloatRange(0, 1),
        default=0.0,
        help="bioaudit preset: the engine fires a spurious rule on a clean decision at this rate.",
    )(f)
    f = click.option(
        "--miss-rate",
        type=FiniteFloatRange(0, 1),
        default=0.0,
        help="bioaudit preset: the engine misses a rule firing at this rate (an imperfect "
        "judge; the shipped engine is exact by construction).",
    )(f)
    f = click.option(
        "--preset",
        type=click.Choice(["bioaudit"]),
        default=None,
        help="Run on the shipped synthetic bio-audit benchmark (level rewards, rule engine).",
    )(f)
    f = click.option(
        "--config",
        "config_path",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="rewardkit.toml for the bio-audit preset: [reward], [judge], [stats], [data].",
    )(f)
    return f


_PATH = click.Path(dir_okay=False, path_type=Path)


def _field_name(ctx: click.Context, param: click.Parameter, value: str) -> str:
    if not value.strip() or value != value.strip():
        raise click.BadParameter(
            f"must name an item field (non-empty, no surrounding spaces). Got {value!r}.",
            ctx=ctx,
            param=param,
        )
    return value


# --------------------------------------------------------------------------- calibrate


@click.command("calibrate")
@click.option(
    "--rewards",
    "rewards_path",
    type=_PATH,
    default=None,
    help="JSONL of {id, reward[, components]}, or an adapter's log_path= file.",
)
@click.option(
    "--gold",
    "gold_path",
    type=_PATH,
    default=None,
    help="JSONL of items {id, gold[, stratum, group, ...]}; gold a number or a bool.",
)
@click.option(
    "--reward",
    "reward_spec",
    default=None,
    help="module:factory to score the gold items instead of reading --rewards.",
)
@click.option(
    "--strata",
    "strata_field",
    callback=_field_name,
    default="stratum",
    show_default=True,
    help="Item field that names each item's stratum (per-stratum agreement).",
)
@click.option(
    "--good-min",
    type=FiniteFloatRange(-GOLD_LIMIT, GOLD_LIMIT),
    default=None,
    help="Numeric gold: items with gold >= this are 'good' [default: the highest].",
)
@click.option(
    "--n-bins",
    type=click.IntRange(1, MAX_BINS),
    default=10,
    show_default=True,
    help="Bins of the reliability diagram (probability-valued rewards; at most 1000).",
)
@click.option(
    "--n-resamples",
    type=click.IntRange(1, MAX_RESAMPLES),
    default=None,
    help="Bootstrap B (at most 1,000,000, and what fits in half the available memory).",
)
@click.option(
    "--generator-seeds",
    type=click.IntRange(0, MAX_GENERATOR_SEEDS),
    default=80,
    show_default=True,
    help="bioaudit preset: recompute ρ and diff over this many generator seeds (at most "
    "10,000; each takes about 0.2 s).",
)
@click.option("--plots/--no-plots", default=True, help="Write calibration.png (report extra).")
@_preset_options
@common_options
@click.pass_context
def calibrate_cmd(
    ctx: click.Context,
    rewards_path: Path | None,
    gold_path: Path | None,
    reward_spec: str | None,
    strata_field: str,
    good_min: float | None,
    n_bins: int,
    n_resamples: int | None,
    generator_seeds: int,
    plots: bool,
    config_path: Path | None,
    preset: str | None,
    miss_rate: float,
    spurious_rate: float,
    as_json: bool | None,
    out: Path | None,
) -> None:
    """Calibrate a reward against gold labels: ρ and τ_b with intervals, good vs bad, seed
    stability, groups, strata, and ECE / reliability for probability-valued rewards."""
    as_json, out = resolve_settings(ctx, as_json, out)
    if any(x is not None for x in (rewards_path, gold_path, reward_spec)):
        if preset or config_path:
            raise click.UsageError(
                "--preset/--config and --rewards/--gold/--reward exclude each other"
            )
        refuse_unused(ctx, ("generator_seeds", "miss_rate", "spurious_rate"), "--preset bioaudit")
        _calibrate_user(
            ctx,
            plots,
            rewards_path,
            gold_path,
            reward_spec,
            strata_field,
            good_min,
            n_bins,
            n_resamples,
            as_json,
            out,
        )
        return
    if preset is None and config_path is None:
        raise InputError(
            NO_DATA.format(
                what="give --rewards FILE --gold FILE (or --reward module:factory --gold FILE)"
            )
        )
    refuse_unused(ctx, ("strata_field", "good_min", "n_bins"), "--rewards / --gold data")
    _calibrate_preset(
        ctx,
        config_path,
        preset,
        miss_rate,
        spurious_rate,
        n_resamples,
        generator_seeds,
        plots,
        as_json,
        out,
    )


def _calibrate_user(
    ctx: click.Context,
    plots: bool,
    rewards_path: Path | None,
    gold_path: Path | None,
    reward_spec: str | None,
    strata_field: str,
    good_min: float | None,
    n_bins: int,
    n_resamples: int | None,
    as_json: bool,
    out: Path,
) -> None:
    from .._optional import have
    from .agreement import calibrate_rewards
    from .data import RewardRecord, read_items, read_rewards

    if gold_path is None:
        raise InputError(
            "missing; calibrate compares against gold: give --gold FILE", field="--gold"
        )
    if (rewards_path is None) == (reward_spec is None):
        raise InputError(
            "give exactly one of --rewards FILE (the reward's outputs) or "
            "--reward module:factory (score the gold items)",
            field="--rewards",
        )
    items = read_items(gold_path, require_gold=True, strata_field=strata_field)
    if strata_field != "stratum" and all(i.stratum is None for i in items):
        raise InputError(
            f"no item of {gold_path} has the field {strata_field!r}; name the field that holds "
            f"each item's stratum (fields of line 1: {sorted(items[0].fields)[:12]})",
            field="--strata",
        )
    if good_min is not None and all(isinstance(i.gold, bool) for i in items):
        raise InputError(
            f"{gold_path} has bool gold labels (true = good); --good-min applies to numeric "
            f"gold only",
            field="--good-min",
        )
    repeats = 0
    errors: dict[str, str] = {}
    if rewards_path is not None:
        records, repeats = read_rewards(rewards_path)
        rewards_name = str(rewards_path)
    else:
        from .userreward import load_reward

        assert reward_spec is not None
        r = load_reward(reward_spec)
        records = ()
        for it in items:
            sc = r.score(it.reward_input())
            records += (RewardRecord(it.id, sc.value, dict(sc.components), it.source),)
            if sc.error is not None:
                errors[it.id] = sc.error
        rewards_name = reward_spec
    cal = calibrate_rewards(
        items,
        tuple(records),
        good_min=good_min,
        n_resamples=n_resamples or 2000,
        n_bins=n_bins,
        names={"rewards": rewards_name, "gold": str(gold_path)},
        strata_field=strata_field,
        n_repeats=repeats,
        errors=errors,
        out=out,
        plots=plots and have("matplotlib"),
    )
    artefacts: dict[str, Any] = {"calibration.json": cal, "calibration.md": cal.table()}
    png_path = out / "calibration-reliability.png"
    if cal.probability is not None and png_path.is_file():
        artefacts[png_path.name] = png_path.read_bytes()  # the same bytes, hashed
    hashes = write_artefacts(out, artefacts, manifest="calibrate-manifest.json")
    if as_json:
        click.echo(
            canonical_json(
                {
                    "outcome": cal.outcome,
                    "passed": cal.passed,
                    "out": out.as_posix(),
                    "calibration": cal.to_dict(),
                    "artefacts": hashes,
                }
            )
        )
    else:
        click.echo(cal.table())
        png = ""
        if cal.probability is not None and plots:
            png = (
                ", calibration-reliability.png"
                if have("matplotlib")
                else " (the reliability diagram PNG needs pip install 'rewardkit[report]')"
            )
        click.echo(
            f"written to {out}/: preregistration.json, calibration.json, calibration.md{png}"
        )
    if cal.outcome != "pass":
        ctx.exit(1 if cal.outcome == "fail" else 4)


def _calibrate_preset(
    ctx: click.Context,
    config_path: Path | None,
    preset: str | None,
    miss_rate: float,
    spurious_rate: float,
    n_resamples: int | None,
    generator_seeds: int,
    plots: bool,
    as_json: bool,
    out: Path,
) -> None:
    from .._optional import require
    from .calibrate import calibrate

    cfg = _config(config_path)
    if plots:
        require("matplotlib", "report", "calibration plots (or pass --no-plots)")
    s = _preset_setup(
        cfg, preset=preset, need_valid_reward=True, miss=miss_rate, spur=spurious_rate
    )
    cal = calibrate(
        s["tasks"],
        judge=s["judge"],
        reward=s["reward"],
        n_resamples=n_resamples or cfg.n_resamples,
        seeds=cfg.seeds,
        confidence_level=cfg.confidence_level,
        alpha=cfg.alpha,
        seed_tolerance=cfg.seed_tolerance,
        note=s["note"],
        out=out,
        plots=plots,
        progress=None if not as_json else False,
    )
    artefacts: dict[str, Any] = {"calibration.json": cal, "calibration.md": cal.table()}
    spread = None
    if s["benchmark"] is not None:
        artefacts["benchmark.json"] = {**s["benchmark"], "engine": s["engine"], "note": s["note"]}
        if generator_seeds:
            from .preset import generator_seed_spread

            spread = generator_seed_spread(range(generator_seeds), judge=s["judge"])
            artefacts["generator-seeds.json"] = spread
    # calibrate() wrote preregistration.json first; these rewrite the same bytes, hashed.
    hashes = write_artefacts(out, artefacts, manifest="calibrate-manifest.json")
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
        what = s["note"] or f"{len(s['tasks'])} tasks from {cfg.tasks}"
        console.print(
            f"[bold]calibration[/] ({len(s['tasks'])} tasks, B = {cal.preregistration.n_resamples})"
        )
        console.print(what, markup=False)
        click.echo(cal.table())
        for f in (*cal.acceptance, *cal.findings):
            mark = "[green]PASS[/]" if f.passed else "[red]FAIL[/]"
            console.print(f"{mark} {f.name}: {f.measured} (expected {f.expected})")
        if spread is not None:
            console.print(
                f"over generator seeds 0–{generator_seeds - 1} (chosen: {spread.chosen_seed}):",
                markup=False,
            )
            for key, v in spread.summary.items():
                if v["mean"] is not None:
                    console.print(
                        f"  {key}: mean {v['mean']:.3f} ± {v['sd'] or 0:.3f} "
                        f"[{v['min']:.3f}, {v['max']:.3f}]"
                        + (
                            f"; chosen seed {v['chosen']:.3f} (percentile "
                            f"{100 * (v['chosen_percentile'] or 0):.0f})"
                            if v["chosen"] is not None
                            else ""
                        ),
                        markup=False,
                    )
        console.print(f"written to {out}/")
    if not cal.passed:
        ctx.exit(1)


# --------------------------------------------------------------------------- validate


def _parse_range(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    try:
        lo_s, hi_s = text.split(":")
        lo, hi = float(lo_s), float(hi_s)
    except ValueError:
        raise InputError(f"expected LOW:HIGH, e.g. 0:1; got {text!r}", field="--range") from None
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise InputError(f"expected finite numbers LOW:HIGH; got {text!r}", field="--range")
    if not lo <= hi:
        raise InputError(f"expected LOW <= HIGH; got {text!r}", field="--range")
    return lo, hi


@click.command("validate")
@click.option(
    "--reward",
    "reward_spec",
    default=None,
    help="module:factory (a RewardStack, or a zero-argument callable returning "
    "reward(item) -> float | None or a RewardStack); the working directory is "
    "on the import path.",
)
@click.option(
    "--items",
    "items_path",
    type=_PATH,
    default=None,
    help="JSONL of items {id, ...fields}: range, determinism and ablations run on them.",
)
@click.option(
    "--golden",
    "golden_path",
    type=_PATH,
    default=None,
    help="JSONL of {id, expected, ...fields}: the rewards must match exactly.",
)
@click.option(
    "--spike-in",
    "spike_path",
    type=_PATH,
    default=None,
    help="JSONL of {id, clean: {...}, corrupted: {...}, min_drop?}.",
)
@click.option(
    "--perturb",
    "perturb_spec",
    default=None,
    help="module:function turning an item into a corrupted copy (with --items).",
)
@click.option(
    "--range",
    "range_text",
    default=None,
    help="Declared reward range LOW:HIGH (else the reward's own declaration).",
)
@click.option(
    "--spike-in-drop",
    type=FiniteFloatRange(0, REWARD_LIMIT),
    default=None,
    help="Required drop clean → corrupted [default: > 0; preset: 0.30].",
)
@click.option(
    "--ceiling",
    type=FiniteFloatRange(0, REWARD_LIMIT, min_open=True),
    default=None,
    help="bioaudit preset: the mapping gate's ceiling [default 0.85, or the config's].",
)
@click.option(
    "--allow-not-run",
    is_flag=True,
    default=False,
    help="Exit 0 (not 4) when every gate that ran passed but some were not run.",
)
@_preset_options
@common_options
@click.pass_context
def validate_cmd(
    ctx: click.Context,
    reward_spec: str | None,
    items_path: Path | None,
    golden_path: Path | None,
    spike_path: Path | None,
    perturb_spec: str | None,
    range_text: str | None,
    spike_in_drop: float | None,
    ceiling: float | None,
    allow_not_run: bool,
    config_path: Path | None,
    preset: str | None,
    miss_rate: float,
    spurious_rate: float,
    as_json: bool | None,
    out: Path | None,
) -> None:
    """Run the five gates — range, determinism, spike-in, ablations, golden — on your reward
    and your data (exit 0 all passed, 1 one failed, 4 some not run)."""
    as_json, out = resolve_settings(ctx, as_json, out)
    user_flags = (items_path, golden_path, spike_path, perturb_spec, range_text)
    if reward_spec is not None or any(x is not None for x in user_flags):
        if preset or config_path:
            raise click.UsageError("--preset/--config and --reward exclude each other")
        if reward_spec is None:
            raise InputError(
                "missing; the gates need the reward: --reward module:factory", field="--reward"
            )
        refuse_unused(ctx, ("miss_rate", "spurious_rate", "ceiling"), "--preset bioaudit")
        code = _validate_user(
            reward_spec,
            items_path,
            golden_path,
            spike_path,
            perturb_spec,
            _parse_range(range_text),
            spike_in_drop,
            as_json,
            out,
        )
        if code == 4 and allow_not_run:
            code = 0
        if code:
            ctx.exit(code)
        return
    if preset is None and config_path is None:
        raise InputError(
            NO_DATA.format(
                what="give --reward module:factory and your data (--items / --golden / --spike-in)"
            )
        )
    code = _validate_preset(
        config_path, preset, miss_rate, spurious_rate, spike_in_drop, ceiling, as_json, out
    )
    if code == 4 and allow_not_run:
        code = 0
    if code:
        ctx.exit(code)


def _validate_user(
    reward_spec: str,
    items_path: Path | None,
    golden_path: Path | None,
    spike_path: Path | None,
    perturb_spec: str | None,
    declared: tuple[float, float] | None,
    spike_in_drop: float | None,
    as_json: bool,
    out: Path,
) -> int:
    from .data import read_golden, read_items, read_spike_pairs
    from .userreward import load_function, load_reward
    from .validate_reward import EXIT_STATUS, validate_reward

    items = read_items(items_path) if items_path else ()
    golden = read_golden(golden_path) if golden_path else ()
    pairs = read_spike_pairs(spike_path) if spike_path else ()
    perturb = load_function(perturb_spec, param="--perturb") if perturb_spec else None
    reward = load_reward(reward_spec)
    names = {
        k: str(v)
        for k, v in (("items", items_path), ("golden", golden_path), ("spike_in", spike_path))
        if v is not None
    }
    v = validate_reward(
        reward,
        items=items,
        golden=golden,
        pairs=pairs,
        perturb=perturb,
        declared_range=declared,
        spike_in_drop=spike_in_drop or 0.0,
        names=names,
    )
    hashes = write_artefacts(out, {"validation.json": v}, manifest="validate-manifest.json")
    if as_json:
        click.echo(
            canonical_json(
                {
                    "outcome": v.outcome,
                    "passed": v.passed,
                    "out": out.as_posix(),
                    "gates": {g.name: g.status for g in v.gates},
                    "artefacts": hashes,
                }
            )
        )
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=f"rewardkit validate — {reward.name}")
        for col in ("gate", "result", "summary"):
            table.add_column(col)
        colour = {"pass": "green", "fail": "red", "not run": "yellow"}
        for g in v.gates:
            table.add_row(g.name, f"[{colour[g.status]}]{g.status.upper()}[/]", g.summary)
        console = Console()
        console.print(table)
        console.print(f"outcome: {v.outcome}; written to {out}/validation.json")
    return EXIT_STATUS[v.outcome]


def _validate_preset(
    config_path: Path | None,
    preset: str | None,
    miss_rate: float,
    spurious_rate: float,
    spike_in_drop: float | None,
    ceiling: float | None,
    as_json: bool,
    out: Path,
) -> int:
    from .validate import validate
    from .validate_reward import EXIT_STATUS

    cfg = _config(config_path)
    s = _preset_setup(
        cfg, preset=preset, need_valid_reward=False, miss=miss_rate, spur=spurious_rate
    )
    v = validate(
        s["tasks"],
        judge=s["judge"],
        reward=s["reward"],
        golden=s["golden"],
        substrates=s["substrates"],
        candidates=s["candidates"],
        judge_factory=s["judge_factory"],
        reward_factory=s["reward_factory"],
        ceiling=cfg.ceiling if ceiling is None else ceiling,
        spike_in_drop=cfg.spike_in_drop if spike_in_drop is None else spike_in_drop,
        n_resamples=cfg.n_resamples,
        rng=cfg.seeds[0],
        note=s["note"],
    )
    artefacts: dict[str, Any] = {"validation.json": v}
    if s["benchmark"] is not None:
        artefacts["benchmark.json"] = {**s["benchmark"], "engine": s["engine"], "note": s["note"]}
    hashes = write_artefacts(out, artefacts, manifest="validate-manifest.json")
    if as_json:
        click.echo(
            canonical_json(
                {
                    "outcome": v.outcome,
                    "passed": v.passed,
                    "out": out.as_posix(),
                    "gates": {g.name: g.passed for g in v.gates},
                    "not_run": [g.name for g in v.gates if g.not_run],
                    "artefacts": hashes,
                }
            )
        )
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(title="rewardkit validate — five gates (level reward)")
        for col in ("gate", "result", "summary"):
            table.add_column(col)
        for g in v.gates:
            mark = (
                "[yellow]NOT RUN[/]"
                if g.not_run
                else "[green]PASS[/]"
                if g.passed
                else "[red]FAIL[/]"
            )
            table.add_row(g.name, mark, g.summary)
        console = Console()
        console.print(table)
        if s["note"]:
            console.print(s["note"], markup=False)
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
        console.print(f"outcome: {v.outcome}; written to {out}/validation.json")
    return EXIT_STATUS[v.outcome]
