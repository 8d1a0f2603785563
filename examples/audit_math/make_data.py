"""Writes the synthetic labelled set of this example (deterministic: seed 0).

    python examples/audit_math/make_data.py       # items.jsonl, golden.jsonl, spike_in.jsonl

Each of 40 arithmetic questions gets 3 completions (one group per question). The gold label says
whether the completion's final answer is right *in substance*, as a careful reader would judge:
"12.0" for 12 is right, although an exact-match reward scores it 0; a hedge between two
answers is wrong. Strata: "easy" (+, −) and "hard" (×).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).parent

KINDS = {  # kind: (template, gold)
    "boxed_right": ("{a} {op} {b} = {n}, so the answer is \\boxed{{{n}}}.", True),
    "plain_right": ("The answer is {n}.", True),
    "decimal_right": ("Computing gives {n}.0", True),
    "wrong_then_right": ("First guess {w}, checking again: {n}.", True),
    "boxed_wrong": ("So the answer is \\boxed{{{w}}}.", False),
    "plain_wrong": ("I think it is {w}.", False),
    "right_then_wrong": ("{a} {op} {b} = {n}? No, the answer is \\boxed{{{w}}}.", False),
    "hedge": ("Either \\boxed{{{n}}} or \\boxed{{{w}}}.", False),
}
WEIGHTS = (5, 3, 2, 2, 4, 3, 2, 2)


def _lines(rows: list[dict]) -> str:
    return "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows)


def main() -> None:
    rng = random.Random(0)
    items, golden, spikes = [], [], []
    for q in range(40):
        op = rng.choice("+-*")
        a, b = rng.randint(2, 30), rng.randint(2, 12)
        n = {"+": a + b, "-": a - b, "*": a * b}[op]
        w = n + rng.choice([-2, -1, 1, 2, 10])
        question = f"What is {a} {op} {b}?"
        kinds = rng.choices(list(KINDS), weights=WEIGHTS, k=3)
        for k, kind in enumerate(kinds):
            template, gold = KINDS[kind]
            items.append(
                {
                    "id": f"q{q:02d}-{k}",
                    "group": f"q{q:02d}",
                    "stratum": "hard" if op == "*" else "easy",
                    "question": question,
                    "answer": str(n),
                    "completion": template.format(a=a, op=op, b=b, n=n, w=w),
                    "kind": kind,
                    "gold": gold,
                }
            )
        if q < 10:
            spikes.append(
                {
                    "id": f"q{q:02d}",
                    "clean": {
                        "question": question,
                        "answer": str(n),
                        "completion": f"\\boxed{{{n}}}",
                    },
                    "corrupted": {
                        "question": question,
                        "answer": str(n),
                        "completion": f"\\boxed{{{w}}}",
                    },
                    "min_drop": 0.5,
                }
            )
    # The golden set: one reviewed item of each kind, with the reward it must keep getting.
    expected = {
        "boxed_right": 1.1,
        "plain_right": 1.0,
        "decimal_right": 0.0,
        "wrong_then_right": 1.0,
        "boxed_wrong": 0.1,
        "plain_wrong": 0.0,
        "right_then_wrong": 0.1,
        "hedge": -0.5,
    }
    seen = set()
    for it in items:
        if it["kind"] not in seen:
            seen.add(it["kind"])
            row = {k: v for k, v in it.items() if k != "gold"}
            golden.append({**row, "expected": expected[it["kind"]]})
    (HERE / "items.jsonl").write_text(_lines(items))
    (HERE / "golden.jsonl").write_text(_lines(golden))
    (HERE / "spike_in.jsonl").write_text(_lines(spikes))


if __name__ == "__main__":
    main()
