"""The frozen golden set of the SQL verifier: replayable episodes with the verdicts it gave.

Usage::

    from rewardkit.envs.sql.golden import GOLDEN
    GOLDEN.diff()          # [] while the verifier is unchanged; else (name, what changed)

    python -m rewardkit.envs.sql.golden            # print the verdict diff (exit 1 if any)
    python -m rewardkit.envs.sql.golden --write    # after a deliberate verifier change

Seed 002: "before any environment change raises scores, rerun historical policies: is it a
bug fix, or did the task get easier?". Records: the first two cases of every kind of the
adversarial library and two fuzzing episodes of every policy on every family. A changed
verdict shows up here first and means a new ``VERIFIER_VERSION`` (the lineage then changes,
so old snapshots refuse to replay instead of silently scoring differently).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..._frozen import thaw
from ..core import Env
from ..golden import GoldenSet, play_actions
from ..registry import make
from .tasks import VERIFIER_VERSION

__all__ = ["GOLDEN", "GOLDEN_PATH"]

GOLDEN_PATH = Path(__file__).with_name("data") / "golden-v1.jsonl"


def _episodes() -> list[tuple[str, Env]]:
    from . import ENV_IDS
    from .cases import load_sql_library

    out: list[tuple[str, Env]] = []
    per_kind: dict[str, int] = {}
    for case in load_sql_library():
        if per_kind.get(case.kind, 0) >= 2:
            continue
        per_kind[case.kind] = per_kind.get(case.kind, 0) + 1
        env = make(case.env_id)
        env.reset(seed=case.seed, options=thaw(case.options))
        play_actions(env, thaw(case.actions))  # the case is frozen; the parser takes JSON
        out.append((f"library/{case.name}", env))
    for k, env_id in enumerate(ENV_IDS):
        env = make(env_id)
        for j, policy in enumerate(env.policies()):
            for i in range(2):
                rng = np.random.default_rng([2026, k, j, i])
                env = make(env_id)
                env.reset(seed=int(rng.integers(0, 2**31)))
                env.policies()[policy](env, rng)
                out.append((f"fuzz/{env_id}/{policy}-{i}", env))
    return out


GOLDEN = GoldenSet(GOLDEN_PATH, _episodes, VERIFIER_VERSION)
main = GOLDEN.main

if __name__ == "__main__":
    raise SystemExit(main())
