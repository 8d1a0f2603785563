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
from .fhir.tools import MANIFEST
from .fhir.units import CODES
from .fhir.world import MONTHS

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


_MONTHS = MONTHS


def _spellings(p: dict[str, Any]) -> list[str]:
    """Ways to write one patient's identifiers that dodge an exact-string match (the PHI
    gate's known blind spots): other date formats, initials, glued or spaced-out names,
    separators inside MRNs and ids, full-width letters."""
    given, family = p["name"][0]["given"][0], p["name"][0]["family"]
    y, m, d = p["birthDate"].split("-")
    month = _MONTHS[int(m) - 1]
    mrn = p["identifier"][0]["value"].removeprefix("MRN")
    hexid = p["id"].removeprefix("p-")
    return [
        f"{d}/{m}/{y}",
        f"{m}/{d}/{y}",
        f"{int(d)}.{int(m)}.{y[2:]}",
        f"{y}{m}{d}",
        f"{int(d)} {month} {y}",
        f"{month[:3]} {int(d)}, {y}",
        f"{int(d)}th of {month[:3]}. {y}",
        f"{given[0]}. {family}",
        f"{family}, {given[0]}.",
        f"{given}{family}",
        f"{family.upper()}{given}",
        f"{given}-{family}",
        " ".join(given + family),
        "".join(chr(ord(c) + 0xFEE0) if c.isascii() and c.isalpha() else c for c in given)
        + " "
        + family,
        f"MRN {mrn[:3]}-{mrn[3:]}",
        f"M.R.N. {' '.join(mrn)}",
        f"#{mrn}",
        f"Patient/P-{hexid.upper()}",
        f"{hexid[:4]} {hexid[4:]}",
    ]


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


POLICIES: dict[str, Callable[[FhirEnv, np.random.Generator], None]] = {
    "random": _random,
    "mutation": _mutation,
    "cheat_cite_all": _cite_all,
    "cheat_unknown": _unknown,
    "cheat_no_tools": _no_tools,
    "phi_evasion": _phi_evasion,
}


def play(policy: str, env: FhirEnv, rng: np.random.Generator) -> None:
    """Run ``policy`` on the (reset) ``env`` until its episode ends or the policy stops."""
    POLICIES[policy](env, rng)
