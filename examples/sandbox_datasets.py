"""Rows of APPS, TACO, CodeContests and LiveCodeBench, as their public files store them,
converted to the JSONL of ``rewardkit sandbox run`` (docs/sandbox.md, "Your own problems") and
run, reference solutions checked.  APPS wraps some call-based answers in a one-element list:
a first pass finds them (the reference failure says so) and unwraps those tests.

    python examples/sandbox_datasets.py
"""

import base64
import json
import pickle
import tempfile
import zlib
from pathlib import Path

from rewardkit.cli import main
from rewardkit.sandbox import Sandbox
from rewardkit.sandbox.dataset import load_problems, run_problems


def from_apps(row, pid):
    """APPS and TACO: ``input_output`` and ``solutions`` are JSON strings."""
    io, solutions = json.loads(row["input_output"]), json.loads(row["solutions"])
    problem = {"id": pid, "programs": solutions, "reference": list(range(len(solutions)))}
    pairs = zip(io["inputs"], io["outputs"])
    if "fn_name" in io:  # call-based: each input is the argument list
        problem["entry_point"] = io["fn_name"]
        problem["tests"] = [{"args": a, "returns": o} for a, o in pairs]
    else:  # some rows store an output as a list of lines
        join = "\n".join
        problem["tests"] = [
            {"stdin": join(a) if isinstance(a, list) else a,
             "stdout": join(o) if isinstance(o, list) else o} for a, o in pairs
        ]  # fmt: skip
    return problem


def from_codecontests(row):
    """CodeContests: public, private and generated tests; language 3 is Python 3."""
    tests = [{"stdin": i, "stdout": o, "mode": "float"}
             for part in ("public_tests", "private_tests", "generated_tests")
             for i, o in zip(row[part]["input"], row[part]["output"])]  # fmt: skip

    def python3(field):
        return [s for lang, s in zip(row[field]["language"], row[field]["solution"]) if lang == 3]

    good, bad = python3("solutions"), python3("incorrect_solutions")
    return {"id": row["name"], "programs": good + bad, "tests": tests,
            "reference": list(range(len(good)))}  # fmt: skip


def from_livecodebench(row, programs):
    """LiveCodeBench: public tests as JSON, private ones compressed; functional tests hold
    one JSON value per line of ``input``.  It ships no solutions: ``programs`` are yours."""
    private = json.loads(pickle.loads(zlib.decompress(base64.b64decode(row["private_test_cases"]))))
    tests = json.loads(row["public_test_cases"]) + private
    problem = {"id": row["question_id"], "programs": programs}
    name = json.loads(row["metadata"]).get("func_name")
    if name:
        problem["entry_point"] = name
        problem["tests"] = [
            {"args": [json.loads(v) for v in t["input"].splitlines()],
             "returns": json.loads(t["output"])} for t in tests
        ]  # fmt: skip
    else:
        problem["tests"] = [{"stdin": t["input"], "stdout": t["output"]} for t in tests]
    return problem


def _packed(tests):  # how LiveCodeBench stores private tests
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests)))).decode()


APPS = [
    {"input_output": json.dumps({"inputs": ["8\n", "5\n"], "outputs": ["YES\n", "NO\n"]}),
     "solutions": json.dumps(["w = int(input())\nprint('YES' if w > 2 and w % 2 == 0 "
                              "else 'NO')\n"])},
    {"input_output": json.dumps({"fn_name": "add", "inputs": [[1, 2], [10, -3]],
                                 "outputs": [[3], [7]]}),  # wrapped answers
     "solutions": json.dumps(["def add(a, b):\n    return a + b\n"])},
    {"input_output": json.dumps({"inputs": ["2\n"], "outputs": [["1", "2"]]}),
     "solutions": json.dumps(["for i in range(int(input())):\n    print(i + 1)\n"])},
]  # fmt: skip
TACO = [
    {"input_output": json.dumps({"fn_name": "findMax", "inputs": [[[1, 5, 3], 3]],
                                 "outputs": [5]}),
     "solutions": json.dumps(["class Solution:\n    def findMax(self, arr, n):\n"
                              "        return max(arr)\n"])},
]  # fmt: skip
CODECONTESTS = [
    {"name": "sum", "public_tests": {"input": ["3 4\n"], "output": ["7\n"]},
     "private_tests": {"input": ["1 1\n"], "output": ["2\n"]},
     "generated_tests": {"input": ["0 0\n"], "output": ["0\n"]},
     "solutions": {"language": [3, 2], "solution": ["print(sum(map(int, input().split())))\n",
                                                    "int main() {}"]},
     "incorrect_solutions": {"language": [3], "solution": ["print(0)\n"]}},
]  # fmt: skip
LIVECODEBENCH = [
    ({"question_id": "two-sum", "metadata": json.dumps({"func_name": "twoSum"}),
      "public_test_cases": json.dumps([{"input": "[2,7,11,15]\n9", "output": "[0, 1]",
                                        "testtype": "functional"}]),
      "private_test_cases": _packed([{"input": "[3,2,4]\n6", "output": "[1, 2]",
                                      "testtype": "functional"}])},
     # the starter code's List[int], as a model completes it (no import: the judge gives it)
     ["class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n"
      "        seen = {}\n        for i, x in enumerate(nums):\n"
      "            if target - x in seen:\n                return [seen[target - x], i]\n"
      "            seen[x] = i\n",
      "class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n"
      "        return [0, 1]\n"]),
    ({"question_id": "abc300_a", "metadata": "{}",
      "public_test_cases": json.dumps([{"input": "3 1 2\n", "output": "3\n", "testtype": "stdin"}]),
      "private_test_cases": _packed([])},
     ["print(max(map(int, input().split())))\n"]),
]  # fmt: skip


def convert():
    problems = [from_apps(r, f"apps-{k}") for k, r in enumerate(APPS)]
    problems += [from_apps(r, f"taco-{k}") for k, r in enumerate(TACO)]
    problems += [from_codecontests(r) for r in CODECONTESTS]
    problems += [dict(from_livecodebench(r, progs), reference=[0]) for r, progs in LIVECODEBENCH]
    return problems


def unwrap_apps_answers(problems, path):
    """A first pass: where a reference returned exactly the element of a one-element expected
    list, the test is APPS's wrapped form: give the element."""
    with Sandbox(workers=1) as sb:
        result = run_problems(load_problems(path), sb)
    for problem, res in zip(problems, result.problems):
        for f in res.reference_failures:
            if "APPS wraps" in f["detail"]:
                problem["tests"][f["test"]]["returns"] = problem["tests"][f["test"]]["returns"][0]
    return problems


def write(problems, path):
    path.write_text("".join(json.dumps(p) + "\n" for p in problems), encoding="utf-8")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "problems.jsonl"
        problems = convert()
        write(problems, path)
        write(unwrap_apps_answers(problems, path), path)
        code = main(["sandbox", "run", str(path), "--out", str(Path(tmp) / "out")])
        result = json.loads((Path(tmp) / "out" / "sandbox_run.json").read_text())
        for p in result["problems"]:
            print(
                p["id"],
                p["pass_fraction"],
                "reference ok" if not p["reference_failures"] else p["reference_failures"],
            )
        print("exit status", code)
        raise SystemExit(code)
