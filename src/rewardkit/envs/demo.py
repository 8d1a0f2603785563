"""The environments' section of ``rewardkit demo``: check_env, the lab, a short red-team."""

from __future__ import annotations

from collections.abc import Sequence

from .._plotting import bars_png, optional_figures, table_png
from .._results import Check, Section
from .conformance import check_env
from .fuzz import FuzzReport, fuzz
from .lab import run_lab
from .library import REQUIRED_KINDS, AdversarialCase, CaseOutcome, build_library, run_case
from .plots import pareto_png
from .registry import make, registered
from .sweep import SweepResult, sweep

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
    sw = sweep()  # the default sweep of `rewardkit sweep` (under a second)
    figures = optional_figures(lambda: _figures(cases, outcomes, rep, sw))
    return Section(
        "envs",
        "Verifiable FHIR environment: lab rlvr and a short red-team",
        tuple(checks),
        {
            "envs_lab.json": lab.to_dict(),
            "envs_redteam.json": {
                "library": [
                    {
                        "name": r[0],
                        "kind": c.kind,
                        "expected": r[1],
                        "observed": r[2],
                        "matched": o.matched,
                    }
                    for c, o, r in zip(cases, outcomes, _table_rows(cases, outcomes))
                ],
                "fuzz": rep.to_dict(),
            },
            "envs_sweep.json": sw.to_dict(),
        },
        figures,
        "The FHIR environments pass check_env; the lab's scripted policies show the reward "
        "separates them; every hand-written cheat gets exactly the outcome written down for it; "
        "random fuzzing finds no exploit in the shipped verifier but does in a naive control; "
        "the weight sweep shows which behaviours sit on the success / cost front.",
    )


SHOWN_VALUES = 3  # pinned values per table cell; the rest are counted ("+2 more")


def _outcome(gates: Sequence[str], values: Sequence[tuple[str, float | None]]) -> str:
    """One table cell: the gates that fail (a hard fail) or "pass", then the first pinned values
    (the total, then components), e.g. "pass; citation 0.1, task 1"."""
    head = "FAIL " + ", ".join(sorted(gates)) if gates else "pass"
    shown = [f"{k} {'None' if v is None else f'{v:.3g}'}" for k, v in values[:SHOWN_VALUES]]
    more = f" +{len(values) - SHOWN_VALUES} more" if len(values) > SHOWN_VALUES else ""
    return f"{head}; " + ", ".join(shown) + more if shown else head


def _table_rows(
    cases: Sequence[AdversarialCase], outcomes: Sequence[CaseOutcome]
) -> list[tuple[str, str, str, str]]:
    """Per case: its name, the expected and observed outcome on the same keys, match."""
    rows = []
    for c, o in zip(cases, outcomes):
        keys = (["total"] if c.total is not None else []) + list(c.components)
        want = {"total": c.total, **c.components}
        got = {"total": o.verdict.total, **o.verdict.components}
        rows.append(
            (
                c.name,
                _outcome(c.gates, [(k, want[k]) for k in keys]),
                _outcome(tuple(o.verdict.gate_failures), [(k, got.get(k)) for k in keys]),
                "PASS" if o.matched else "FAIL",
            )
        )
    return rows


SHOWN_MISMATCHES = 3


def _class_rows(
    cases: Sequence[AdversarialCase], outcomes: Sequence[CaseOutcome]
) -> list[tuple[str, int, int, str, str]]:
    """Per class (case kind): cases, how many got exactly their expected outcome, the first
    mismatched names, PASS / FAIL. The library has over a thousand cases: one line each would
    make a figure tens of thousands of pixels tall, so the figure shows the classes and the
    JSON artefact every case."""
    by_kind: dict[str, list[tuple[AdversarialCase, CaseOutcome]]] = {}
    for c, o in zip(cases, outcomes):
        by_kind.setdefault(c.kind, []).append((c, o))
    rows = []
    for kind, pairs in sorted(by_kind.items()):
        bad = [c.name for c, o in pairs if not o.matched]
        shown = ", ".join(bad[:SHOWN_MISMATCHES]) + (
            f" +{len(bad) - SHOWN_MISMATCHES} more" if len(bad) > SHOWN_MISMATCHES else ""
        )
        rows.append((kind, len(pairs), len(pairs) - len(bad), shown, "FAIL" if bad else "PASS"))
    return rows


def _figures(
    cases: Sequence[AdversarialCase],
    outcomes: Sequence[CaseOutcome],
    rep: FuzzReport,
    sw: SweepResult,
) -> dict[str, bytes]:
    rows = _class_rows(cases, outcomes)
    matched = sum(o.matched for o in outcomes)
    policies = sorted(rep.episodes_by_policy)
    return {
        "Red-team library: expected vs observed outcome per class of hand-written cheat "
        "(every case in envs_redteam.json)": table_png(
            ("class", "cases", "as expected", "mismatched cases", "match"),
            rows,
            title=f"Adversarial library: {matched}/{len(cases)} cases get exactly their "
            "expected outcome",
            pass_fail_col=4,
            col_widths=(0.26, 0.08, 0.12, 0.46, 0.08),
            width_in=10.0,
            row_in=0.22,
            fontsize=8,
        ),
        f"Red-team fuzzing ({rep.episodes} episodes): exploits per policy": bars_png(
            policies,
            {
                f"shipped verifier ({rep.stacks['shipped'].n_exploits})": [
                    rep.stacks["shipped"].exploits_by_policy.get(p, 0) for p in policies
                ],
                f"naive per-citation control ({rep.stacks['naive'].n_exploits})": [
                    rep.stacks["naive"].exploits_by_policy.get(p, 0) for p in policies
                ],
            },
            title="Exploit = high training reward on a wrong or unsafe episode",
            ylabel="exploit episodes",
            width_in=7.2,
        ),
        "Sweep: task success vs cost per behaviour, with the Pareto front": pareto_png(sw),
    }
