"""The frozen probe pool P0 and the detection rate D_s read on it (seed 003, FROST).

    >>> from rewardkit.selfplay.bank import load_bank
    >>> from rewardkit.selfplay.probes import build_probe_pool, detection_rate
    >>> bank = load_bank()
    >>> p0 = build_probe_pool(bank, rng=0)          # same seed → byte-identical pool
    >>> task = bank.task("remove_all")
    >>> suite = [t for t in task.gt_tests if "9)" in t.input]   # a test where v is absent
    >>> detection_rate(p0, {"remove_all": suite}).per_family["aliasing"] < 1.0
    True

P0 is built once, at "step 0", from the bank: per task, the hand-written bugs, AST mutants of
the reference interleaved across the families, and samples of the initial coder policy
(:func:`bank.initial_policy`), ``size`` members per task. It is content-hashed, saved as JSON
and never updated (the ruler that does not move). Its labels y come from the GT tests.

D_s (seed 003, FROST step 2) = the share of P0 members with y < 1 that at least one selected
test rejects, overall and per family; ``undisputed_only`` counts only members whose GT label
is not disputed (``Probe.disputed``: GT passes them but held-out inputs do not, or a user's own
mark). The per-test d_j is the share of those members test j alone rejects.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._json import JsonMixin, canonical_json, content_hash, write_atomic
from .._rng import as_generator
from .._validation import Interval, validate_params
from ..errors import ConfigError, InputError
from .bank import TaskBank, initial_policy
from .executor import Executor, TestCase, owned_executor
from .mutations import FAMILIES

__all__ = [
    "DetectionRate",
    "Probe",
    "ProbePool",
    "build_probe_pool",
    "detection_from_table",
    "detection_rate",
]

POOL_VERSION = "p0-v1"


@dataclass(frozen=True)
class Probe(JsonMixin):
    task_id: str
    entry_point: str
    name: str  # the bank candidate it is
    family: str  # a mutation family, "initial_policy", or the family of a hand-written bug
    source: str
    y: float  # fraction of GT tests passed
    disputed: bool = False


@dataclass(frozen=True)
class ProbePool(JsonMixin):
    version: str
    seed: int
    size_per_task: int
    probes: tuple[Probe, ...]

    @property
    def content_hash(self) -> str:
        return content_hash([p.to_dict() for p in self.probes])

    def for_task(self, task_id: str) -> tuple[Probe, ...]:
        return tuple(p for p in self.probes if p.task_id == task_id)

    @property
    def task_ids(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p.task_id for p in self.probes))

    def save(self, path: str | Path) -> str:
        """Write the pool (with its hash) atomically; return the hash."""
        doc = {**self.to_dict(), "content_hash": self.content_hash}
        write_atomic(path, canonical_json(doc, indent=1) + "\n")
        return self.content_hash

    @classmethod
    def load(cls, path: str | Path) -> ProbePool:
        """Read a saved pool and verify its content hash (a frozen pool must not drift)."""
        p = Path(path)
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
            pool = cls(
                doc["version"],
                doc["seed"],
                doc["size_per_task"],
                tuple(Probe(**q) for q in doc["probes"]),
            )
        except FileNotFoundError:
            raise InputError("no such file", path=str(p)) from None
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(f"not a saved probe pool ({exc})", path=str(p)) from None
        if pool.content_hash != doc.get("content_hash"):
            raise InputError(
                f"content hash {pool.content_hash} does not match the recorded "
                f"{doc.get('content_hash')}: the frozen pool was modified",
                path=str(p),
                field="content_hash",
            )
        return pool


@validate_params(
    {"rng": ["rng"], "size": [Interval(int, 2, 10_000)], "n_initial": [Interval(int, 0, 10_000)]}
)
def build_probe_pool(bank: TaskBank, *, rng: Any, size: int = 12, n_initial: int = 4) -> ProbePool:
    """P0: ``size`` probes per task — hand-written bugs, mutants round-robin over families,
    and at least ``n_initial`` samples of the initial coder policy (more when mutants run out)."""
    func = "build_probe_pool"
    if n_initial >= size:
        raise ConfigError(
            f"The 'n_initial' parameter of {func} must be smaller than size={size}. "
            f"Got {n_initial}."
        )
    gen = as_generator(rng, func)
    seed = int(gen.integers(0, 2**31 - 1))
    probes: list[Probe] = []
    for ti, task in enumerate(bank.tasks):
        task_rng = np.random.default_rng([seed, ti])
        buggy = [c for c in task.candidates if c.y < 1.0]
        hand = [c for c in buggy if c.handwritten]
        by_family = {f: [c for c in buggy if c.family == f and not c.handwritten] for f in FAMILIES}
        chosen = hand[: size - n_initial]  # a bank file may hand-write more bugs than slots
        while len(chosen) < size - n_initial and any(by_family.values()):
            for f in FAMILIES:
                if by_family[f] and len(chosen) < size - n_initial:
                    chosen.append(by_family[f].pop(0))
        members = [(c, c.family) for c in chosen]
        pi = initial_policy(task)
        draws = task_rng.choice(len(task.candidates), size=size - len(members), p=pi)
        members += [(task.candidates[int(i)], "initial_policy") for i in draws]
        for c, fam in members:
            probes.append(
                Probe(
                    task.task_id,
                    task.entry_point,
                    c.name,
                    fam,
                    c.source,
                    c.y,
                    disputed=bool(c.y == 1.0 and c.y_heldout < 1.0),
                )
            )
    return ProbePool(POOL_VERSION, seed, size, tuple(probes))


@dataclass(frozen=True)
class DetectionRate(JsonMixin):
    """D_s overall and per family; per_test[task] = d_j for each selected test of that task."""

    overall: float | None  # None when no member is counted
    per_family: dict[str, float | None]
    n_counted: int
    n_detected: int
    per_test: dict[str, tuple[float, ...]]


def detection_from_table(
    passed: np.ndarray, y: np.ndarray, *, disputed: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """From an (n, k) pass matrix of P0 members × selected tests: (counted (n,) bool,
    detected (n,) bool, d (k,) per-test detection)."""
    counted = np.asarray(y) < 1.0
    if disputed is not None:
        counted &= ~np.asarray(disputed, bool)
    rejected = ~np.asarray(passed, bool) & counted[:, None]
    detected = np.asarray(rejected.any(axis=1))
    d = rejected.sum(axis=0) / max(int(counted.sum()), 1)
    return counted, detected, d


def detection_rate(
    pool: ProbePool,
    selected: Mapping[str, Sequence[TestCase]],
    *,
    executor: Executor | None = None,
    undisputed_only: bool = False,
) -> DetectionRate:
    """Run each task's P0 members on its selected tests and read D_s off the result."""
    unknown = set(selected) - set(pool.task_ids)
    if unknown:
        raise ConfigError(
            f"The 'selected' parameter of detection_rate names tasks not in the pool: "
            f"{sorted(unknown)}."
        )
    fam_counted: dict[str, int] = {}
    fam_detected: dict[str, int] = {}
    per_test: dict[str, tuple[float, ...]] = {}
    n_c = n_d = 0
    with owned_executor(executor) as ex:
        for task_id, tests in selected.items():
            members = pool.for_task(task_id)
            if tests:
                res = ex.run(
                    [p.source for p in members], list(tests), entry_point=members[0].entry_point
                )
                passed = res.passed
            else:
                passed = np.ones((len(members), 0), bool)
            y = np.array([p.y for p in members])
            disp = np.array([p.disputed for p in members]) if undisputed_only else None
            counted, detected, d = detection_from_table(passed, y, disputed=disp)
            per_test[task_id] = tuple(float(v) for v in d)
            n_c += int(counted.sum())
            n_d += int(detected.sum())
            for p, c, det in zip(members, counted, detected):
                if c:
                    fam_counted[p.family] = fam_counted.get(p.family, 0) + 1
                    fam_detected[p.family] = fam_detected.get(p.family, 0) + int(det)
    per_family = {
        f: (fam_detected[f] / fam_counted[f]) if fam_counted.get(f) else None
        for f in sorted(fam_counted)
    }
    return DetectionRate(n_d / n_c if n_c else None, per_family, n_c, n_d, per_test)
