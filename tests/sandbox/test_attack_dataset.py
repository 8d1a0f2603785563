"""``rewardkit sandbox run`` attacked and used as a new user would: a file's text and a
program's exception names reach the console as text, never as markup or escape sequences; call
tests that are not literals are refused at load naming the field; APPS's wrapped answers are
named when a reference fails on one; problems with invalid tests are reported; LeetCode's
starter code (``List[int]`` without an import) runs; problems of one kind share one pass over
the workers with the same tables as one run per problem."""

from __future__ import annotations

import json

import pytest

from rewardkit.cli import main
from rewardkit.errors import ConfigError, InputError
from rewardkit.sandbox import Sandbox, SandboxWarning, Status, StdioTest, TestCase
from rewardkit.sandbox import _pool as pool_module
from rewardkit.sandbox.dataset import load_problems, run_problems


def _write(tmp_path, problems, name="problems.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(p) + "\n" for p in problems), encoding="utf-8")
    return path


def _cli(tmp_path, path, *args, capsys):
    code = main(["sandbox", "run", str(path), "--out", str(tmp_path / "out"), *args])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


# ----------------------------------------------------------------- what reaches the console
HOSTILE_NAME = "[/nope] \x1b[2J\x1b[31mowned [bold]"


def test_text_from_the_file_and_from_programs_is_printed_as_text(tmp_path, capsys):
    """A problem id, a file name and an exception name a reference program chose: rich read
    them as markup (``[/nope]`` closed no tag: MarkupError, exit 3 after the run) and passed
    escape sequences to the terminal."""
    raiser = (
        "class E(Exception):\n    pass\n"
        f"E.__name__ = E.__qualname__ = {HOSTILE_NAME!r}\n"
        "def f(x):\n    raise E()\n"
    )
    problems = [
        {"id": "[/bold]x[red]", "entry_point": "f", "programs": [raiser],
         "tests": [{"args": [1], "returns": 2}], "reference": [0]},
    ]  # fmt: skip
    path = _write(tmp_path, problems, name="[red]x[_].jsonl")
    for args in ((), ("--json",)):
        code, out = _cli(tmp_path, path, "--workers", "1", *args, capsys=capsys)
        assert code == 1, out
        assert "\x1b[2J" not in out and "\x1b[31m" not in out
        assert (
            "reference failure: problem '[/bold]x[red]', program 0, test 0: ERROR "
            "([/nope] \\x1b[2J\\x1b[31mowned [bold])" in out
        )
    saved = json.loads((tmp_path / "out" / "sandbox_run.json").read_text())
    assert saved["problems"][0]["detail"] == [[HOSTILE_NAME]]  # the JSON keeps the text as is


# ----------------------------------------------------------------- call tests that are not literals
def _one(test, **extra):
    return {"id": "p", "entry_point": "f", "programs": ["def f(x):\n    return x\n"],
            "tests": [{"input": "(1,)", "expected": "1"}, test], **extra}  # fmt: skip


NOT_LITERAL = [
    ({"input": "(1,)", "expected": "true"}, "tests[1].expected", "Name(id='true'"),
    ({"input": "(1,)", "expected": "null"}, "tests[1].expected", "Name(id='null'"),
    ({"input": "(null,)", "expected": "None"}, "tests[1].input", "Name(id='null'"),
    ({"input": "[[1, 2, 3]]", "expected": "6"}, "tests[1].input", "got list"),  # APPS's args
    ({"input": "1", "expected": "1"}, "tests[1].input", "got int"),
    ({"input": "(1,", "expected": "1"}, "tests[1].input", "SyntaxError"),
    ({"input": "(1,)", "expected": "f(1)"}, "tests[1].expected", "not a literal"),
    ({"input": "(x,)", "expected": "1"}, "tests[1].input", "not a literal"),
]


@pytest.mark.parametrize(("test", "field", "why"), NOT_LITERAL)
def test_a_call_test_that_is_not_a_literal_is_refused_at_load(tmp_path, test, field, why):
    """Before, each became an INVALID_TEST column: the file ran, exited 0, and with --json
    nothing said so (a whole LiveCodeBench set converted with "true" for True scored 0)."""
    path = _write(tmp_path, [_one(test)])
    with pytest.raises(InputError) as e:
        load_problems(path)
    message = str(e.value)
    assert f"{path}, line 1, field '{field}'" in message and why in message
    assert "{args, returns}" in message and "\n" not in message


def test_the_cli_exits_2_on_a_json_value_given_as_a_literal(tmp_path, capsys):
    path = _write(tmp_path, [_one({"input": "(1,)", "expected": "false"})])
    code, out = _cli(tmp_path, path, capsys=capsys)
    assert code == 2 and "field 'tests[1].expected'" in out
    assert not (tmp_path / "out").exists()


# ----------------------------------------------------------------- APPS's wrapped answers
def test_a_reference_failing_on_a_wrapped_answer_says_so(tmp_path, capsys):
    """APPS stores call-based answers as ``[answer]``: the reference fails every test, and the
    failure now says why (only where it returned exactly the list's element)."""
    problems = [
        {"id": "apps-add", "entry_point": "add", "programs": ["def add(a, b):\n    return a + b\n"],
         "tests": [{"args": [1, 2], "returns": [3]}, {"args": [2, 2], "returns": [5]},
                   {"args": [0, 0], "returns": 0}], "reference": [0]},
        {"id": "apps-pair", "entry_point": "pair", "programs": ["def pair(a):\n    return [a]\n"],
         "tests": [{"args": [[1]], "returns": [[1]]}], "reference": [0]},
    ]  # fmt: skip
    code, out = _cli(tmp_path, _write(tmp_path, problems), "--workers", "1", capsys=capsys)
    assert code == 1
    saved = json.loads((tmp_path / "out" / "sandbox_run.json").read_text())
    failures = saved["problems"][0]["reference_failures"]
    assert [f["test"] for f in failures] == [0, 1]
    assert "APPS wraps call-based answers" in failures[0]["detail"]
    assert failures[1]["detail"] == ""  # 4 is not the element of [5]: a plain FAIL
    assert saved["problems"][1]["reference_failures"] == []  # [[1]] returned as [[1]]: PASS
    assert "test 0: FAIL (returned the only element" in out


# ----------------------------------------------------------------- invalid tests are said
def test_problems_with_invalid_tests_are_named_on_stderr(tmp_path, capsys):
    problems = [
        {"id": "wrong-name", "entry_point": "g", "programs": ["def f(x):\n    return x\n"],
         "asserts": "assert f(1) == 1\n"},
        {"id": "half", "entry_point": "f", "programs": ["def f(x):\n    return x\n"],
         "asserts": "assert f(1) == 1\nfor x in range(3):\n    assert f(x) == x\n"},
        {"id": "fine", "entry_point": "f", "programs": ["def f(x):\n    return x\n"],
         "asserts": "assert f(1) == 1\n"},
    ]  # fmt: skip
    code, out = _cli(tmp_path, _write(tmp_path, problems), "--json", capsys=capsys)
    assert code == 0
    assert (
        "invalid tests: problem 'wrong-name', 1 of 1 (no valid test: every program scores 0); "
        "test 0: invalid test: line 1: `f(1)` is not a call of g" in out
    )
    assert "invalid tests: problem 'half', 1 of 2; test 1: invalid test: line 2" in out
    assert "'fine'" not in out


# ----------------------------------------------------------------- LeetCode's starter code
STARTER = [
    "class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n"
    "        seen = {}\n        for i, x in enumerate(nums):\n"
    "            if target - x in seen:\n                return [seen[target - x], i]\n"
    "            seen[x] = i\n",
    "class Solution:\n    def twoSum(self, nums: List[int], target: int) -> Optional[List[int]]:\n"
    "        d: Dict[int, int] = {}\n        for i, x in enumerate(nums):\n"
    "            if target - x in d:\n                return [d[target - x], i]\n"
    "            d[x] = i\n        return None\n",
    "from typing import List\nclass Solution:\n"
    "    def twoSum(self, nums: List[int], target: int) -> List[int]:\n        return [0, 1]\n",
    "class Solution:\n    def twoSum(self, nums: Tuple[int], target: int) -> Set[int]:\n"
    "        return [0, 1]\n",
    # not LeetCode's form: a top-level function gets no names it does not import
    "def twoSum(nums: List[int], target: int) -> List[int]:\n    return [0, 1]\n",
    # a program's own List wins
    "List = None\nclass Solution:\n    def twoSum(self, nums, target):\n        return List\n",
]


def test_leetcode_starter_code_runs_without_importing_typing():
    """LeetCode's, LiveCodeBench's and TACO's starter code annotates with ``List[int]`` and
    ``Optional`` without importing them (their judges provide the names): every Solution
    written on it was ERROR NameError, the correct ones too."""
    tests = [TestCase.from_values([[2, 7, 11, 15], 9], [0, 1]),
             TestCase.from_values([[3, 2, 4], 6], [1, 2])]  # fmt: skip
    with Sandbox(workers=1) as sb:
        t = sb.run(STARTER, tests, entry_point="twoSum")
    names = [[_status(s) for s in row] for row in t.status.tolist()]
    assert names == [
        ["PASS", "PASS"],
        ["PASS", "PASS"],
        ["PASS", "FAIL"],
        ["PASS", "FAIL"],
        ["ERROR", "ERROR"],
        ["FAIL", "FAIL"],
    ], t.detail
    assert t.detail[4, 0] == "NameError"


def _status(code):
    return Status(code).name


# ----------------------------------------------------------------- one pass per kind
MIXED = [
    {"id": "a", "entry_point": "f", "reference": [0],
     "programs": ["def f(x):\n    return x * 2\n", "def f(x):\n    return x\n",
                  "def f(x):\n    raise ValueError\n", "def f(x) return\n",
                  "class Solution:\n    def f(self, x):\n        return x * 2\n"],
     "tests": [{"args": [1], "returns": 2}, {"args": [0], "returns": 0},
               {"input": "(3,)", "expected": "6"}]},
    {"id": "s1", "reference": [0],
     "programs": ["print(int(input()) + 1)\n", "print(0)\n",
                  "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"],
     "tests": [{"stdin": "1\n", "stdout": "2\n"}, {"stdin": "41\n", "stdout": "42"}]},
    {"id": "b", "entry_point": "f", "programs": ["def f(x):\n    return x * 2\n"],
     "asserts": "assert f(2) == 4\nfor i in range(2):\n    assert f(i) == 2 * i\n"},
    {"id": "s2", "programs": ["import sys\nprint(sum(map(int, sys.stdin.read().split())))\n"],
     "tests": [{"stdin": "1 2 3\n", "stdout": "6"}, {"stdin": "", "stdout": "0", "mode": "exact"}]},
    {"id": "g", "entry_point": "g", "programs": ["def g(*a):\n    return len(a)\n"] * 3,
     "tests": [{"args": [], "returns": 0}, {"args": [1, 2], "returns": 2}]},
    {"id": "c", "entry_point": "f", "programs": ["def f(x):\n    return -x\n"],
     "tests": [{"args": [5], "returns": -5}]},
]  # fmt: skip


def test_problems_of_one_kind_share_one_pass_with_the_tables_of_one_run_each(tmp_path, monkeypatch):
    """One ``Sandbox.run`` per problem left workers idle whenever a problem had fewer programs
    than there are workers (one program per problem on 2 workers: 2.3x the time of the same
    cells in one run; on 16 cores, up to 16x).  Now the problems of one entry point (or of
    standard input) go through the workers in one pass; each table is the one a run of its
    own gives."""
    problems = load_problems(_write(tmp_path, MIXED))
    passes: list[int] = []
    execute = pool_module.LocalPool.execute_groups

    def counted(self, groups, entry):
        passes.append(sum(len(programs) for programs, _, _ in groups))
        return execute(self, groups, entry)

    monkeypatch.setattr(pool_module.LocalPool, "execute_groups", counted)
    with Sandbox(workers=2, timeout_s=2) as sb:
        res = run_problems(problems, sb)
        assert sorted(passes) == [3, 4, 7]  # g; standard input: s1 + s2; f: a + b + c
        for p, got in zip(problems, res.problems):
            alone = sb.run(list(p.programs), list(p.tests), entry_point=p.entry_point)
            assert [list(r) for r in got.status] == [
                [_status(s) for s in row] for row in alone.status.tolist()
            ], p.id
            assert got.output_hash == tuple(tuple(str(h) for h in r) for r in alone.output_hash)
            assert got.detail == tuple(tuple(str(d) for d in r) for r in alone.detail)
    by_id = {p.id: p for p in res.problems}
    assert by_id["a"].status[3] == ("SYNTAX",) * 3 and by_id["a"].status[2][0] == "ERROR"
    assert by_id["s1"].status[2] == ("CRASH", "CRASH") and by_id["b"].status[0][1] == "INVALID_TEST"


def test_a_program_cannot_answer_another_problems_tests(tmp_path):
    """In one pass every child holds the inputs of the pass: a program that writes records for
    the tests of the problem beside it (it knows their indices: the order of the file) is
    refused (the zygote takes only the next test of its own row), and that problem's honest
    program keeps its cells."""
    forger = (
        "import os\n"
        "def f(x):\n"
        "    for fd in range(3, 64):\n"
        "        for i in range(2, 6):\n"
        "            try:\n"
        '                os.write(fd, (\'[%d, "V", 0.001, 0.001, "99"]\\n\' % i).encode())\n'
        "            except OSError:\n"
        "                pass\n"
        "    return 0\n"
    )
    problems = [
        {"id": "attacker", "entry_point": "f", "programs": [forger],
         "tests": [{"args": [1], "returns": 1}, {"args": [2], "returns": 2}]},
        {"id": "victim", "entry_point": "f", "programs": ["def f(x):\n    return x + 1\n"],
         "tests": [{"args": [1], "returns": 2}, {"args": [2], "returns": 3},
                   {"args": [3], "returns": 99}, {"args": [4], "returns": 5}]},
    ]  # fmt: skip
    with Sandbox(workers=1, timeout_s=2) as sb:
        res = run_problems(load_problems(_write(tmp_path, problems)), sb)
    attacker, victim = res.problems
    assert "PASS" not in attacker.status[0]
    assert victim.status == (("PASS", "PASS", "FAIL", "PASS"),)


def test_stdio_and_call_problems_keep_file_order_in_the_json(tmp_path):
    problems = load_problems(_write(tmp_path, MIXED))
    with Sandbox(workers=2, timeout_s=2) as sb:
        first = run_problems(problems, sb).to_json()
        again = run_problems(list(reversed(problems)), sb)
    assert [p["id"] for p in json.loads(first)["problems"]] == [p["id"] for p in MIXED]
    assert [p.id for p in again.problems] == [p["id"] for p in reversed(MIXED)]


def test_run_many_takes_an_empty_list_and_a_problem_without_programs():
    with Sandbox(workers=1) as sb:
        assert sb.run_many([], entry_point="f") == []
        empty, one = sb.run_many(
            [([], [StdioTest("1\n", "1")]), (["print(input())"], [StdioTest("1\n", "1")])]
        )
    assert empty.shape == (0, 1) and one.passed.tolist() == [[True]]


# ----------------------------------------------------------------- --isolation basic
def test_the_basic_isolation_warning_names_the_callers_line():
    """It named ``_validation.py`` (the parameter checker's wrapper) for every caller."""
    with pytest.warns(SandboxWarning) as caught:
        Sandbox(isolation="basic", workers=1).close()
    assert caught[0].filename == __file__


def test_the_cli_says_basic_isolation_in_one_line(tmp_path, capsys):
    path = _write(tmp_path, [_one({"input": "(2,)", "expected": "2"})])
    code, out = _cli(tmp_path, path, "--isolation", "basic", "--workers", "1", "--json",
                     capsys=capsys)  # fmt: skip
    assert code == 0
    warned = [x for x in out.splitlines() if "warning" in x.lower()]
    assert len(warned) == 1 and warned[0].startswith("warning: Sandbox(isolation='basic')")
    assert "_validation" not in out and "return fn(" not in out


# ----------------------------------------------------------------- another problem's inputs
ENCODE = "def f(s):\n    return s[::-1].upper()\n"
PEEKER = (  # problem "decode": finds the inputs of "encode" and answers with them
    "import sys\n"
    "def f(s):\n"
    "    frame, seen = sys._getframe(1), []\n"
    "    while frame is not None:\n"
    "        for v in list(frame.f_locals.values()):\n"
    "            if type(v) is list and len(v) > 3:\n"
    "                seen.append(v)\n"
    "        frame = frame.f_back\n"
    "    for inputs in seen:\n"
    "        mine = [t for t in inputs if type(t) is tuple and t and t[0] == s]\n"
    "        if mine:\n"
    "            k = inputs.index(mine[0])\n"
    "            return inputs[k - 3][0]  # the encode problem's input of the same rank\n"
    "    return None\n"
)


def test_a_program_never_holds_the_inputs_of_another_problem_of_its_pass(tmp_path):
    """A pass once sent every worker the tests of all its problems, and each child held them
    (a local of the test loop): where one problem's inputs are another's answers (encode and
    decode, a problem and its inverse) a program read them and passed without solving.  Now
    a worker gets a problem's tests just before that problem's first program, so a child
    holds its own problem's inputs only."""
    words = ["abc", "hello", "rewardkit"]
    problems = [
        {"id": "encode", "entry_point": "f", "programs": [ENCODE],
         "tests": [{"args": [w], "returns": w[::-1].upper()} for w in words]},
        {"id": "decode", "entry_point": "f", "programs": [PEEKER],
         "tests": [{"args": [w[::-1].upper()], "returns": w} for w in words]},
    ]  # fmt: skip
    for workers in (1, 2):
        with Sandbox(workers=workers, timeout_s=2) as sb:
            res = run_problems(load_problems(_write(tmp_path, problems)), sb)
        encode, decode = res.problems
        assert encode.status == (("PASS",) * 3,)
        assert decode.status == (("FAIL",) * 3,), workers


# ----------------------------------------------------------------- JSON values and stdin tests
def test_json_values_too_large_for_a_test_are_refused_at_load(tmp_path):
    """{args, returns} past the sandbox's literal cap (1 MiB of text) became an INVALID_TEST
    column after the file had been accepted."""
    big = list(range(200_000))  # ~1.3 MB of literal text
    for test, field in (
        ({"args": [big], "returns": 0}, "tests[1].args"),
        ({"args": [1], "returns": big}, "tests[1].returns"),
    ):
        path = _write(tmp_path, [_one(test)])
        with pytest.raises(InputError, match="exceeds") as e:
            load_problems(path)
        assert f"line 1, field '{field}'" in str(e.value)


def test_from_values_refuses_an_int_too_long_to_print_as_a_config_error():
    """A raw ValueError (Python's 4,300-digit limit) escaped TestCase.from_values."""
    for args, expected in (([10**5000], 1), ([1], -(10**5000))):
        with pytest.raises(ConfigError, match="4300 digits"):
            TestCase.from_values(args, expected)


def test_an_apps_list_of_output_lines_says_how_to_give_it(tmp_path):
    problem = {"id": "s", "programs": ["print(1)\nprint(2)\n"],
               "tests": [{"stdin": "", "stdout": ["1", "2"]}]}  # fmt: skip
    with pytest.raises(InputError) as e:
        load_problems(_write(tmp_path, [problem]))
    message = str(e.value)
    assert "line 1, field 'tests[0].stdout'" in message and "join" in message


def test_a_key_error_at_import_is_named_as_such_not_as_a_missing_entry_point():
    """Any KeyError while the module ran (or while the class was looked up) was reported as
    "missing entry point f": a user read the wrong cause."""
    programs = [
        "d = {}\nd['x']\ndef f(x):\n    return x\n",
        "class M(type):\n    def __getattr__(cls, name):\n        raise KeyError(name)\n"
        "class Solution(metaclass=M):\n    pass\n",
        "def g(x):\n    return x\n",
    ]
    with Sandbox(workers=1) as sb:
        t = sb.run(programs, [TestCase("(1,)", "1")], entry_point="f")
    assert [_status(s) for s in t.status[:, 0]] == ["ERROR"] * 3
    assert list(t.detail[:, 0]) == [
        "KeyError",
        "KeyError",
        "missing entry point f (nor a method of class Solution)",
    ]


# ----------------------------------------------------------------- the four public formats
def test_rows_of_four_public_formats_convert_and_their_references_pass(tmp_path):
    """examples/sandbox_datasets.py, as a new user would write it from the docs: APPS (stdin
    with a list of output lines, call-based with wrapped answers), TACO (a Solution class),
    CodeContests (three test sets, Python 3 solutions and incorrect ones), LiveCodeBench
    (functional tests on starter code that never imports List, a stdin test)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "sandbox_datasets", Path(__file__).parents[2] / "examples" / "sandbox_datasets.py"
    )
    assert spec is not None and spec.loader is not None
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    path = tmp_path / "problems.jsonl"
    problems = ex.convert()
    ex.write(problems, path)
    with Sandbox(workers=2) as sb:
        first = run_problems(load_problems(path), sb)
        wrapped = {p.id: [f["test"] for f in p.reference_failures] for p in first.problems}
        assert {k: v for k, v in wrapped.items() if v} == {"apps-1": [0, 1]}
        ex.write(ex.unwrap_apps_answers(problems, path), path)
        final = run_problems(load_problems(path), sb)
    assert final.reference_failures == 0
    by_id = {p.id: p for p in final.problems}
    assert by_id["sum"].pass_fraction == (1.0, 1 / 3)  # print(0) passes "0 0 -> 0" only
    assert by_id["two-sum"].status == (("PASS", "PASS"), ("PASS", "FAIL"))


def test_many_problems_print_a_summary_not_a_row_each(tmp_path, capsys):
    """2,000 problems drew a 2,000-row table on the terminal (20,000 rows: 9 s of drawing)."""
    problems = [
        {"id": f"p{k}", "entry_point": "f", "programs": ["def f(x):\n    return x\n"],
         "tests": [{"args": [k], "returns": k if k % 10 else -1}],
         "reference": [0] if k < 30 else []}
        for k in range(60)
    ]  # fmt: skip
    code, out = _cli(tmp_path, _write(tmp_path, problems), "--workers", "2", capsys=capsys)
    assert code == 1
    lines = out.strip().splitlines()
    assert lines[0].endswith(
        "problems.jsonl: 60 problems, 60 programs, 60 cells; mean pass 0.90; references pass "
        "in 27 problems and fail in 3 (30 without); 0 with invalid tests; a row per problem in "
        "sandbox_run.json"
    )
    assert len(lines) == 2 + 3  # the summary, isolation, a line per reference failure
    assert lines[2] == "reference failure: problem 'p0', program 0, test 0: FAIL"


# ----------------------------------------------------------------- Solution classes, attacked
SOLUTIONS = {  # name: (program, statuses on f(1) == 2 and f(5) == 6)
    "plain": ("class Solution:\n    def f(self, x):\n        return x + 1\n", "PP"),
    "metaclass __call__ returns 42": (
        "class M(type):\n    def __call__(cls, *a):\n        return 42\n"
        "class Solution(metaclass=M):\n    def f(self, x):\n        return x + 1\n", "EE"),
    "metaclass __getattr__": (
        "class M(type):\n    def __getattr__(cls, n):\n        return lambda *a: 2\n"
        "class Solution(metaclass=M):\n    pass\n", "EE"),
    "instance __getattr__": (
        "class Solution:\n    def __getattr__(self, n):\n        return lambda x: x + 1\n", "EE"),
    "property named f": (
        "class Solution:\n    @property\n    def f(self):\n        return lambda x: x + 1\n", "EE"),
    "__init__ loops": (
        "class Solution:\n    def __init__(self):\n        while True: pass\n"
        "    def f(self, x):\n        return x + 1\n", "TT"),
    "__init__ exits": (
        "import sys\nclass Solution:\n    def __init__(self):\n        sys.exit(0)\n"
        "    def f(self, x):\n        return x + 1\n", "EE"),
    "__init__ os._exit": (
        "import os\nclass Solution:\n    def __init__(self):\n        os._exit(0)\n"
        "    def f(self, x):\n        return x + 1\n", "CC"),
    "staticmethod": (
        "class Solution:\n    @staticmethod\n    def f(x):\n        return x + 1\n", "PP"),
    "classmethod": (
        "class Solution:\n    @classmethod\n    def f(cls, x):\n        return x + 1\n", "PP"),
    "under __main__": (
        "if __name__ == '__main__':\n    class Solution:\n        def f(self, x):\n"
        "            return x + 1\n", "EE"),
    "under 'solution'": (
        "if __name__ == 'solution':\n    class Solution:\n        def f(self, x):\n"
        "            return x + 1\n", "PP"),
    "class state carries": (
        "class Solution:\n    calls = []\n    def f(self, x):\n        self.calls.append(x)\n"
        "        return x + len(self.calls)\n", "PF"),
    "instance state is fresh": (
        "class Solution:\n    def __init__(self):\n        self.n = 0\n    def f(self, x):\n"
        "        self.n += 1\n        return x + self.n\n", "PP"),
    "__new__ returns 5": (
        "class Solution:\n    def __new__(cls):\n        return 5\n    def f(self, x):\n"
        "        return x + 1\n", "EE"),
    "Solution is an instance": (
        "class _S:\n    def f(self, x):\n        return x + 1\nSolution = _S()\n", "EE"),
    "__init__ takes an argument": (
        "class Solution:\n    def __init__(self, k):\n        pass\n    def f(self, x):\n"
        "        return x + 1\n", "EE"),
    "top-level f wins": (
        "def f(x):\n    return x + 1\nclass Solution:\n    def f(self, x):\n        return 0\n",
        "PP"),
    "inherited f": (
        "class Base:\n    def f(self, x):\n        return x + 1\nclass Solution(Base):\n    pass\n",
        "PP"),
    "an always-equal answer": (
        "class E:\n    def __eq__(self, o):\n        return True\n"
        "class Solution:\n    def f(self, x):\n        return E()\n", "FF"),
    "an int subclass equal to all": (
        "class I(int):\n    def __eq__(self, o):\n        return True\n"
        "class Solution:\n    def f(self, x):\n        return I(0)\n", "FF"),
    "__getattribute__ refuses": (
        "class Solution:\n    def __getattribute__(self, n):\n        raise AttributeError(n)\n"
        "    def f(self, x):\n        return x + 1\n", "EE"),
}  # fmt: skip


def test_solution_classes_of_every_shape_earn_what_leetcode_would_give_them_or_less():
    """Each shape earns PASS only where LeetCode's ``Solution().f(...)`` gives the right
    answer; no shape passes a wrong answer; an __init__ that loops or exits costs its own
    tests only."""
    names = list(SOLUTIONS)
    with Sandbox(workers=2, timeout_s=0.5) as sb:
        t = sb.run(
            [SOLUTIONS[n][0] for n in names],
            [TestCase.from_values([1], 2), TestCase.from_values([5], 6)],
            entry_point="f",
        )
    got = {n: "".join(_status(s)[0] for s in row) for n, row in zip(names, t.status.tolist())}
    assert got == {n: SOLUTIONS[n][1] for n in names}, t.detail
