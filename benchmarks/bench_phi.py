"""PHI detection on generated corpora: misses on every spelling transform × every patient, false
positives on honest notes from every task — the shipped gate, the held-out verifier, and the
checks a user would write instead.

    python benchmarks/bench_phi.py          # the rates table (and the timing rows of make bench)

- attack corpus: every transform of ``rewardkit.envs.fhir.spellings.TRANSFORMS`` (50 classes:
  Unicode look-alikes, diacritics added / removed / transliterated, Unicode dashes and spaces,
  zero-width characters, thousands separators, non-ASCII digits, middle initials and names,
  written dates, MRNs and ids re-spelled, percent- and HTML-encoded, run on with other
  digits) applied to every patient of the world, inside a sentence; a miss is a text in
  which the patient is not found.
- honest corpus: ``honest_notes`` — lab values, units, the task's dates and times, the
  patient's own Observation ids, ordinary words that contain a family name — for every task
  (4 families × 7 traps × 6 variants); a false positive is a note in which any patient is found.
- baselines: an exact-string check of the canonical spellings (verifier 1.0.0's gate), and
  the shipped gate's patterns without the Unicode folding (NFKC only).
Goals (issue 13): 0 misses, 0 false positives.
"""

from __future__ import annotations

import time
import unicodedata
from typing import Any

import numpy as np

from rewardkit.envs.fhir import ENV_IDS, heldout, phi
from rewardkit.envs.fhir.phi import phi_index
from rewardkit.envs.fhir.spellings import TRANSFORMS, honest_notes, spell
from rewardkit.envs.fhir.world import build_world
from rewardkit.envs.registry import make

NOTES_PER_TASK = 12  # 168 tasks × 12 = 2,016 notes


def corpora() -> tuple[list[tuple[str, str, str]], list[str]]:
    """(patient id, transform, text) for every patient × transform, and the honest notes."""
    world = build_world(0)
    attacks = [
        (pid, t, f"reviewed {spell(p, t)} today")
        for pid, p in world.patients.items()
        for t in TRANSFORMS
    ]
    notes: list[str] = []
    for env_id in ENV_IDS:
        env = make(env_id)
        for (family, trap, variant), sc in world.scenarios.items():
            if family != env.family:
                continue
            env.reset(seed=0, options={"trap": trap, "variant": variant})
            rng = np.random.default_rng([variant, len(trap), len(notes)])
            notes += honest_notes(world, env.task, sc.patient_id, k=NOTES_PER_TASK, rng=rng)
    return attacks, notes


def _exact(world: Any) -> Any:
    needles = {
        s.lower(): pid
        for pid, p in world.patients.items()
        for g, f in [(p["name"][0]["given"][0], p["name"][0]["family"])]
        for s in (pid, p["identifier"][0]["value"], p["birthDate"], f"{g} {f}", f"{f}, {g}")
    }

    def find(text: str) -> set[str]:
        low = text.lower()
        return {pid for s, pid in needles.items() if s in low}

    return find


def _nfkc_only(world: Any) -> Any:
    index = phi_index(world)

    def find(text: str) -> set[str]:
        saved = phi.fold
        phi.fold = lambda t: unicodedata.normalize("NFKC", t)  # type: ignore[assignment]
        try:
            return index.find(text)
        finally:
            phi.fold = saved

    return find


def measure() -> dict[str, dict[str, Any]]:
    world = build_world(0)
    attacks, notes = corpora()
    checks = {
        "shipped gate": phi_index(world).find,
        "held-out verifier": lambda t: set(heldout._phi_in(t, world)),
        "exact-string check (1.0.0)": _exact(world),
        "gate patterns, NFKC only": _nfkc_only(world),
    }
    out = {}
    for name, find in checks.items():
        t0 = time.perf_counter()
        missed = [(pid, t) for pid, t, text in attacks if pid not in find(text)]
        false = [text for text in notes if find(text)]
        by_class: dict[str, int] = {}
        for _, t in missed:
            by_class[t] = by_class.get(t, 0) + 1
        out[name] = {
            "misses": len(missed),
            "n_attacks": len(attacks),
            "false_positives": len(false),
            "n_notes": len(notes),
            "seconds": time.perf_counter() - t0,
            "missed_classes": by_class,
            "example_fp": false[:2],
        }
    return out


def run() -> list[dict]:
    m = measure()
    ours, base = m["shipped gate"], m["exact-string check (1.0.0)"]
    return [
        {
            "case": (
                f"PHI gate: misses {ours['misses']}/{ours['n_attacks']}, false positives "
                f"{ours['false_positives']}/{ours['n_notes']} (exact check: misses "
                f"{base['misses']}, false positives {base['false_positives']})"
            ),
            "ours_s": ours["seconds"],
            "baseline": "exact-string check of canonical spellings",
            "baseline_s": base["seconds"],
            "ratio": base["seconds"] / ours["seconds"],
        }
    ]


if __name__ == "__main__":
    for name, r in measure().items():
        print(
            f"{name:28s} misses {r['misses']:5d}/{r['n_attacks']} "
            f"({100 * r['misses'] / r['n_attacks']:.1f} %), false positives "
            f"{r['false_positives']:4d}/{r['n_notes']} "
            f"({100 * r['false_positives'] / r['n_notes']:.1f} %), {r['seconds']:.1f} s"
        )
        worst = sorted(r["missed_classes"].items(), key=lambda kv: -kv[1])[:6]
        if worst:
            print(f"{'':28s} most missed: {worst}")
        if r["example_fp"]:
            print(f"{'':28s} e.g. false positive: {r['example_fp'][0]!r}")
