"""Code execution for generated programs and tests (SPEC §7): fast, safe execution tables.

    from rewardkit.sandbox import Sandbox, TestCase, Status, graded_correctness

    with Sandbox(timeout_s=2.0, memory_mb=512) as sb:
        table = sb.run(programs, tests, entry_point="solve")
    y = graded_correctness(table, gt_columns=[0, 1, 2])

    sb.run(programs, [StdioTest(stdin="1 2\n", stdout="3\n")])       # programs as scripts
    sb.run(programs, parse_asserts(test_code, "f"), entry_point="f")  # assert-style tests

See docs/sandbox.md for the design, the isolation levels and the measured speed.
"""

from __future__ import annotations

from .cases import InvalidTest, StdioTest, TestCase, parse_asserts
from .core import Sandbox, SandboxWarning
from .table import ExecutionTable, Status, graded_correctness

__all__ = [
    "ExecutionTable",
    "InvalidTest",
    "Sandbox",
    "SandboxWarning",
    "Status",
    "StdioTest",
    "TestCase",
    "graded_correctness",
    "parse_asserts",
]
