"""The task bank: 34 small Python functions for offline self-play (seed 003), read from the
package data file ``data/bank-v1.toml`` (format: ``bankfile``; input generators: ``inputgen``).

    >>> from rewardkit.selfplay.bank import load_bank
    >>> bank = load_bank()
    >>> len(bank.tasks), len(bank.tasks[0].gt_tests)
    (34, 8)
    >>> e4 = bank.task("remove_all").candidate("e4_aliasing")
    >>> e4.y                       # CoVer E.4: rebinding instead of copying fails 4 of 8 GT tests
    0.5

Each task has a reference solution (sometimes a correct variant), 8 GT tests (boundary inputs
first, then inputs from the task's random generator; expected values are the reference's
outputs), 16 held-out tests (for the "benchmark" pass@1 of the simulation), a pool of random
valid inputs, and candidate programs: the reference, the variants, hand-written buggy programs
(the aliasing example of CoVer appendix E.4) and AST mutants of the reference in five families.
A mutant that agrees with the reference on every GT test is discarded and counted (those that
still differ on held-out inputs are counted apart: GT-silent bugs).

Expected values are computed by running the bank's own reference in this process (the
shipped file is our code; a user's file passed as ``path`` must be code they trust; in the main
thread each call has a ``REFERENCE_TIMEOUT_S`` budget and its prints go to stderr);
candidates are graded through the executor given (the sandbox by default).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._json import JsonMixin, content_hash
from .._validation import SEED, validate_params
from ..errors import ConfigError, InputError
from .bankfile import N_GT, SHIPPED_BANK, BankFile, TaskDefinition, read_bank_file
from .executor import (
    Executor,
    TestCase,
    _time_limit,
    _Timeout,
    default_executor_name,
    owned_executor,
)
from .mutations import FAMILIES, mutate

__all__ = ["BANK_VERSION", "Candidate", "CodeTask", "TaskBank", "initial_policy", "load_bank"]

BANK_VERSION = "selfplay-bank-v1"  # the shipped data file's version (data/bank-v1.toml)
N_HELDOUT = 16
N_RANDOM_POOL = 16
MAX_MUTANTS = 12
# A bank file's reference runs in this process; in the main thread each call has this budget
# (a reference that loops is reported, not waited on forever).
REFERENCE_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Candidate(JsonMixin):
    name: str  # "reference", "variant0", "e4_aliasing", "aliasing/copy_to_alias/0", …
    family: str  # "correct" or a mutation family (hand-written bugs carry theirs)
    source: str
    y: float  # fraction of the 8 GT tests passed (graded correctness)
    y_heldout: float  # fraction of the 16 held-out tests passed
    handwritten: bool = False  # a known bug written by hand (CoVer E.4), not a mutant


@dataclass(frozen=True)
class CodeTask(JsonMixin):
    task_id: str
    entry_point: str
    prompt: str
    reference: str
    gt_tests: tuple[TestCase, ...]
    heldout_tests: tuple[TestCase, ...]
    boundary_inputs: tuple[str, ...]
    random_inputs: tuple[str, ...]  # i.i.d. draws of the input generator (repeats possible)
    candidates: tuple[Candidate, ...]
    n_mutants_discarded: int  # agree with the reference on all 8 GT tests
    n_gt_silent: int  # of those, how many still differ on a held-out input

    def candidate(self, name: str) -> Candidate:
        for c in self.candidates:
            if c.name == name:
                return c
        raise ConfigError(
            f"The 'name' parameter of CodeTask.candidate must be one of "
            f"{[c.name for c in self.candidates]}. Got {name!r}."
        )

    def expected(self, input_literal: str) -> str:
        """The reference's output on an argument-tuple literal, as a literal."""
        return repr(call(self.reference, self.entry_point, input_literal))


@dataclass(frozen=True)
class TaskBank(JsonMixin):
    version: str
    tasks: tuple[CodeTask, ...]
    executor: str

    def task(self, task_id: str) -> CodeTask:
        for t in self.tasks:
            if t.task_id == task_id:
                return t
        raise ConfigError(
            f"The 'task_id' parameter of TaskBank.task must be one of "
            f"{[t.task_id for t in self.tasks]}. Got {task_id!r}."
        )

    @property
    def content_hash(self) -> str:
        return content_hash(self.to_dict())


@functools.lru_cache(maxsize=256)
def _compiled(source: str, entry_point: str) -> Any:
    ns: dict[str, Any] = {}
    exec(compile(source, "<bank>", "exec"), ns)
    return ns[entry_point]


def call(source: str, entry_point: str, input_literal: str) -> Any:
    """Run one of the bank's own programs in this process (trusted code only); what it prints
    goes to stderr (stdout may carry ``--json``)."""
    with contextlib.redirect_stdout(sys.stderr):
        return _compiled(source, entry_point)(*ast.literal_eval(input_literal))


def _draw_inputs(
    d: TaskDefinition, rng: np.random.Generator, n: int, exclude: set[str]
) -> list[str]:
    """``n`` distinct argument literals from the task's generator not in ``exclude`` (bounded
    tries)."""
    out: list[str] = []
    for _ in range(50 * n):
        lit = repr(d.draw(rng))
        if lit not in exclude:
            exclude.add(lit)
            out.append(lit)
            if len(out) == n:
                break
    return out


def _pick_mutants(source: str) -> list[tuple[str, str, str]]:
    """(name, family, source) of the mutants, interleaved across families for variety."""
    by_family: dict[str, list[tuple[str, str, str]]] = {f: [] for f in FAMILIES}
    for mu in mutate(source):
        by_family[mu.family].append((f"{mu.family}/{mu.operator}/{mu.site}", mu.family, mu.source))
    out = []
    while any(by_family.values()):
        for f in FAMILIES:
            if by_family[f]:
                out.append(by_family[f].pop(0))
    return out


def _build_task(
    index: int, d: TaskDefinition, executor: Executor, seed: int, path: str
) -> CodeTask:
    def bad(field: str, message: str) -> InputError:
        return InputError(f"in task {d.task_id!r}: {message}", path=path, line=d.line, field=field)

    rng = np.random.default_rng([seed, index])
    entry = d.task_id
    boundary = d.boundary
    seen = set(boundary)
    if d.gt_inputs is not None:
        gt_inputs = list(d.gt_inputs)
        seen.update(gt_inputs)
    else:
        gt_inputs = [*boundary, *_draw_inputs(d, rng, N_GT - len(boundary), seen)]
    seen_fixed = gt_inputs if d.gt_inputs is not None else boundary
    heldout_inputs = _draw_inputs(d, rng, N_HELDOUT, seen)
    random_inputs = tuple(repr(d.draw(rng)) for _ in range(N_RANDOM_POOL))
    if len(gt_inputs) != N_GT or len(heldout_inputs) != N_HELDOUT:
        got = len(gt_inputs) - len(seen_fixed) + len(heldout_inputs)
        need = N_GT - len(seen_fixed) + N_HELDOUT
        raise bad(
            "args",
            f"the generator gave {got} distinct inputs besides the fixed ones; the task needs "
            f"{need} (its GT tests after the fixed inputs, and {N_HELDOUT} held-out): widen the "
            "generator's ranges",
        )
    ref = d.reference

    def expected(i: str) -> str:
        field = "boundary" if i in boundary else "gt_inputs" if i in fixed else "args"
        try:
            with _time_limit(REFERENCE_TIMEOUT_S):
                return repr(call(ref, entry, i))
        except _Timeout:
            msg = f"the reference ran past {REFERENCE_TIMEOUT_S:g} s on the input {i:.100}"
            raise bad(field, msg) from None
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # the file's reference is wrong (sys.exit too): report it
            msg = f"the reference raised {type(exc).__name__}: {exc!s:.100} on the input {i:.100}"
            raise bad(field, msg) from None

    def tests(inputs: Sequence[str]) -> tuple[TestCase, ...]:
        return tuple(TestCase(i, expected(i)) for i in inputs)

    fixed = set(d.gt_inputs or ())
    gt, held = tests(gt_inputs), tests(heldout_inputs)
    pool = [("reference", "correct", ref)]
    pool += [(f"variant{i}", "correct", v) for i, v in enumerate(d.variants)]
    pool += [(b.name, b.family, b.source) for b in d.bugs]
    mutants = _pick_mutants(ref)
    res = executor.run(
        [p[2] for p in pool] + [mu[2] for mu in mutants], [*gt, *held], entry_point=entry
    )
    y = res.passed[:, :N_GT].mean(axis=1)
    y_held = res.passed[:, N_GT:].mean(axis=1)
    for i, (name, _, _) in enumerate(pool):
        if name.startswith(("reference", "variant")) and not res.passed[i].all():
            failed = int((~res.passed[i]).sum())
            field = "reference" if name == "reference" else f"variants[{name[len('variant') :]}]"
            raise bad(
                field,
                f"a correct program fails {failed} of its task's {N_GT + N_HELDOUT} tests (its "
                "outputs must equal the reference's: deterministic Python literals)",
            )
    kept: list[tuple[int, tuple[str, str, str]]] = []
    discarded = silent = 0
    for i, mu in enumerate(mutants, start=len(pool)):
        if y[i] == 1.0:
            discarded += 1
            silent += int(y_held[i] < 1.0)
        elif len(kept) < MAX_MUTANTS:
            kept.append((i, mu))
    names = {b.name for b in d.bugs}
    candidates = [
        Candidate(n, f, s, float(y[i]), float(y_held[i]), n in names)
        for i, (n, f, s) in enumerate(pool)
    ]
    candidates += [Candidate(n, f, s, float(y[i]), float(y_held[i])) for i, (n, f, s) in kept]
    return CodeTask(
        task_id=entry,
        entry_point=entry,
        prompt=d.prompt,
        reference=ref,
        gt_tests=gt,
        heldout_tests=held,
        boundary_inputs=boundary,
        random_inputs=random_inputs,
        candidates=tuple(candidates),
        n_mutants_discarded=discarded,
        n_gt_silent=silent,
    )


INITIAL_CORRECT_MASS = 0.15


def initial_policy(task: CodeTask) -> np.ndarray:
    """The coder's step-0 policy over ``task.candidates`` (probabilities): 15 % of the mass on
    the correct programs, the rest spread evenly over the buggy ones (or uniform if there are
    none). Used by the simulation and for the initial-policy samples of P0."""
    correct = np.array([c.y == 1.0 and c.family == "correct" for c in task.candidates])
    n_ok, n_bad = int(correct.sum()), int((~correct).sum())
    if n_bad == 0:
        return np.full(len(correct), 1.0 / len(correct))
    return np.where(correct, INITIAL_CORRECT_MASS / n_ok, (1.0 - INITIAL_CORRECT_MASS) / n_bad)


_CACHE: dict[tuple[int, str, tuple[str, ...], str], TaskBank] = {}


@functools.lru_cache(maxsize=1)
def _shipped() -> BankFile:
    return read_bank_file(SHIPPED_BANK)


@validate_params({"seed": [SEED]})
def load_bank(
    *,
    executor: Executor | None = None,
    seed: int = 0,
    task_ids: Sequence[str] | None = None,
    path: str | Path | None = None,
) -> TaskBank:
    """Build (once per process, seed, executor kind, task subset and file) the bank, or the
    subset ``task_ids`` of it: the shipped bank (``data/bank-v1.toml``), or the bank data file
    at ``path`` (format: ``bankfile``; its programs run in this process to compute expected
    values, so it must be code you trust). Deterministic in ``seed``: a task is built the same
    way whether or not it is part of a subset."""
    source = _shipped() if path is None else read_bank_file(path)
    known = [d.task_id for d in source.tasks]
    wanted = tuple(known) if task_ids is None else tuple(task_ids)
    bad = [t for t in wanted if t not in known]
    if bad or not wanted:
        raise ConfigError(
            f"The 'task_ids' parameter of load_bank must name tasks of the bank ({known}). "
            f"Got {list(task_ids or [])!r}."
        )
    name = executor.name if executor is not None else f"cached({default_executor_name()})"
    key = (seed, name, wanted, source.sha256)
    if key not in _CACHE:
        with owned_executor(executor) as ex:
            tasks = tuple(
                _build_task(i, d, ex, seed, source.path)
                for i, d in enumerate(source.tasks)
                if d.task_id in wanted
            )
        _CACHE[key] = TaskBank(source.version, tasks, name)
    return _CACHE[key]
