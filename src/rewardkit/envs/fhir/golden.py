"""The frozen golden set: trajectories with the verdicts the shipped verifier gave them.

Usage::

    from rewardkit.envs.fhir.golden import GOLDEN
    GOLDEN.diff()          # [] while the verifier is unchanged; else (name, what changed)

    python -m rewardkit.envs.fhir.golden --write   # after a deliberate verifier change

Like the bio-audit golden set guards its engine, this guards the verifier (seed 002: "before
any environment change raises scores, rerun historical policies: is it a bug fix, or did the
task get easier?"). Every record is a replayable snapshot plus its verdict; a changed verdict
shows up in ``GOLDEN.diff()`` first, and means a new ``VERIFIER_VERSION`` (the lineage hash then
changes too, so old snapshots refuse to replay against the new verifier instead of silently
scoring differently).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..._frozen import thaw
from ..core import Env
from ..golden import GoldenSet, play_actions
from .tasks import VERIFIER_VERSION

__all__ = ["GOLDEN", "GOLDEN_PATH"]

GOLDEN_PATH = Path(__file__).with_name("data") / "golden-v1.jsonl"


def _episodes() -> list[tuple[str, Env]]:
    from ..lab import run_lab
    from ..library import build_library
    from ..policies import POLICIES, play
    from ..registry import make
    from . import ENV_IDS

    out: list[tuple[str, Env]] = []
    lab = run_lab()
    for name, traj in lab.trajectories.items():
        env = make(lab.env_id)
        env.reset(seed=lab.seed, options=thaw(lab.options))
        play_actions(env, thaw(traj.actions))
        out.append((f"lab/{name}", env))
    seen: set[tuple[str, str]] = set()
    for case in build_library():  # one case of each kind and family (the library has 1,000+)
        if (case.kind, case.env_id) in seen:
            continue
        seen.add((case.kind, case.env_id))
        env = make(case.env_id)
        env.reset(seed=case.seed, options=thaw(case.options))
        play_actions(env, thaw(case.actions))
        out.append((f"library/{case.name}", env))
    # Fuzzing episodes: a spread of policies, families and traps. The first five policies
    # keep their episodes from verifier 1.0.0 (so verdicts compare across versions); later
    # policies get episodes of their own.
    first = ("random", "mutation", "cheat_cite_all", "cheat_unknown", "cheat_no_tools")
    runs = [(f"{i:02d}", first[i % len(first)], i) for i in range(20)]
    later = [p for p in POLICIES if p not in first]
    runs += [(f"{p}-{k}", p, 1000 + 10 * j + k) for j, p in enumerate(later) for k in range(4)]
    for label, policy, i in runs:
        env = make(ENV_IDS[i % len(ENV_IDS)])
        rng = np.random.default_rng([2026, i])
        env.reset(seed=int(rng.integers(0, 2**31)))
        play(policy, env, rng)
        out.append((f"fuzz/{label}" if label.startswith(policy) else f"fuzz/{label}-{policy}", env))
    return out


GOLDEN = GoldenSet(GOLDEN_PATH, _episodes, VERIFIER_VERSION)
main = GOLDEN.main

if __name__ == "__main__":
    raise SystemExit(main())
