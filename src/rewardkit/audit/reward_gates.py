"""The five validate gates for any reward, run on the user's own data.

Usage::

    from rewardkit.audit.reward_gates import gate_range, gate_golden
    g = gate_golden(reward, golden)        # GateReport(name, status, summary, evidence)
    g.status                               # "pass", "fail" or "not run"

1. ``range`` — every probe item scores without an error, inside the declared range (``--range``,
   a ``range`` attribute, or ``RewardStack.bounds()``), and not one constant value.
2. ``determinism`` — the scores of the probe items are byte-identical in two in-process runs
   and in fresh interpreters with PYTHONHASHSEED 1 and 2, the factory imported from the
   working directory as pytest would.
3. ``spike_in`` — for each user pair (clean, corrupted, required drop) or each item under the
   user's perturbation, the corrupted version scores strictly lower, by at least the drop.
4. ``ablations`` — each weighted component of a RewardStack dropped in turn; the change on the
   probe items is reported, and a component whose removal changes no reward, or reorders no
   pair of items (a constant shift: invisible to group-relative advantages), is flagged and
   fails the gate. Gates are dropped too and reported, not flagged (a safety gate may
   rightly never fire on the probe items).
5. ``golden`` — the reward on every golden item equals the frozen expected value exactly.

A gate whose data was not given is "not run" with the flag that would run it; it never runs on
shipped data. Probe items are ``--items``; without them, the golden and spike-in items (clean
and corrupted), all the user's own.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .._json import JsonMixin, content_hash
from ..errors import ConfigError
from .data import GoldenItem, SpikePair
from .userreward import ItemScore, UserReward, scores_json, user_code

__all__ = [
    "GATE_NAMES",
    "GateReport",
    "Probe",
    "gate_ablations",
    "gate_determinism",
    "gate_golden",
    "gate_range",
    "gate_spike_in",
]

GATE_NAMES = ("range", "determinism", "spike_in", "ablations", "golden")
FRESH_HASHSEEDS = ("1", "2")
Status = Literal["pass", "fail", "not run"]


@dataclass(frozen=True)
class GateReport(JsonMixin):
    name: str
    status: Status
    summary: str
    evidence: Mapping[str, Any]

    @property
    def passed(self) -> bool:
        return self.status == "pass"


@dataclass(frozen=True)
class Probe:
    """One probe item: its id, where it came from (file, line) and what the reward reads."""

    id: str
    where: str
    item: Mapping[str, Any]


def _not_run(name: str, why: str) -> GateReport:
    return GateReport(name, "not run", f"not run: {why}", {})


def _gate_report(name: str, problems: list[str], ok: str, ev: dict[str, Any]) -> GateReport:
    ev["problems"] = problems[:20]
    ev["n_problems"] = len(problems)
    return GateReport(name, "fail" if problems else "pass", problems[0] if problems else ok, ev)


NO_ITEMS = "no items given (--items FILE; --golden or --spike-in items are used when given)"


def gate_range(
    reward: UserReward, probes: Sequence[Probe], *, declared: tuple[float, float] | None = None
) -> GateReport:
    """Every probe scored without error, inside the declared range, and not constant."""
    if not probes:
        return _not_run("range", NO_ITEMS)
    rng = declared if declared is not None else reward.declared_range()
    if rng is None:
        return _not_run(
            "range",
            "the reward declares no range (--range LOW:HIGH, a 'range = (low, high)' attribute "
            "on the reward, or Component(range=...) in its RewardStack)",
        )
    lo, hi = rng
    problems: list[str] = []
    scored: list[float] = []
    n_none = 0
    for p in probes:
        s = reward.score(p.item)
        if s.error is not None:
            problems.append(f"{p.where} (id {p.id!r}): the reward raised {s.error}")
        elif s.value is None:
            n_none += 1
        else:
            scored.append(s.value)
            if not lo <= s.value <= hi:
                problems.append(
                    f"{p.where} (id {p.id!r}): reward {s.value!r} outside the declared range "
                    f"[{lo:g}, {hi:g}]"
                )
    if probes and not scored and not problems:
        problems.append(
            f"the reward scored none of the {len(probes)} items (None on every one): a reward "
            f"that cannot score anything is not a reward"
        )
    if len(scored) >= 2 and len(set(scored)) == 1:
        problems.append(
            f"the reward is {scored[0]!r} on all {len(scored)} scored items: a constant carries "
            f"no signal"
        )
    ev: dict[str, Any] = {
        "declared_range": [lo, hi],
        "n_items": len(probes),
        "n_scored": len(scored),
        "n_none": n_none,
        "min": min(scored) if scored else None,
        "max": max(scored) if scored else None,
    }
    ok = (
        f"{len(scored)} of {len(probes)} items scored in [{lo:g}, {hi:g}] "
        f"(observed {ev['min']!r} to {ev['max']!r}; {n_none} cannot score)"
    )
    return _gate_report("range", problems, ok, ev)


def _fresh(spec: str, probes: Sequence[Probe], hashseed: str, cwd: str) -> str:
    payload = {"spec": spec, "cwd": cwd, "items": [[p.id, dict(p.item)] for p in probes]}
    env = dict(os.environ)
    env["PYTHONHASHSEED"] = hashseed
    env["PYTHONPATH"] = os.pathsep.join([cwd, *(p for p in sys.path if p)])
    proc = subprocess.run(
        [sys.executable, "-m", "rewardkit.audit._item_child"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=600,
    )
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise RuntimeError(f"the fresh process (PYTHONHASHSEED={hashseed}) failed: {tail}")
    return proc.stdout


def gate_determinism(
    reward: UserReward, probes: Sequence[Probe], *, cwd: str | None = None
) -> GateReport:
    """Byte-identical scores in-process (twice) and in two fresh interpreters."""
    if not probes:
        return _not_run("determinism", NO_ITEMS)
    if reward.spec is None:
        return _not_run(
            "determinism",
            "the reward was passed as an object; name it as module:factory so that a fresh "
            "process can rebuild it",
        )
    inputs = [(p.id, p.item) for p in probes]
    first = scores_json(reward, inputs)
    second = scores_json(reward, inputs)
    ev: dict[str, Any] = {
        "n_items": len(probes),
        "factory": reward.spec,
        "hash_run1": content_hash(first.encode()),
        "hash_run2": content_hash(second.encode()),
    }
    problems = [] if first == second else [_first_diff("two in-process runs", first, second)]
    where = os.path.abspath(cwd or os.getcwd())
    for hs in FRESH_HASHSEEDS:
        if problems:
            break
        try:
            fresh = _fresh(reward.spec, probes, hs, where)
        except Exception as exc:
            problems.append(str(exc))
            break
        ev[f"hash_fresh_process_{hs}"] = content_hash(fresh.encode())
        if fresh != first:
            problems.append(_first_diff(f"a fresh process (PYTHONHASHSEED={hs})", first, fresh))
    ok = f"{len(probes)} items: byte-identical in-process and in fresh processes " + "/".join(
        f"PYTHONHASHSEED={h}" for h in FRESH_HASHSEEDS
    )
    return _gate_report("determinism", problems, ok, ev)


def _first_diff(what: str, a: str, b: str) -> str:
    try:
        ra, rb = json.loads(a), json.loads(b)
        for x, y in zip(ra, rb):
            if x != y:
                return f"{what} differ first on id {x['id']!r}: {x!r:.120} vs {y!r:.120}"
    except (ValueError, KeyError, TypeError):
        pass
    return f"{what} give different bytes"


def gate_spike_in(
    reward: UserReward,
    *,
    pairs: Sequence[SpikePair] = (),
    perturb: Callable[[Any], Any] | None = None,
    perturb_items: Sequence[Probe] = (),
    min_drop: float = 0.0,
) -> GateReport:
    """Each corrupted item scores strictly below its clean item, by at least the drop."""
    if not pairs and (perturb is None or not perturb_items):
        why = "no spike-in pairs given (--spike-in FILE"
        why += ", or --perturb module:function with --items FILE)"
        if perturb is not None:
            why = "--perturb given but no items to perturb (--items FILE)"
        return _not_run("spike_in", why)
    cases: list[dict[str, Any]] = []
    problems: list[str] = []

    def case(cid: str, where: str, clean: Any, corrupted: Any, need: float) -> None:
        c, k = reward.score(clean), reward.score(corrupted)
        drop = None if c.value is None or k.value is None else c.value - k.value
        why = None
        if c.error or k.error:
            why = f"the reward raised {c.error or k.error}"
        elif c.value is None:
            why = "the clean item cannot be scored (None)"
        elif k.value is None:
            why = "the corrupted item is not scored (None): cannot score is not a penalty"
        elif drop is not None and not (drop > 0 and drop >= need):
            why = f"drop {drop:+.4g} (clean {c.value:.4g} → corrupted {k.value:.4g}), need > 0"
            why += f" and ≥ {need:g}" if need > 0 else ""
        cases.append(
            {
                "id": cid,
                "clean": c.value,
                "corrupted": k.value,
                "drop": drop,
                "need": need,
                "passed": why is None,
            }
        )
        if why is not None:
            problems.append(f"{where} (id {cid!r}): {why}")

    for p in pairs:
        where = f"{p.source[0]}, line {p.source[1]}"
        case(p.id, where, p.clean, p.corrupted, min_drop if p.min_drop is None else p.min_drop)
    if perturb is not None:
        for pr in perturb_items:
            try:
                with user_code():  # a deep copy: changes in place never reach the clean item
                    bad = perturb(copy.deepcopy(dict(pr.item)))
            except Exception as exc:
                problems.append(
                    f"{pr.where} (id {pr.id!r}): the perturbation raised "
                    f"{type(exc).__name__}: {exc}"
                )
                continue
            if not isinstance(bad, Mapping):
                problems.append(
                    f"{pr.where} (id {pr.id!r}): the perturbation returned "
                    f"{type(bad).__name__} {bad!r:.40}; expected the corrupted item (a dict)"
                )
                continue
            if bad == dict(pr.item):
                problems.append(f"{pr.where} (id {pr.id!r}): the perturbation changed nothing")
                continue
            case(pr.id, pr.where, pr.item, bad, min_drop)
    drops = [c["drop"] for c in cases if c["drop"] is not None]
    ev: dict[str, Any] = {
        "n_cases": len(cases),
        "cases": cases[:200],
        "min_drop_required": min_drop,
    }
    ok = (
        f"{len(cases)} corrupted items all score lower (smallest drop {min(drops):.4g})"
        if drops
        else ""
    )
    return _gate_report("spike_in", problems, ok, ev)


def gate_ablations(reward: UserReward, probes: Sequence[Probe]) -> GateReport:
    """Drop each weighted component (and each gate) in turn; flag components with no effect."""
    if not probes:
        return _not_run("ablations", NO_ITEMS)
    stack = reward.stack
    if stack is None:
        return _not_run(
            "ablations",
            "the reward is a plain callable with no components (return a RewardStack from the "
            "factory to ablate its components)",
        )
    if len(probes) < 2:
        return _not_run("ablations", "an ablation compares item orderings: needs 2+ items")
    base = [reward.score(p.item).value for p in probes]
    parts: dict[str, Any] = {}
    problems: list[str] = []
    weights = {c.name: c.weight for c in stack.components}
    for kind, name in reward.parts():
        if kind == "component" and weights[name] == 0:
            parts[name] = {"kind": "metric (weight 0)", "effect": "none by design"}
            continue
        try:
            ablated = reward.without(name)
        except ConfigError as exc:
            parts[name] = {"kind": kind, "effect": f"cannot drop: {exc}"}
            continue
        vals = [ablated.score(p.item).value for p in probes]
        changed = [k for k, (a, b) in enumerate(zip(base, vals)) if a != b]
        deltas = [abs(a - b) for a, b in zip(base, vals) if a is not None and b is not None]
        flips = _order_flips(base, vals)
        parts[name] = {
            "kind": kind,
            "n_items_changed": len(changed),
            "mean_abs_change": sum(deltas) / len(deltas) if deltas else None,
            "n_pair_order_changes": flips,
            "example_ids": [probes[k].id for k in changed[:3]],
        }
        if kind == "component" and not changed:
            problems.append(
                f"component {name!r} has no effect: dropping it changes no reward on the "
                f"{len(probes)} items"
            )
        elif kind == "component" and flips == 0:
            problems.append(
                f"component {name!r} has no effect on any ranking: dropping it moves rewards "
                f"but reorders no pair of the {len(probes)} items (a group-relative trainer "
                f"sees no difference)"
            )
    measured = [n for n, v in parts.items() if v["kind"] == "component" and "n_items_changed" in v]
    undroppable = [n for n, v in parts.items() if str(v.get("effect", "")).startswith("cannot")]
    if not measured and not problems:
        # nothing was compared: a single weighted component cannot be dropped (no stack is
        # left), so a pass here would be a check that cannot fail
        return _not_run(
            "ablations",
            f"no weighted component can be dropped (the rest would be no stack: "
            f"{', '.join(repr(n) for n in undroppable) or 'none'}); an ablation needs 2+ "
            f"weighted components",
        )
    ok = f"{len(measured)} weighted component(s) each change the reward on the {len(probes)} items"
    if undroppable:
        ok += f"; not ablated: {', '.join(undroppable)} (cannot be dropped)"
    return _gate_report("ablations", problems, ok, {"n_items": len(probes), "parts": parts})


def _order_flips(a: Sequence[float | None], b: Sequence[float | None]) -> int:
    """Item pairs ordered strictly one way by ``a`` and not the same way by ``b``."""
    idx = [k for k in range(len(a)) if a[k] is not None and b[k] is not None][:2000]
    flips = 0
    for i, x in enumerate(idx):
        for y in idx[i + 1 :]:
            da = a[x] - a[y]  # type: ignore[operator]
            db = b[x] - b[y]  # type: ignore[operator]
            if da != 0 and not (da * db > 0):
                flips += 1
    return flips


def gate_golden(reward: UserReward, golden: Sequence[GoldenItem]) -> GateReport:
    """The reward on every golden item equals its expected value (and components) exactly."""
    if not golden:
        return _not_run("golden", "no golden set given (--golden FILE)")
    diffs: list[str] = []
    rows: list[dict[str, Any]] = []
    for g in golden:
        s: ItemScore = reward.score(g.item.reward_input())
        got = s.value
        bad = []
        if s.error is not None:
            bad.append(f"the reward raised {s.error}")
        elif got != g.expected:
            bad.append(f"expected {g.expected!r}, got {got!r}")
        for name, exp in (g.expected_components or {}).items():
            if name not in s.components:
                bad.append(f"component {name!r} expected {exp!r}, the reward has no such component")
            elif s.components[name] != exp:
                bad.append(f"component {name!r} expected {exp!r}, got {s.components[name]!r}")
        if bad:
            diffs.append(f"{g.item.where} (id {g.item.id!r}): " + "; ".join(bad))
            rows.append({"id": g.item.id, "expected": g.expected, "got": got})
    ev = {
        "n_items": len(golden),
        "n_differences": len(diffs),
        "differences": rows[:50],
        "expected_hash": content_hash([[g.item.id, g.expected] for g in golden]),
    }
    ok = f"{len(golden)} golden items, 0 differences"
    return _gate_report("golden", diffs, ok, ev)
