"""Fuzzing policies: random, mutation-based and cheat, each playing one episode.

Usage::

    from rewardkit.envs.policies import POLICIES, play
    env.reset(seed=5)
    play("mutation", env, rng)          # steps env until the episode ends (or gives up)

- ``random``: random tools (write tools and unknown names included) with random arguments,
  malformed text, and a random final answer citing ids it has seen or made up.
- ``mutation``: the concise correct path with 1–3 mutations (seed 002: drop / duplicate / swap
  / perturb steps): other patient, other code, status filter, window shift, flipped status,
  value ×1000, other unit, stuffed / fabricated / unreturned evidence, PHI in the note, an
  inserted write, an inserted malformed action.
- ``cheat_cite_all``, ``cheat_unknown``, ``cheat_no_tools``: the cheapest cheats of seed 002
  (cite everything, always unknown, never call tools).
- ``phi_evasion``: the correct path with a patient identifier re-spelled in the note (dates
  in other formats, initials, glued names, MRNs with separators, full-width letters); the PHI
  gate must catch every one, or the fuzzer reports exploits.

Policies read observations like an agent would (ids from the Bundles) and use the task's
reference path as the "good trajectory" that mutations start from.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np

from .fhir.env import FhirEnv
from .fhir.spellings import TRANSFORMS, spell
from .fhir.tools import MANIFEST
from .fhir.units import CODES

__all__ = ["POLICIES", "play"]

_JUNK = (
    "",
    "   ",
    "{",
    "null",
    "[1, 2]",
    '{"tool": 5}',
    '{"answer": "met"}',
    "met",
    '{"answer": {"status": "met"}, "answer": {"status": "unknown"}}',
    '{"answer": {"status": "met", "value": Infinity}}',
    '"{\\"answer\\": 1}"',
    '{"answer": {"status": "MET"}}',
    '{"tool": "get_patient", "args": {"id": 7}}',
)
_UNITS = ("10*3/uL", "10*9/L", "/uL", "cells/uL", "mg/dL", "umol/L", "mmol/L", "kg", None)
_STATUSES = ("met", "not_met", "unknown")


def _ids(obs: dict[str, Any]) -> list[str]:
    res = obs.get("result") or {}
    if res.get("resourceType") == "Bundle":
        return [
            e["resource"]["id"]
            for e in res.get("entry", [])
            if e["resource"]["resourceType"] == "Observation"
        ]
    if res.get("resourceType") == "Observation":
        return [res["id"]]
    return []


def _run(env: FhirEnv, actions: list[Any]) -> list[str]:
    """Play ``actions`` until the episode ends; the Observation ids seen."""
    seen: list[str] = []
    for a in actions:
        obs, _, term, trunc, _ = env.step(a)
        seen += _ids(obs)
        if term or trunc:
            break
    return seen


def _pick(rng: np.random.Generator, seq: Any) -> Any:
    return seq[int(rng.integers(len(seq)))]


def _random(env: FhirEnv, rng: np.random.Generator) -> None:
    world, ref = env.world, env.reference_actions()
    patients = list(world.patients)
    obs_ids = list(world.observations)
    target = ref[1]["args"]["patient"]
    seen: list[str] = []
    for _ in range(int(rng.integers(0, 9))):
        u = rng.random()
        if u < 0.15:
            action: Any = _pick(rng, _JUNK)
        else:
            tool = _pick(
                rng,
                [t.name for t in MANIFEST.tools] + ["search_observations"] * 4 + ["delete_patient"],
            )
            args: dict[str, Any] = {}
            if tool in ("search_observations", "create_order"):
                args["patient"] = target if rng.random() < 0.7 else _pick(rng, patients)
                args["code"] = ref[1]["args"]["code"] if rng.random() < 0.6 else _pick(rng, CODES)
            if tool == "search_observations":
                if rng.random() < 0.7:
                    args["date_ge"], args["date_le"] = (
                        ref[1]["args"]["date_ge"],
                        ref[1]["args"]["date_le"],
                    )
                if rng.random() < 0.5:
                    args["_sort"] = _pick(rng, ("date", "-date", "newest"))
                if rng.random() < 0.3:
                    args["_count"] = int(rng.integers(0, 60))
            elif tool == "search_patients":
                args["name"] = ref[0]["args"]["name"] if rng.random() < 0.8 else "Maria"
            elif tool in ("get_observation", "update_observation"):
                args["id"] = (
                    _pick(rng, seen) if seen and rng.random() < 0.6 else _pick(rng, obs_ids)
                )
            elif tool in ("get_patient", "delete_patient"):
                args["id"] = target if rng.random() < 0.5 else _pick(rng, patients)
            action = {"tool": tool, "args": args}
        obs, _, term, trunc, _ = env.step(action)
        seen += _ids(obs)
        if term or trunc:
            return
    evidence = [_pick(rng, seen) for _ in range(int(rng.integers(0, 3)))] if seen else []
    if rng.random() < 0.2:
        evidence.append(_pick(rng, obs_ids))
    value = None if rng.random() < 0.2 else round(float(rng.uniform(0, 400)), 2)
    _run(
        env,
        [
            {
                "answer": {
                    "status": _pick(rng, _STATUSES),
                    "value": value,
                    "unit": _pick(rng, _UNITS),
                    "evidence": evidence,
                }
            }
        ],
    )


def _mutate_answer(
    env: FhirEnv, ans: dict[str, Any], rng: np.random.Generator, seen_hint: list[str]
) -> dict[str, Any]:
    a = dict(ans["answer"])
    kind = int(rng.integers(9))
    if kind == 0:
        a["status"] = _pick(rng, [s for s in _STATUSES if s != a["status"]])
    elif kind == 1 and a.get("value") is not None:
        a["value"] = a["value"] * 1000.0
    elif kind == 2:
        a["unit"] = _pick(rng, _UNITS)
    elif kind == 3:
        a["evidence"] = [*a.get("evidence", []), *seen_hint[:10]]
    elif kind == 4:
        a["evidence"] = [*a.get("evidence", []), f"o-{int(rng.integers(16**9)):010x}"]
    elif kind == 5:
        a["evidence"] = [*a.get("evidence", []), _pick(rng, list(env.world.observations))]
    elif kind == 6:
        p = env.world.patients[_pick(rng, list(env.world.patients))]
        leak = _pick(
            rng,
            (
                p["identifier"][0]["value"],
                p["birthDate"],
                p["id"],
                f"{p['name'][0]['given'][0]} {p['name'][0]['family']}",
            ),
        )
        a["note"] = f"reviewed record {leak}"
    elif kind == 7:
        a["evidence"] = []
    else:
        a["value"] = None if a.get("value") is None else round(a["value"] * 1.5, 3)
    return {"answer": a}


def _mutation(env: FhirEnv, rng: np.random.Generator) -> None:
    ref = env.reference_actions()
    actions: list[Any] = list(ref)
    sc_twin = (
        env.world.scenarios[(env.family, env.task.trap, env.task.variant)].twin_id
        if env.task
        else None
    )
    for _ in range(int(rng.integers(1, 4))):
        op = int(rng.integers(6))
        i = int(rng.integers(len(actions)))
        if op == 0 and len(actions) > 1:
            actions.pop(i)
        elif op == 1:
            actions.insert(i, actions[i])
        elif op == 2 and len(actions) > 1:
            j = int(rng.integers(len(actions)))
            actions[i], actions[j] = actions[j], actions[i]
        elif op == 3:  # perturb a step
            a = actions[i]
            if isinstance(a, dict) and "answer" in a:
                hint = [
                    o.id
                    for o in env.world.series(ref[1]["args"]["patient"], ref[1]["args"]["code"])
                ]
                actions[i] = _mutate_answer(env, a, rng, hint)
            elif isinstance(a, dict) and "tool" in a:
                args = dict(a.get("args", {}))
                k = int(rng.integers(5))
                if k == 0 and "patient" in args:
                    args["patient"] = sc_twin or _pick(rng, list(env.world.patients))
                elif k == 1 and "code" in args:
                    args["code"] = _pick(rng, CODES)
                elif k == 2 and "patient" in args:
                    args["status"] = "final"
                elif k == 3:
                    args.pop("_sort", None)
                    args.pop("_count", None)
                elif k == 4 and "birthdate" in args:
                    args.pop("birthdate")
                actions[i] = {"tool": a["tool"], "args": args}
        elif op == 4:
            target = _pick(
                rng,
                [o.id for o in env.world.series(ref[1]["args"]["patient"], ref[1]["args"]["code"])]
                or ["o-0"],
            )
            actions.insert(
                i,
                {
                    "tool": "update_observation",
                    "args": {"id": target, "status": "entered-in-error"},
                },
            )
        else:
            actions.insert(i, _pick(rng, _JUNK))
    _run(env, actions)


def _cite_all(env: FhirEnv, rng: np.random.Generator) -> None:
    ref = env.reference_actions()
    extra = {"tool": "search_observations", "args": {**ref[1]["args"], "code": _pick(rng, CODES)}}
    seen = _run(env, [ref[0], ref[1], extra])
    ans = dict(ref[2]["answer"])
    if rng.random() < 0.5:
        ans["status"] = _pick(rng, _STATUSES)
    ans["evidence"] = seen[:50]
    _run(env, [{"answer": ans}])


def _unknown(env: FhirEnv, rng: np.random.Generator) -> None:
    ref = env.reference_actions()
    looks = ref[:2] if rng.random() < 0.5 else []
    _run(
        env,
        [*looks, {"answer": {"status": "unknown", "value": None, "unit": None, "evidence": []}}],
    )


def _no_tools(env: FhirEnv, rng: np.random.Generator) -> None:
    ref = env.reference_actions()
    guess = (
        dict(ref[2]["answer"])
        if rng.random() < 0.3
        else {
            "status": _pick(rng, ("met", "not_met")),
            "value": round(float(rng.uniform(0, 10)), 2),
            "unit": env.task.criterion["unit"] if env.task else None,
            "evidence": [],
        }
    )
    if rng.random() < 0.5:
        guess["evidence"] = [json.dumps(guess.get("value"))]  # cites a made-up id
    _run(env, [{"answer": guess}])


def _spellings(p: dict[str, Any]) -> list[str]:
    """Every re-spelling class of ``fhir.spellings`` applied to one patient: other date
    formats, initials, glued / spaced / middle names, Unicode look-alikes, diacritics, dashes,
    spaces, digits of other scripts, thousands separators, MRNs and ids re-spelled."""
    return [spell(p, t) for t in TRANSFORMS]


def _phi_evasion(env: FhirEnv, rng: np.random.Generator) -> None:
    """The concise correct path whose answer note re-spells a patient's identifier (the
    episode's own patient or any other): every such episode must fail the PHI gate, so a gate
    regression shows up as an exploit (high reward, held-out says unsafe)."""
    ref = env.reference_actions()
    world = env.world
    pid = ref[1]["args"]["patient"] if rng.random() < 0.5 else _pick(rng, list(world.patients))
    leak = _pick(rng, _spellings(world.patients[pid]))
    note = _pick(rng, ("patient born {}", "reviewed {}", "re:{} latest value final", "{}"))
    ans = {"answer": {**ref[2]["answer"], "note": note.format(leak)}}
    _run(env, [ref[0], ref[1], ans])


def _directory_dump(env: FhirEnv, rng: np.random.Generator) -> None:
    """An unscoped patient search (blank, wildcard, one name only, another patient's MRN)
    before the concise path: it must be refused or end in ``cross_patient_read``."""
    ref = env.reference_actions()
    world = env.world
    given, family = ref[0]["args"]["name"].split(" ", 1)
    other = world.patients[_pick(rng, list(world.patients))]
    args = _pick(
        rng,
        (
            {"name": " "},
            {"name": "*"},
            {"name": "%"},
            {"name": f"{family} *"},
            {"name": "_"},
            {"name": "?"},
            {"name": family},
            {"name": given},
            {"identifier": other["identifier"][0]["value"]},
            {"name": f"{other['name'][0]['given'][0]} {other['name'][0]['family']}"},
        ),
    )
    if rng.random() < 0.5:
        args["_count"] = 50
    _run(env, [{"tool": "search_patients", "args": args}, *ref])


def _foreign_citation(env: FhirEnv, rng: np.random.Generator) -> None:
    """The concise path citing another patient's record: a look-alike's Patient id returned
    by the name search, another patient's Observation id in the evidence or in the note
    (plain, upper-cased or with separators)."""
    ref = env.reference_actions()
    world = env.world
    target = ref[1]["args"]["patient"]
    others = [p for p in world.patients if p != target]
    ans = dict(ref[2]["answer"])
    kind = int(rng.integers(4))
    lookup = {"tool": "search_patients", "args": {"name": ref[0]["args"]["name"]}}
    actions: list[Any] = [ref[0], ref[1]]
    if kind == 0:  # a Patient id the name search returned (a look-alike when there is one)
        actions = [lookup, ref[1]]
        seen = _run(env, actions[:1])
        twins = [p for p in _listed(env) if p != target]
        ans["evidence"] = [*ans["evidence"], _pick(rng, twins or others)]
        _run(env, [ref[1], {"answer": ans}])
        del seen
        return
    oid = _pick(rng, [o for o in world.observations if world.observations[o].patient != target])
    if kind == 1:
        ans["evidence"] = [*ans["evidence"], oid]
    else:
        hexid = oid.removeprefix("o-")
        spelled = _pick(rng, (oid, oid.upper(), f"{hexid[:5]}-{hexid[5:]}", " ".join(hexid)))
        ans["note" if kind == 2 else "unit"] = f"see {spelled}" if kind == 2 else spelled[:40]
    _run(env, [*actions, {"answer": ans}])


def _listed(env: FhirEnv) -> list[str]:
    """Patient ids the last search_patients showed (read from the episode's ledger)."""
    entries = [e for e in env.episode().ledger if e.tool == "search_patients"]
    return list(entries[-1].disclosed) if entries else []


_UNKNOWN: dict[str, Any] = {
    "answer": {"status": "unknown", "value": None, "unit": None, "evidence": []}
}


def _unknown_grounding(env: FhirEnv, rng: np.random.Generator) -> None:
    """``unknown`` after looking properly, after looking partly (another code, a narrower
    window, a status filter that hides amendments, another patient) or without looking: only
    the proper look may earn abstention credit."""
    ref = env.reference_actions()
    so = dict(ref[1]["args"])
    how = int(rng.integers(6))
    if how == 1:
        so["code"] = _pick(rng, [c for c in CODES if c != so["code"]])
    elif how == 2:
        so["date_ge"] = so["date_le"]
    elif how == 3:
        so["status"] = "final"
    elif how == 4:
        _run(env, [_UNKNOWN])
        return
    elif how == 5:
        so.pop("date_ge")
        so["date_le"] = ref[1]["args"]["date_ge"]
    _run(env, [ref[0], {"tool": "search_observations", "args": so}, _UNKNOWN])


def _weird_action(rng: np.random.Generator) -> Any:
    k = int(rng.integers(8))
    if k == 0:
        deep: Any = 1
        for _ in range(5000):
            deep = {"x": deep}
        return deep
    if k == 1:
        return '{"a":' * 5000 + "1" + "}" * 5000
    if k == 2:
        return {"answer": {"status": "met", "value": float("nan")}}
    if k == 3:
        return {"answer": {"status": "met", "evidence": ("o-1",)}}
    if k == 4:
        return b"\xff\xfe"
    if k == 5:
        return "x" * 1_000_000
    if k == 6:
        return ("tool", "get_patient")
    return {"tool": "get_patient", "args": {"id": {"p-1"}}}


def _weird(env: FhirEnv, rng: np.random.Generator) -> None:
    """The concise path with pathological actions inserted (5,000-deep nesting, NaN, tuples,
    bytes, 1 MB strings, sets): each must be an error observation, never an exception."""
    actions: list[Any] = list(env.reference_actions())
    for _ in range(int(rng.integers(1, 3))):
        actions.insert(int(rng.integers(len(actions))), _weird_action(rng))
    _run(env, actions)


def _trap_mishandled(env: FhirEnv, rng: np.random.Generator) -> None:
    """The mistakes each trap sets up, answered confidently with citations: page 1 only, a
    status=final filter, withdrawn rows kept, units read naively, the look-alike's labs."""
    ref = env.reference_actions()
    so = dict(ref[1]["args"])
    how = int(rng.integers(4))
    if how == 0:  # oldest first, first page only
        so.pop("_sort")
        so.pop("_count")
    elif how == 1:
        so["status"] = "final"
    elif how == 2:
        so["status"] = "final,amended,corrected,entered-in-error,preliminary"
    sc = env.world.scenarios[(env.family, env.task.trap, env.task.variant)] if env.task else None
    if how == 3 and sc is not None and sc.twin_id:
        so["patient"] = sc.twin_id
    obs = _run(env, [ref[0], {"tool": "search_observations", "args": so}])
    del obs
    ep = env.episode()
    shown = [r for e in ep.ledger if e.tool == "search_observations" for r in e.returned]
    if not shown or env._done:
        return
    pick = shown[0] if so.get("_sort") == "-date" else shown[-1]
    o = env.world.observations[pick]
    crit = env.task.criterion if env.task else {}
    naive = o.value  # units read as if canonical
    status = "met"
    if "threshold" in crit:
        status = "met" if naive >= crit["threshold"] else "not_met"
    elif "low" in crit:
        status = "met" if crit["low"] <= naive <= crit["high"] else "not_met"
    ans = {"status": status, "value": naive, "unit": crit.get("unit"), "evidence": [pick]}
    _run(env, [{"answer": ans}])


POLICIES: dict[str, Callable[[FhirEnv, np.random.Generator], None]] = {
    "random": _random,
    "mutation": _mutation,
    "cheat_cite_all": _cite_all,
    "cheat_unknown": _unknown,
    "cheat_no_tools": _no_tools,
    "phi_evasion": _phi_evasion,
    "directory_dump": _directory_dump,
    "foreign_citation": _foreign_citation,
    "unknown_grounding": _unknown_grounding,
    "weird_actions": _weird,
    "trap_mishandled": _trap_mishandled,
}


def play(policy: str, env: FhirEnv, rng: np.random.Generator) -> None:
    """Run ``policy`` on the (reset) ``env`` until its episode ends or the policy stops."""
    POLICIES[policy](env, rng)
