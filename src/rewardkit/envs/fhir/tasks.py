"""Task packages of the four families, and the truth the hidden verifier scores against.

Usage::

    from rewardkit.envs.fhir.tasks import make_task, compute_truth
    task = make_task(world, "anc-threshold", trap="page2", variant=3, budget=8.0, max_steps=12)
    task.prompt, task.lineage                  # the agent's question; "sha256:…"
    truth = compute_truth(world, task.criterion, patient_id)
    truth.status, truth.value, truth.support   # 'not_met', 0.57, (('o-…',),)

A TaskPackage = task spec + world seed + tool manifest + budget + verifier version; its
``lineage`` hash goes into every verdict (seed 002: "the verifier version enters the
TaskPackage and the training lineage").

Criteria (all on Observations with a valid status — final, amended, corrected — dated inside
the inclusive window, values converted to the code's canonical UCUM unit):

- ``anc-threshold`` / ``platelets-threshold``: the latest value ≥ threshold → met.
- ``potassium-latest``: the latest value inside [3.5, 5.0] mmol/L → met.
- ``creatinine-rise``: value = the largest rise v_j − v_i (t_i < t_j ≤ t_i + 48 h); met when
  ≥ 0.3 mg/dL (KDIGO); fewer than two valid values → unknown.
- No valid value in the window → the evidence is incomplete: ``unknown`` is the right answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..._json import JsonMixin, content_hash
from .tools import MANIFEST, ToolManifest
from .units import CANONICAL_UNIT, DISPLAY, to_canonical
from .world import (
    CREATININE_RISE,
    FAMILIES,
    POTASSIUM_RANGE,
    THRESHOLDS,
    VALID_STATUSES,
    World,
)

__all__ = ["TaskPackage", "Truth", "compute_truth", "make_task", "reference_actions"]

VERIFIER_VERSION = "fhir-verifier-2.3.0"


@dataclass(frozen=True)
class TaskPackage(JsonMixin):
    """Everything that defines one task instance; ``lineage`` hashes all of it."""

    env_id: str
    task_id: str
    family: str
    trap: str
    variant: int
    criterion: dict[str, Any]
    prompt: str
    world_seed: int
    manifest_version: str
    manifest_hash: str
    budget: float
    max_steps: int
    verifier_version: str
    lineage: str


@dataclass(frozen=True)
class Truth(JsonMixin):
    """The answer the world supports. ``support``: alternative sets of evidence ids."""

    status: str
    value: float | None
    unit: str
    support: tuple[tuple[str, ...], ...]
    complete: bool


def _prompt(family: str, c: dict[str, Any]) -> str:
    who = f"Patient {c['patient_name']} (born {c['birth_date']})"
    when = f"lab results dated {c['window'][0]} to {c['window'][1]} (inclusive)"
    lab = f"{DISPLAY[c['code']]} (LOINC {c['code']})"
    if family in THRESHOLDS:
        q = (
            f"is the latest valid {lab} >= {c['threshold']:g} {c['unit']}? Report that "
            f"value in {c['unit']}."
        )
    elif family == "potassium-latest":
        q = (
            f"is the latest valid {lab} within {c['low']:g}-{c['high']:g} {c['unit']}? "
            f"Report that value in {c['unit']}."
        )
    else:
        q = (
            f"did {lab} rise by >= {c['rise']:g} {c['unit']} within {c['hours']} hours? "
            f"Report the largest such rise in {c['unit']}."
        )
    return (
        f"{who}. Using {when}, {q} Answer met, not_met or unknown, citing the "
        f"Observation ids that support it."
    )


def make_task(
    world: World,
    family: str,
    *,
    trap: str,
    variant: int,
    env_id: str,
    budget: float,
    max_steps: int,
    manifest: ToolManifest = MANIFEST,
    verifier_version: str = VERIFIER_VERSION,
) -> TaskPackage:
    """The TaskPackage of one scenario of ``world``."""
    sc = world.scenarios[(family, trap, variant)]
    p = world.patients[sc.patient_id]
    code = FAMILIES[family]
    crit: dict[str, Any] = {
        "family": family,
        "code": code,
        "unit": CANONICAL_UNIT[code],
        "window": list(sc.window),
        "patient_name": f"{p['name'][0]['given'][0]} {p['name'][0]['family']}",
        "birth_date": p["birthDate"],
    }
    if family in THRESHOLDS:
        crit["threshold"] = THRESHOLDS[family]
    elif family == "potassium-latest":
        crit["low"], crit["high"] = POTASSIUM_RANGE
    else:
        crit["rise"], crit["hours"] = CREATININE_RISE
    body: dict[str, Any] = {
        "env_id": env_id,
        "family": family,
        "trap": trap,
        "variant": variant,
        "criterion": crit,
        "world_seed": world.seed,
        "manifest_version": manifest.version,
        "manifest_hash": manifest.hash,
        "budget": float(budget),
        "max_steps": max_steps,
        "verifier_version": verifier_version,
    }
    task_id = f"{family}:{content_hash([world.seed, trap, variant])[7:15]}"
    return TaskPackage(
        task_id=task_id, prompt=_prompt(family, crit), lineage=content_hash(body), **body
    )


def _hours(a: str, b: str) -> float:
    fmt = "%Y-%m-%dT%H:%M:%SZ"
    return (datetime.strptime(b, fmt) - datetime.strptime(a, fmt)).total_seconds() / 3600.0


def compute_truth(world: World, criterion: dict[str, Any], patient_id: str) -> Truth:
    """The hidden verifier's truth for ``patient_id`` (the held-out verifier recomputes its own)."""
    code, unit = criterion["code"], criterion["unit"]
    lo, hi = criterion["window"]
    valid = []
    for o in world.series(patient_id, code):
        if lo <= o.when[:10] <= hi and o.status in VALID_STATUSES:
            v = to_canonical(o.value, o.unit, code)
            if v is not None:
                valid.append((o, v))
    family = criterion["family"]
    if family != "creatinine-rise":
        if not valid:
            return Truth("unknown", None, unit, ((),), False)
        o, v = valid[-1]
        if family == "potassium-latest":
            met = criterion["low"] <= v <= criterion["high"]
        else:
            met = v >= criterion["threshold"]
        return Truth("met" if met else "not_met", v, unit, ((o.id,),), True)
    if len(valid) < 2:
        return Truth("unknown", None, unit, ((),), False)
    best: float | None = None
    pairs: list[tuple[str, str]] = []
    for i, (oi, vi) in enumerate(valid):
        for oj, vj in valid[i + 1 :]:
            if _hours(oi.when, oj.when) > criterion["hours"]:
                break
            rise = vj - vi
            if best is None or rise > best + 1e-9:
                best, pairs = rise, [(oi.id, oj.id)]
            elif abs(rise - best) <= 1e-9:
                pairs.append((oi.id, oj.id))
    if best is None:  # no two values within the time limit: no rise can be shown
        return Truth("not_met", None, unit, ((),), True)
    met = best >= criterion["rise"] - 1e-9
    return Truth("met" if met else "not_met", best, unit, tuple(pairs), True)


def reference_actions(
    world: World, task: TaskPackage, patient_id: str, truth: Truth
) -> list[dict[str, Any]]:
    """The concise correct trajectory: find the patient, one search, the answer."""
    c = task.criterion
    return [
        {
            "tool": "search_patients",
            "args": {"name": c["patient_name"], "birthdate": c["birth_date"]},
        },
        {
            "tool": "search_observations",
            "args": {
                "patient": patient_id,
                "code": c["code"],
                "date_ge": c["window"][0],
                "date_le": c["window"][1],
                "_sort": "-date",
                "_count": 50,
            },
        },
        {
            "answer": {
                "status": truth.status,
                "value": None if truth.value is None else round(truth.value, 4),
                "unit": c["unit"] if truth.value is not None else None,
                "evidence": list(truth.support[0]),
            }
        },
    ]
