"""``rewardkit sandbox run``: a user's problems from JSONL, every format, through the real
sandbox; reference programs checked; malformed files refused naming file, line and field."""

from __future__ import annotations

import json

import pytest

from rewardkit.cli import main
from rewardkit.errors import InputError
from rewardkit.sandbox.dataset import load_problems

TWO_SUM = (
    "class Solution:\n    def twoSum(self, nums, target):\n        seen = {}\n"
    "        for i, x in enumerate(nums):\n            if target - x in seen:\n"
    "                return [seen[target - x], i]\n            seen[x] = i\n"
)
PROBLEMS = [
    {
        "id": "two-sum",
        "entry_point": "twoSum",
        "programs": [TWO_SUM, "def twoSum(nums, target):\n    return [0, 1]\n"],
        "tests": [
            {"args": [[2, 7, 11, 15], 9], "returns": [0, 1]},
            {"args": [[3, 2, 4], 6], "returns": [1, 2]},
        ],
        "reference": [0],
    },
    {
        "id": "add",
        "programs": [
            "print(sum(map(int, input().split())))\n",
            "import os\nos.write(1, b'%d\\n' % sum(map(int, input().split())))\n",
            "print(0)\n",
        ],
        "tests": [
            {"stdin": "1 2\n", "stdout": "3\n"},
            {"stdin": "5 7\n", "stdout": "12.0", "mode": "float", "tol": 1e-9},
        ],
        "reference": [0],
    },
    {
        "id": "he-style",
        "entry_point": "inc",
        "programs": ["def inc(x):\n    return x + 1\n"],
        "asserts": "def check(candidate):\n    assert candidate(1) == 2\n"
        "    for x in range(3):\n        assert candidate(x) == x + 1\n",
        "reference": [0],
    },
    {"id": "calls", "entry_point": "f", "programs": ["def f(a, b):\n    return a * b\n"],
     "tests": [{"input": "(2, 3)", "expected": "6"}, {"input": "('a', 2)", "expected": "'ab'"}]},
]  # fmt: skip


def _write(tmp_path, problems, name="problems.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(p) + "\n" for p in problems), encoding="utf-8")
    return path


class _Result:
    def __init__(self, code, captured):
        self.exit_code, self.output = code, captured.out + captured.err


def _run(tmp_path, path, *args, capsys):
    code = main(["sandbox", "run", str(path), "--out", str(tmp_path / "out"), *args])
    return _Result(code, capsys.readouterr())


def test_every_format_runs_and_the_json_is_the_same_each_time(tmp_path, capsys):
    path = _write(tmp_path, PROBLEMS)
    r = _run(tmp_path, path, "--timeout", "2", "--workers", "2", capsys=capsys)
    assert r.exit_code == 0, r.output
    first = (tmp_path / "out" / "sandbox_run.json").read_bytes()
    got = {p["id"]: p for p in json.loads(first)["problems"]}
    assert got["two-sum"]["status"] == [["PASS", "PASS"], ["PASS", "FAIL"]]
    assert got["add"]["status"] == [["PASS", "PASS"], ["PASS", "PASS"], ["FAIL", "FAIL"]]
    he = got["he-style"]
    assert he["status"] == [["PASS", "INVALID_TEST"]] and he["pass_fraction"] == [1.0]
    assert "line 3: a for loop" in he["invalid_tests"][0]["reason"]  # named with its line
    assert got["calls"]["status"] == [["PASS", "FAIL"]]
    assert all(not p["reference_failures"] for p in got.values())
    assert "durations" not in first.decode()
    r = _run(tmp_path, path, "--timeout", "2", "--workers", "2", capsys=capsys)
    assert r.exit_code == 0 and (tmp_path / "out" / "sandbox_run.json").read_bytes() == first


def test_a_reference_that_fails_a_test_exits_1_naming_the_cell(tmp_path, capsys):
    """A wrong expected value in the user's data: the gold solution fails it."""
    bad = json.loads(json.dumps(PROBLEMS[:2]))
    bad[1]["tests"][0]["stdout"] = "4\n"  # 1 + 2
    r = _run(tmp_path, _write(tmp_path, bad), "--workers", "1", capsys=capsys)
    assert r.exit_code == 1, r.output
    assert "reference failure: problem 'add', program 0, test 0: FAIL" in r.output
    saved = json.loads((tmp_path / "out" / "sandbox_run.json").read_text())
    failures = [p["reference_failures"] for p in saved["problems"]]
    assert failures == [[], [{"program": 0, "test": 0, "status": "FAIL", "detail": ""}]]


def _fixed(**change):
    p = {"id": "p", "entry_point": "f", "programs": ["def f(x): return x"],
         "tests": [{"input": "(1,)", "expected": "1"}]}  # fmt: skip
    p.update(change)
    return {k: v for k, v in p.items() if v is not None}


BAD = [
    (_fixed(id=None), "field 'id': missing"),
    (_fixed(id=" "), "field 'id': expected a non-empty string"),
    (_fixed(programs=None), "field 'programs': missing"),
    (_fixed(programs=[]), "field 'programs': expected a non-empty list"),
    (_fixed(programs="def f(x): return x"), "field 'programs': expected a non-empty list"),
    (_fixed(programs=["def f(x): return x", 3]), "field 'programs[1]': expected a source text"),
    (_fixed(tests=None), "got neither"),
    (_fixed(asserts="assert f(1) == 1"), "got both"),
    (_fixed(tests=[]), "field 'tests': expected a non-empty list of tests"),
    (_fixed(tests=[[1, 1]]), "field 'tests[0]': expected an object"),
    (_fixed(tests=[{"input": "(1,)"}]), "field 'tests[0]': expected one of"),
    (_fixed(tests=[{"input": "(1,)", "expected": "1", "x": 1}]), "got the fields"),
    (_fixed(tests=[{"input": [1], "expected": "1"}]), "literal texts"),
    (_fixed(tests=[{"input": "(2,", "expected": "1"}]), "field 'tests[0].input': SyntaxError"),
    (_fixed(tests=[{"args": 1, "returns": 1}]), "field 'tests[0]': The 'args' parameter"),
    (_fixed(tests=[{"stdin": "", "stdout": "", "mode": "loose"}]), "'mode' parameter"),
    (_fixed(tests=[{"stdin": "", "stdout": "", "tol": 2}]), "'tol' parameter"),
    (
        _fixed(tests=[{"input": "(1,)", "expected": "1"}, {"stdin": "", "stdout": ""}]),
        "field 'tests': mixes",
    ),
    (_fixed(tests=[{"stdin": "", "stdout": ""}]), "field 'entry_point': standard-input"),
    (_fixed(entry_point=None), "field 'entry_point': missing"),
    (_fixed(entry_point="class"), "field 'entry_point': expected a Python identifier"),
    (_fixed(entry_point="a.b"), "field 'entry_point': expected a Python identifier"),
    (_fixed(tests=None, asserts="# none\n"), "field 'asserts': no assert found"),
    (_fixed(reference=[1]), "field 'reference': expected indices of 'programs' (0 to 0)"),
    (_fixed(reference=[True]), "field 'reference': expected indices"),
    (_fixed(reference=0), "field 'reference': expected a list of program indices"),
    (_fixed(test=[]), "field 'test': not a field of a problem"),
]


@pytest.mark.parametrize(("problem", "message"), BAD)
def test_a_malformed_problem_names_file_line_and_field(tmp_path, problem, message):
    path = _write(tmp_path, [_fixed(id="ok"), problem])
    with pytest.raises(InputError, match="line 2") as e:
        load_problems(path)
    assert message in str(e.value) and str(path) in str(e.value)


def test_the_cli_refuses_a_malformed_file_before_running_anything(tmp_path, capsys):
    path = _write(tmp_path, [_fixed(id="a"), _fixed(id="a")])
    r = _run(tmp_path, path, capsys=capsys)
    assert r.exit_code == 2
    assert "line 2, field 'id': 'a' is the id of problem 1 too" in r.output
    assert not (tmp_path / "out").exists()
    missing = _run(tmp_path, tmp_path / "nope.jsonl", capsys=capsys)
    assert missing.exit_code == 2 and "nope.jsonl" in missing.output
