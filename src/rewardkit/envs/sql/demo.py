"""The SQL environments' section of ``rewardkit demo``: check_env, the lab, the adversarial
library, a short red-team with inversions counted, the authorizer's three layers."""

from __future__ import annotations

import sqlite3
from typing import Any

import numpy as np

from ..._plotting import bars_png, optional_figures
from ..._results import Check, Section
from ..conformance import check_env
from ..fuzz import fuzz
from ..lab import run_lab
from ..library import run_case
from ..registry import make
from .cases import REQUIRED_KINDS, load_sql_library
from .engine import DEFENCES, ReadOnlySession
from .verifier import unordered_stack

__all__ = ["demo_section"]

DEMO_EPISODES = 400
DEMO_GROUPS = 16  # groups of 8 episodes on one task, for ranking inversions


def _above(a: float | None, b: float | None) -> bool:
    """``a`` ranks above ``b`` (an unscored total ranks nowhere)."""
    return a is not None and b is not None and a > b


def _inversions(env_ids: tuple[str, ...]) -> dict[str, int]:
    """Pairs in groups of one task where the reward ranks an unsafe episode above a safe one,
    or a wrong / unsafe one above a right and safe one (shipped stack vs the unordered control)."""
    envs = {e: make(e) for e in env_ids}
    control = unordered_stack()
    out = {"shipped": 0, "unordered": 0, "pairs": 0}
    for g in range(DEMO_GROUPS):
        env = envs[env_ids[g % len(env_ids)]]
        policies = list(env.policies())
        seed = int(np.random.default_rng([5, g]).integers(0, 2**31))
        rows = []
        for k in range(8):
            rng = np.random.default_rng([5, g, k])
            env.reset(seed=seed)
            env.policies()[policies[(g + k) % len(policies)]](env, rng)
            h = env.heldout()
            rows.append((env.finalize().total, control.score(env.episode()).total, h))
        for a in rows:
            for b in rows:
                good, bad = b[2].correct and b[2].safe, not (a[2].correct and a[2].safe)
                if (good and bad) or (b[2].safe and not a[2].safe):
                    out["pairs"] += 1
                    out["shipped"] += _above(a[0], b[0])
                    out["unordered"] += _above(a[1], b[1])
    return out


def _layers() -> dict[str, bool]:
    """Each read-only layer alone refuses a DELETE on a scratch copy; none lets it through."""
    out = {}
    for name, layers in [(d, [d]) for d in DEFENCES] + [("none", [])]:
        uri = f"file:/rewardkit-demo-{name}?vfs=memdb"
        keep = sqlite3.connect(uri, uri=True)
        keep.executescript("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        keep.commit()
        ReadOnlySession(uri, defences=layers).run("DELETE FROM t")
        out[name] = keep.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 1
        keep.close()
    return out


def demo_section() -> Section:
    from . import ENV_IDS

    checks: list[Check] = []
    bad = [i for i in ENV_IDS if not check_env(make(i)).passed]
    checks.append(
        Check("check_env passes for every sql/* id", "all 4", ", ".join(bad) or "all 4", not bad)
    )
    layers = _layers()
    checks.append(
        Check(
            "each read-only layer alone refuses a write (and none at all lets it through)",
            "uri, query_only, authorizer refuse; none writes",
            ", ".join(f"{k}: {'refused' if v else 'written'}" for k, v in layers.items()),
            all(layers[d] for d in DEFENCES) and not layers["none"],
        )
    )
    labs = {e: run_lab(env_id=e) for e in ENV_IDS}
    failed = [f"{e}: {c.name}" for e, lab in labs.items() for c in lab.checks if not c.passed]
    checks.append(
        Check(
            "lab rlvr A/B/C/D on every family (D's DELETE hard-fails and ranks last)",
            "environment PASS, training not-run ×4",
            "; ".join(failed) or "PASS ×4",
            not failed,
        )
    )
    cases = load_sql_library()
    envs = {e: make(e) for e in ENV_IDS}  # one environment per id, reset for each case
    outcomes = [run_case(c, env=envs[c.env_id]) for c in cases]
    matched = sum(o.matched for o in outcomes)
    missing = REQUIRED_KINDS - {c.kind for c in cases}
    checks.append(
        Check(
            "adversarial library: every case gets exactly its expected gates and components",
            f"{len(cases)}/{len(cases)} (≥ 150), no kind missing",
            f"{matched}/{len(cases)}, missing {sorted(missing)}",
            matched == len(cases) and len(cases) >= 150 and not missing,
        )
    )
    rep = fuzz(episodes=DEMO_EPISODES, rng=0, env_ids=ENV_IDS, progress=False)
    shipped, naive = rep.stacks["shipped"], rep.stacks["naive"]
    checks.append(
        Check(
            f"fuzz {DEMO_EPISODES} episodes: shipped verifier exploits",
            "0 (with high-reward episodes)",
            f"{shipped.n_exploits} ({shipped.n_high} high-reward episodes)",
            shipped.n_exploits == 0 and shipped.n_high > 0,
        )
    )
    checks.append(
        Check("fuzz: naive control (no gates) exploits", "> 0", str(naive.n_exploits),
              naive.n_exploits > 0)
    )  # fmt: skip
    inv = _inversions(ENV_IDS)
    checks.append(
        Check(
            f"ranking inversions in {DEMO_GROUPS} groups of 8 (shipped / unordered control)",
            "0 / > 0",
            f"{inv['shipped']} / {inv['unordered']} of {inv['pairs']} ordered pairs",
            inv["shipped"] == 0 and inv["unordered"] > 0,
        )
    )
    policies = list(rep.episodes_by_policy)

    def figures() -> dict[str, bytes]:
        return {
            f"SQL red-team ({rep.episodes} episodes): exploits per policy": bars_png(
                policies,
                {
                    f"shipped verifier ({shipped.n_exploits})": [
                        shipped.exploits_by_policy.get(p, 0) for p in policies
                    ],
                    f"naive control, no gates ({naive.n_exploits})": [
                        naive.exploits_by_policy.get(p, 0) for p in policies
                    ],
                },
                title="Exploit = high reward on a wrong or unsafe episode, or a missed violation",
                ylabel="exploit episodes",
                width_in=8.0,
            )
        }

    artefacts: dict[str, Any] = {
        "sql_lab.json": {e: lab.to_dict() for e, lab in labs.items()},
        "sql_redteam.json": {
            "library": [{"name": o.name, "matched": o.matched} for o in outcomes],
            "fuzz": rep.to_dict(),
            "inversions": inv,
            "layers": layers,
        },
    }
    return Section(
        "sql",
        "SQL analytics environments on SQLite: read-only layers, lab, library, red-team",
        tuple(checks),
        artefacts,
        optional_figures(figures),
        "Four sql/* task families on a seeded retail database. Writes are refused three "
        "independent ways and every access is seen column by column by the authorizer; the "
        "hidden verifier's gates read that ledger. The adversarial library gets exactly its "
        "expected outcome, the fuzzer finds no exploit and no ranking inversion in the shipped "
        "verifier and finds both in its naive controls.",
    )
