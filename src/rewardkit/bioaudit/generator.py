"""The seeded benchmark generator: ``generate(seed)`` rebuilds every shipped file byte for byte.

Usage::

    from rewardkit.bioaudit import generate
    files = generate()                 # {"tasks.jsonl": b"...", ..., "manifest.json": b"..."}
    generate(out="bench/")             # also writes them (atomically)

The model (SPEC §3; rates in :class:`GeneratorConfig`, fitted to seed 000 §7.2). Each task
starts from its paradigm's pipeline template (12–16 correct decisions). A per-task carelessness
``u ~ Beta(a, b)`` scales two per-decision rates: a *visible* defect (``defect_rate · u``, on
decisions whose action has a catalogued mutation that a rule flags: a skipped step, raw
p-values, a wrong test for the design) and a *silent* one (``silent_rate · u``, any decision:
swapped labels, contamination, an undocumented filter; the record is unchanged). A per-task
fussiness ``v`` independently sets the rate of *borderline* choices (questionable, not wrong),
and a few untouched decisions get a documentation gap (a missing context key or an unlisted
tool, which the engine judges −1).

Gold is an outcome-level annotator, blind to the engine (see :func:`_gold`): defective results
are mostly ``error``, borderline ones mostly ``edge``, clean ones mostly ``correct``, and an
error corrupts downstream results. Engine recall on defects therefore follows from the silent
share, and reward and gold quality agree only moderately — gold judges results, the reward
judges method. Every mutation is checked against the engine at generation: the rules that fire
on each decision must be exactly the ones the catalogue intended.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._json import canonical_json, content_hash, write_atomic
from .._validation import SEED, validate_params
from ..errors import RewardkitError
from .defects import MUTATIONS, SILENT, Mutation, apply
from .engine import PARADIGMS, Engine
from .rules import RulePack
from .templates import pipeline, substrate

__all__ = ["DEFAULT_SEED", "VERSION", "GeneratorConfig", "generate"]

VERSION = "v1.2.0"
DEFAULT_SEED = 66  # of seeds 0–79, the closest to seed 000 §7.2 (docs/bioaudit.md)
FILES = ("tasks.jsonl", "legacy.jsonl", "golden.jsonl", "substrates.jsonl", "defects.jsonl")
DESCRIPTION = (
    "synthetic benchmark: bio-audit trajectories drawn from pipeline templates with latent "
    "visible and silent defects; gold from an outcome-level annotator model independent of "
    "the engine"
)


@dataclass(frozen=True)
class GeneratorConfig:
    """Rates of the latent-defect and annotator models (the shipped values made v1.2.0)."""

    tasks_per_paradigm: int = 20
    n_legacy: int = 20
    golden_lengths: tuple[int, ...] = (7,) * 17 + (6,) * 3  # 20 trajectories, 137 decisions
    level_weights: tuple[float, float, float] = (3.0, 1.0, 0.75)  # by level, among an action
    carelessness: tuple[float, float] = (0.55, 1.2)  # Beta(a, b) per task
    defect_rate: float = 0.75  # visible, per decision whose action has one, times carelessness
    silent_rate: float = 0.11  # silent, per decision, times carelessness
    borderline_rate: float = 0.85  # per decision whose action has one, times fussiness
    fussiness: tuple[float, float] = (1.25, 0.55)  # Beta(a, b) per task, independent of u
    gap_rate: float = 0.025  # documentation gaps → −1
    gold_error_on_defect: float = 0.65
    gold_edge_on_defect: float = 0.07
    gold_edge_on_borderline: float = 0.6
    gold_error_on_borderline: float = 0.07
    gold_error_on_clean: float = 0.02
    gold_edge_on_clean: float = 0.03
    propagation: float = 0.35  # P(a later result is wrong | an earlier defect was)
    annotator_strictness: tuple[float, float] = (0.45, 1.9)  # Beta; scales false errors
    session_every: int = 4  # every 4th task carries a review session
    review_p: tuple[float, float, float, float] = (0.86, 0.06, 0.04, 0.04)  # final/prov/rev/none


class GenerationError(RewardkitError):
    """The catalogue and the rule pack disagree: a mutation did not fire exactly its rule."""


_REVIEWS = ("final", "provisional", "revoked", None)


def _by_target(paradigm: str, kind: str) -> dict[str, list[Mutation]]:
    out: dict[str, list[Mutation]] = {}
    for rid in sorted(MUTATIONS):
        m = MUTATIONS[rid]
        if rid.startswith(paradigm + ".") and m.kind == kind:
            out.setdefault(m.target, []).append(m)
    return out


def _gap(decision: dict[str, Any], pack: RulePack, rng: np.random.Generator) -> bool:
    """A documentation gap: drop a context key a rule needs, else log an unlisted tool.

    A step that later rules look for in the history keeps its name (renaming it would be a
    visible defect of the later step, not a gap). Returns whether a gap was made.
    """
    needed = sorted({k for r in pack.rules_for(decision["action"]) for k in r.required_context})
    needed = [k for k in needed if k in decision["context"]]
    if needed:
        del decision["context"][needed[int(rng.integers(len(needed)))]]
        return True
    looked_for = {c.earlier for r in pack.rules for c in r.when if c.earlier is not None}
    if decision["action"] in looked_for:
        return False
    decision["params"] = {"script": "undocumented.R", "replaces": decision["action"]}
    decision["action"] = "custom_script"
    return True


def _build(
    paradigm: str,
    rng: np.random.Generator,
    cfg: GeneratorConfig,
    engine: Engine,
    *,
    defect_rate: float,
    silent_rate: float,
    borderline_rate: float,
    gap_rate: float,
    levels: Mapping[str, int],
    n_steps: int | None = None,
) -> tuple[list[dict[str, Any]], dict[str, tuple[str, str]], set[str]]:
    """A trajectory with its latent labels: id -> (kind, name), and the ids with a gap."""
    traj = pipeline(paradigm, rng)
    visible, borderline = _by_target(paradigm, "defect"), _by_target(paradigm, "borderline")
    labels: dict[str, tuple[str, str]] = {}
    plan: list[tuple[Mutation, str]] = []
    for d in traj:
        action = d["action"]
        if action in visible and rng.random() < defect_rate:
            ms = visible[action]
            w = np.array([cfg.level_weights[levels[m.rule_id]] for m in ms], dtype=float)
            plan.append((ms[int(rng.choice(len(ms), p=w / w.sum()))], "defect"))
        elif rng.random() < silent_rate:
            silent = SILENT[paradigm]
            labels[d["decision_id"]] = ("silent", silent[int(rng.integers(len(silent)))])
        elif action in borderline and rng.random() < borderline_rate:
            ms = borderline[action]
            plan.append((ms[int(rng.integers(len(ms)))], "borderline"))
    used: set[str] = set(labels)
    for m, kind in plan:
        res = apply(m, traj, used=frozenset(used))
        if res is None:
            continue
        traj, flagged, touched = res
        used |= touched
        labels[flagged] = (kind, m.rule_id)
    if n_steps is not None:
        traj = traj[:n_steps]
        labels = {k: v for k, v in labels.items() if any(d["decision_id"] == k for d in traj)}
    gaps: set[str] = set()
    pack = engine.packs[paradigm]
    for d in traj:
        if d["decision_id"] not in used and rng.random() < gap_rate and _gap(d, pack, rng):
            gaps.add(d["decision_id"])
    return traj, labels, gaps


def _expected(
    traj: list[dict],
    labels: Mapping[str, tuple[str, str]],
    gaps: set[str],
    levels: Mapping[str, int],
) -> list[int]:
    """The catalogue's intended level per decision (independent of the engine's evaluation)."""
    out = []
    for d in traj:
        did = d["decision_id"]
        if did in gaps:
            out.append(-1)
        elif did in labels and labels[did][0] != "silent":
            out.append(levels[labels[did][1]])
        else:
            out.append(3)
    return out


def _verify(engine: Engine, traj: list[dict], labels: Mapping, gaps: set[str], name: str) -> None:
    """The engine must fire exactly the intended rule on each decision, nothing elsewhere."""
    for d, j in zip(traj, engine.audit(traj)):
        did = d["decision_id"]
        lab = labels.get(did)
        want = () if did in gaps or lab is None or lab[0] == "silent" else (lab[1],)
        got = () if j.level == -1 else j.rule_ids
        if (did in gaps) != (j.level == -1) or tuple(got) != want:
            raise GenerationError(
                f"{name}/{did} ({d['action']}): the catalogue intends {want or 'no rule'}"
                f"{' and level -1' if did in gaps else ''}; the engine gave level {j.level} "
                f"with {j.rule_ids}."
            )


def _gold(
    labels: Mapping, traj: list[dict], rng: np.random.Generator, cfg: GeneratorConfig
) -> dict[str, int]:
    """Outcome-level annotations, one per decision's result, in pipeline order.

    A wrong result corrupts downstream results: after an annotated error, each later clean
    result is an error with probability ``propagation`` — so an early defect (a sample swap at
    loading, a skipped QC) costs gold more than a late one, while the engine's level does not
    depend on position. The annotator's strictness (false errors) varies from task to task.
    """
    strict = float(rng.beta(*cfg.annotator_strictness)) * 2.0  # mean 1 for a symmetric Beta
    counts = {"correct": 0, "error": 0, "edge": 0}
    corrupted = False
    for d in traj:
        kind = labels.get(d["decision_id"], ("clean", ""))[0]
        if kind in ("defect", "silent"):
            p_err, p_edge = cfg.gold_error_on_defect, cfg.gold_edge_on_defect
        elif kind == "borderline":
            p_err, p_edge = cfg.gold_error_on_borderline, cfg.gold_edge_on_borderline
        else:
            p_err, p_edge = cfg.gold_error_on_clean * strict, cfg.gold_edge_on_clean
        if corrupted:
            p_err = 1.0 - (1.0 - p_err) * (1.0 - cfg.propagation)
            p_edge = min(p_edge, 1.0 - p_err)
        x = rng.random()
        label = "error" if x < p_err else "edge" if x < p_err + p_edge else "correct"
        corrupted = corrupted or (label == "error" and kind != "clean")
        counts[label] += 1
    return counts


def _reviews(n: int, rng: np.random.Generator, cfg: GeneratorConfig, force: bool) -> list:
    idx = rng.choice(len(_REVIEWS), size=n, p=np.asarray(cfg.review_p))
    out = [_REVIEWS[int(i)] for i in idx]
    if force:  # the first session shows every mask reason at least once
        for pos, v in zip(rng.choice(n, size=3, replace=False), ("provisional", "revoked", None)):
            out[int(pos)] = v
    return out


def _lines(records: list[dict[str, Any]]) -> bytes:
    return "".join(canonical_json(r) + "\n" for r in records).encode("utf-8")


@validate_params({"seed": [SEED]})
def generate(
    seed: int = DEFAULT_SEED,
    *,
    out: str | Path | None = None,
    config: GeneratorConfig | None = None,
) -> dict[str, bytes]:
    """Build the benchmark files (name -> bytes); with ``out``, also write them there.

    The default seed and config reproduce the shipped ``v1.2.0`` files exactly.
    """
    cfg = config or GeneratorConfig()
    engine = Engine()
    levels = {r.id: r.level for pack in engine.packs.values() for r in pack.rules}
    parts = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(4)]
    task_rng, legacy_rng, golden_rng, gold_rng = parts

    substrates = []
    for p in PARADIGMS:
        decisions = substrate(p)
        _verify(engine, decisions, {}, set(), f"{p}_correct")
        substrates.append({"name": f"{p}_correct", "paradigm": p, "decisions": decisions})

    tasks, ledger = [], []
    n_sessions = 0
    for p in PARADIGMS:
        for k in range(cfg.tasks_per_paradigm):
            task_id = f"{p}-{k + 1:03d}"
            u = float(task_rng.beta(*cfg.carelessness))
            v = float(task_rng.beta(*cfg.fussiness))
            traj, labels, gaps = _build(
                p,
                task_rng,
                cfg,
                engine,
                levels=levels,
                defect_rate=cfg.defect_rate * u,
                silent_rate=cfg.silent_rate * u,
                borderline_rate=cfg.borderline_rate * v,
                gap_rate=cfg.gap_rate,
            )
            _verify(engine, traj, labels, gaps, task_id)
            reviews = None
            if k % cfg.session_every == cfg.session_every - 1:
                reviews = _reviews(len(traj), task_rng, cfg, force=n_sessions == 0)
                n_sessions += 1
            g = _gold(labels, traj, gold_rng, cfg)
            tasks.append(
                {
                    "task_id": task_id,
                    "paradigm": p,
                    "decisions": traj,
                    "reviews": reviews,
                    "n_gold_correct": g["correct"],
                    "n_gold_error": g["error"],
                    "n_gold_edge": g["edge"],
                }
            )
            for did, (kind, name) in sorted(labels.items()):
                ledger.append(
                    {
                        "task_id": task_id,
                        "decision_id": did,
                        "kind": kind,
                        "name": name,
                        "visible": kind != "silent",
                    }
                )

    legacy = []
    for k in range(cfg.n_legacy):
        p = PARADIGMS[k % len(PARADIGMS)]
        traj = pipeline(p, legacy_rng)
        _verify(engine, traj, {}, set(), f"legacy-{k + 1:03d}")
        g = _gold({}, traj, gold_rng, cfg)
        legacy.append(
            {
                "task_id": f"legacy-{k + 1:03d}",
                "paradigm": p,
                "decisions": traj,
                "reviews": None,
                "n_gold_correct": g["correct"],
                "n_gold_error": g["error"],
                "n_gold_edge": g["edge"],
            }
        )

    golden = []
    for k, length in enumerate(cfg.golden_lengths):
        p = PARADIGMS[k % len(PARADIGMS)]
        # Denser than the tasks, so that every level (and −1) appears in a short file.
        traj, labels, gaps = _build(
            p,
            golden_rng,
            cfg,
            engine,
            levels=levels,
            defect_rate=0.35,
            silent_rate=0.0,
            borderline_rate=0.3,
            gap_rate=0.08,
            n_steps=length,
        )
        name = f"golden-{k + 1:03d}"
        _verify(engine, traj, labels, gaps, name)
        golden.append(
            {
                "trajectory_id": name,
                "paradigm": p,
                "decisions": traj,
                "expected_levels": _expected(traj, labels, gaps, levels),
            }
        )

    files = {
        "tasks.jsonl": _lines(tasks),
        "legacy.jsonl": _lines(legacy),
        "golden.jsonl": _lines(golden),
        "substrates.jsonl": _lines(substrates),
        "defects.jsonl": _lines(ledger),
    }
    manifest = {
        "version": VERSION,
        "description": DESCRIPTION,
        "generator": {"function": "rewardkit.bioaudit.generate", "seed": seed},
        "rulepacks": {p: pack.hash for p, pack in sorted(engine.packs.items())},
        "files": {name: content_hash(data) for name, data in files.items()},
        "counts": {
            "tasks": len(tasks),
            "legacy": len(legacy),
            "golden": len(golden),
            "golden_decisions": sum(len(g["decisions"]) for g in golden),
            "substrates": len(substrates),
            "defects": len(ledger),
        },
    }
    files["manifest.json"] = (canonical_json(manifest, indent=1) + "\n").encode("utf-8")
    if out is not None:
        for name, data in files.items():
            write_atomic(Path(out) / name, data)
    return files
