"""The environments' section of ``rewardkit demo``: check_env, the lab, a short red-team."""

from __future__ import annotations

from ..demo import Check, Section
from .checker import check_env
from .fuzz import fuzz
from .lab import run_lab
from .library import REQUIRED_KINDS, build_library, run_case
from .registry import make, registered

DEMO_EPISODES = 300


def demo_section() -> Section:
    """check_env on every id, lab rlvr, the adversarial library and 300 fuzzing episodes."""
    checks: list[Check] = []
    bad_env = [i for i in registered() if not check_env(make(i)).passed]
    checks.append(
        Check(
            "check_env passes for every registered id",
            "all",
            ", ".join(bad_env) or f"all {len(registered())}",
            not bad_env,
        )
    )
    lab = run_lab()
    checks += [Check(f"lab: {c.name}", c.expected, c.measured, c.passed) for c in lab.checks]
    checks.append(
        Check(
            "lab label",
            "environment PASS, training not-run",
            lab.label,
            lab.label == "environment PASS, training not-run",
        )
    )
    cases = build_library()
    outcomes = [run_case(c) for c in cases]
    missing = REQUIRED_KINDS - {c.kind for c in cases}
    matched = sum(o.matched for o in outcomes)
    checks.append(
        Check(
            "adversarial library: every case gets its expected outcome",
            f"{len(cases)}/{len(cases)}, no kind missing",
            f"{matched}/{len(cases)}, missing {sorted(missing)}",
            matched == len(cases) and not missing,
        )
    )
    rep = fuzz(episodes=DEMO_EPISODES, rng=0, progress=False)
    shipped, naive = rep.stacks["shipped"], rep.stacks["naive"]
    checks.append(
        Check(
            f"fuzz {DEMO_EPISODES} episodes: shipped verifier exploits",
            "0",
            f"{shipped.n_exploits} ({shipped.n_high} high-reward episodes)",
            shipped.n_exploits == 0 and shipped.n_high > 0,
        )
    )
    checks.append(
        Check(
            "fuzz: naive per-citation control exploits",
            "> 0",
            str(naive.n_exploits),
            naive.n_exploits > 0,
        )
    )
    return Section(
        "envs",
        "Verifiable FHIR environment: lab rlvr and a short red-team",
        tuple(checks),
        {
            "envs_lab.json": lab.to_dict(),
            "envs_redteam.json": {
                "library": [{"name": o.name, "matched": o.matched} for o in outcomes],
                "fuzz": rep.to_dict(),
            },
        },
    )
