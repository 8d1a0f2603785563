"""The task bank's data file (TOML): read it, check every field, return its task definitions.

    >>> from rewardkit.selfplay.bankfile import SHIPPED_BANK, read_bank_file
    >>> bank_file = read_bank_file(SHIPPED_BANK)
    >>> bank_file.version, len(bank_file.tasks), bank_file.tasks[0].task_id
    ('selfplay-bank-v1', 34, 'remove_all')

A file holds ``version = "..."`` and one ``[[task]]`` table per task, in order (task i draws
its inputs from ``numpy.random.default_rng([seed, i])``)::

    [[task]]
    id = "remove_all"                      # also the name of the function
    prompt = "Return (xs without any v, how many were removed); do not modify xs."
    args = [{ kind = "list", len = [1, 7], of = { kind = "int", lo = 0, hi = 6 } },
            { kind = "int", lo = 0, hi = 6 }]     # one generator spec per argument (inputgen)
    boundary = ["([], 1)", "([1], 1)"]     # argument-tuple literals, the first GT tests
    gt_inputs = [...]                      # optional: all 8 GT inputs, fixed by hand
    reference = '''
    def remove_all(xs, v): ...
    '''
    variants = ['''...''']                 # optional: other correct solutions
    [[task.bug]]                           # optional: hand-written bugs, any number
    name = "e4_aliasing"
    family = "aliasing"                    # one of the mutation families
    source = '''...'''

Every bad entry raises :class:`~rewardkit.errors.InputError` naming the file, the line of its
``[[task]]`` header, the field, the task and what is accepted. Programs are checked for syntax
and for defining the task's function here; whether the reference passes its own tests is
checked when the bank is built (``bank.load_bank``).
"""

from __future__ import annotations

import ast
import hashlib
import keyword
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._io import read_toml
from ..errors import InputError
from .inputgen import Spec, draw_args, parse_args
from .mutations import FAMILIES

__all__ = ["N_GT", "SHIPPED_BANK", "BankFile", "HandwrittenBug", "TaskDefinition", "read_bank_file"]

SHIPPED_BANK = Path(__file__).with_name("data") / "bank-v1.toml"
N_GT = 8  # GT tests per task: the boundary inputs first, then generated ones
MAX_TEXT = 100_000  # characters of one program or argument literal (parsing holds ~50x)
TASK_KEYS = ("id", "prompt", "args", "boundary", "gt_inputs", "reference", "variants", "bug")
BUG_KEYS = ("name", "family", "source")


@dataclass(frozen=True)
class HandwrittenBug:
    name: str
    family: str  # one of mutations.FAMILIES
    source: str


@dataclass(frozen=True)
class TaskDefinition:
    """One task as written in the data file (programs normalised: stripped, one final
    newline)."""

    task_id: str
    prompt: str
    args: tuple[Spec, ...]
    boundary: tuple[str, ...]
    gt_inputs: tuple[str, ...] | None
    reference: str
    variants: tuple[str, ...]
    bugs: tuple[HandwrittenBug, ...]
    line: int | None = None  # of the task's [[task]] header in its file

    def draw(self, rng: np.random.Generator) -> tuple[Any, ...]:
        """One random argument tuple from the task's generator specs."""
        return draw_args(self.args, rng)


@dataclass(frozen=True)
class BankFile:
    path: str
    version: str
    sha256: str  # of the file's bytes
    tasks: tuple[TaskDefinition, ...]


class _Where:
    """Builds errors that name the file, the task's line, the field and the task."""

    def __init__(self, path: str, line: int | None, task: str | None) -> None:
        self.path, self.line, self.task = path, line, task

    def __call__(self, field: str, message: str) -> InputError:
        prefix = f"in task {self.task!r}: " if self.task else ""
        return InputError(prefix + message, path=self.path, line=self.line, field=field)


def read_bank_file(path: str | Path = SHIPPED_BANK) -> BankFile:
    """Read and check a bank data file (the shipped one by default)."""
    doc = read_toml(path)
    p = str(path)
    text = Path(path).read_bytes()
    headers = _task_headers(text.decode(errors="replace"))
    top = _Where(p, None, None)
    unknown = sorted(set(doc) - {"version", "task"})
    if unknown:
        raise top(unknown[0], "unknown top-level key; a bank file holds 'version' and [[task]]")
    version = doc.get("version")
    if not isinstance(version, str) or not version.strip():
        raise top("version", f"expected a non-empty string; got {version!r:.60}")
    tables = doc.get("task")
    if not isinstance(tables, list) or not tables:
        raise top("task", "expected one or more [[task]] tables")
    if len(headers) != len(tables):  # tasks written as an inline array: no line to name
        headers = [None] * len(tables)
    tasks: list[TaskDefinition] = []
    seen: dict[str, int | None] = {}
    for i, table in enumerate(tables):
        line = headers[i]
        task = _read_task(table, _Where(p, line, None), i)
        if task.task_id in seen:
            first = seen[task.task_id]
            raise _Where(p, line, task.task_id)(
                "id",
                f"a second task with this id{'' if first is None else f' (line {first})'}; "
                "ids are unique",
            )
        seen[task.task_id] = line
        tasks.append(task)
    return BankFile(p, version, hashlib.sha256(text).hexdigest(), tuple(tasks))


_HEADER = re.compile(r"[ \t]*\[\[[ \t]*task[ \t]*\]\][ \t]*(#.*)?")
_MULTILINE = re.compile(r"\"\"\"|'''")


def _task_headers(text: str) -> list[int | None]:
    """The line of each ``[[task]]`` header (TOML allows ``[[ task ]]``), not counting lines
    inside multi-line strings (a program may hold the text ``[[task]]``)."""
    out: list[int | None] = []
    inside: str | None = None  # the delimiter of the multi-line string we are in
    for number, ln in enumerate(text.splitlines(), 1):
        if inside is None and _HEADER.fullmatch(ln):
            out.append(number)
        for m in _MULTILINE.finditer(ln):
            if inside is None:
                inside = m.group()
            elif m.group() == inside:
                inside = None
    return out


def _read_task(table: Any, where: _Where, index: int) -> TaskDefinition:
    if not isinstance(table, dict):
        raise where(f"task[{index}]", "expected a [[task]] table")
    tid = table.get("id")
    if not isinstance(tid, str) or not tid.isidentifier() or keyword.iskeyword(tid):
        raise where(
            "id", f"expected the task's function name (a Python identifier); got {tid!r:.60}"
        )
    where.task = tid
    unknown = sorted(set(table) - set(TASK_KEYS))
    if unknown:
        raise where(unknown[0], f"unknown field; a task has {', '.join(TASK_KEYS)}")
    for name in ("prompt", "args", "boundary", "reference"):
        if name not in table:
            raise where(name, "missing; a task needs id, prompt, args, boundary and reference")
    prompt = table["prompt"]
    if not isinstance(prompt, str) or not prompt.strip():
        raise where("prompt", f"expected a non-empty string; got {prompt!r:.60}")
    args = parse_args(table["args"], field="args", fail=where)
    boundary = _literals(table["boundary"], "boundary", len(args), where, max_n=N_GT)
    gt = table.get("gt_inputs")
    gt_inputs = None if gt is None else _literals(gt, "gt_inputs", len(args), where, exact=N_GT)
    reference = _program(table["reference"], "reference", tid, where)
    variants = table.get("variants", [])
    if not isinstance(variants, list):
        raise where("variants", f"expected an array of programs; got {variants!r:.60}")
    bugs = table.get("bug", [])
    if not isinstance(bugs, list):
        raise where("bug", "expected [[task.bug]] tables")
    return TaskDefinition(
        task_id=tid,
        prompt=prompt,
        args=args,
        boundary=boundary,
        gt_inputs=gt_inputs,
        reference=reference,
        variants=tuple(_program(v, f"variants[{j}]", tid, where) for j, v in enumerate(variants)),
        bugs=_bugs(bugs, tid, where),
        line=where.line,
    )


def _program(source: Any, field: str, entry: str, where: _Where) -> str:
    accepted = f"Python source defining def {entry}(...)"
    if not isinstance(source, str):
        raise where(field, f"expected {accepted}; got {source!r:.60}")
    if len(source) > MAX_TEXT:
        raise where(field, f"{len(source):,} characters; a program has at most {MAX_TEXT:,}")
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        msg = f"not valid Python (line {exc.lineno}: {exc.msg}); expected {accepted}"
        raise where(field, msg) from None
    if not any(isinstance(n, ast.FunctionDef) and n.name == entry for n in tree.body):
        raise where(field, f"does not define the task's function; expected {accepted}")
    return source.strip() + "\n"


def _literals(
    obj: Any,
    field: str,
    arity: int,
    where: _Where,
    *,
    max_n: int | None = None,
    exact: int | None = None,
) -> tuple[str, ...]:
    """Argument-tuple literals: strings that ``ast.literal_eval`` reads as a tuple of ``arity``
    values, distinct."""
    count = f"exactly {exact}" if exact is not None else f"at most {max_n}"
    accepted = f'an array of {count} distinct argument-tuple literals such as "([1, 2], 3)"'
    if not isinstance(obj, list) or not all(isinstance(s, str) for s in obj):
        raise where(field, f"expected {accepted}; got {obj!r:.60}")
    if (exact is not None and len(obj) != exact) or (max_n is not None and len(obj) > max_n):
        raise where(field, f"{len(obj)} inputs; expected {accepted}")
    for j, s in enumerate(obj):
        if len(s) > MAX_TEXT:
            msg = f"{len(s):,} characters; an input literal has at most {MAX_TEXT:,}"
            raise where(f"{field}[{j}]", msg)
        try:
            value = ast.literal_eval(s)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            msg = f"not a Python literal: {s!r:.60}; expected {accepted}"
            raise where(f"{field}[{j}]", msg) from None
        if not isinstance(value, tuple) or len(value) != arity:
            raise where(
                f"{field}[{j}]",
                f"{s!r:.60} is not a tuple of {arity} argument(s) (one per args spec; a single "
                'argument is written "(x,)")',
            )
    if len(set(obj)) != len(obj):
        raise where(field, f"repeats an input; expected {accepted}")
    return tuple(obj)


def _bugs(tables: Sequence[Any], entry: str, where: _Where) -> tuple[HandwrittenBug, ...]:
    out: list[HandwrittenBug] = []
    for j, b in enumerate(tables):
        field = f"bug[{j}]"
        if not isinstance(b, dict):
            raise where(field, "expected a [[task.bug]] table with name, family and source")
        unknown = sorted(set(b) - set(BUG_KEYS))
        missing = [k for k in BUG_KEYS if k not in b]
        if unknown or missing:
            what = f"unknown field {unknown[0]!r}" if unknown else f"missing {missing[0]!r}"
            raise where(
                f"{field}.{(unknown or missing)[0]}", f"{what}; a bug has name, family, source"
            )
        name = b["name"]
        if (
            not isinstance(name, str)
            or not re.fullmatch(r"[A-Za-z0-9_.-]+", name)
            or name == "reference"
            or re.fullmatch(r"variant\d+", name)
        ):
            raise where(
                f"{field}.name",
                f"expected a name of letters, digits, '_', '.', '-' other than 'reference' and "
                f"'variant<N>'; got {name!r:.60}",
            )
        if name in {x.name for x in out}:
            raise where(f"{field}.name", f"a second bug named {name!r} (names are unique)")
        if b["family"] not in FAMILIES:
            raise where(
                f"{field}.family", f"expected one of {', '.join(FAMILIES)}; got {b['family']!r:.60}"
            )
        out.append(
            HandwrittenBug(
                name, b["family"], _program(b["source"], f"{field}.source", entry, where)
            )
        )
    return tuple(out)
