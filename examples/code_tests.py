"""The sandbox's three test formats: function calls, parsed assert-style test code (HumanEval
style) and standard-input programs (APPS / CodeContests style).

    python examples/code_tests.py
"""

from rewardkit.sandbox import Sandbox, Status, StdioTest, TestCase, parse_asserts

TEST_CODE = """
def check(candidate):
    assert candidate([1, 2, 3]) == 6
    assert candidate([]) == 0
    assert candidate([-1, 1]) == 0, "cancels out"
    for n in range(3):          # not a literal case: an INVALID_TEST column, with the reason
        assert candidate([n]) == n
"""
SOLUTIONS = {
    "correct": "def total(xs):\n    return sum(xs)\n",
    "off by one": "def total(xs):\n    return sum(xs[1:])\n",
    "returns a float": "def total(xs):\n    return float(sum(xs))\n",  # 6.0 is not the int 6
}
SCRIPTS = {
    "correct": "n = int(input())\nprint(sum(map(int, input().split())) / n)\n",
    "rounds": "n = int(input())\nprint(round(sum(map(int, input().split())) / n, 2))\n",
}
MEANS = [StdioTest("3\n1 2 4\n", "2.3333333\n", mode="float"), StdioTest("2\n1 2\n", "1.5\n")]


def show(names, table):
    for name, row in zip(names, table.status):
        print(f"  {name:16} " + " ".join(Status(s).name for s in row))


tests = [TestCase("([10, 20],)", "30"), *parse_asserts(TEST_CODE, "total")]
with Sandbox(timeout_s=1.0, memory_mb=256) as sb:
    calls = sb.run(list(SOLUTIONS.values()), tests, entry_point="total")
    scripts = sb.run(list(SCRIPTS.values()), MEANS)
print("function calls and parsed asserts:")
show(SOLUTIONS, calls)
print(f"  column {len(tests) - 1}: {calls.detail[0, -1]}")
print("standard input (float mode, tolerance 1e-6):")
show(SCRIPTS, scripts)
