"""``backend="ray"``: the same rows, run as batches by one actor per Ray node.

Each actor owns its node's zygote pool (a ``LocalPool``: one zygote per CPU it was granted,
started once, never forked from the Ray worker's large process) and returns raw cells; the
driver checks and compares them exactly as the local backend does, so both give identical
tables.  A Ray call costs 1–2.5 ms and ``ray.init`` seconds, so work travels in batches of rows
worth ≥ 50 ms.  Connects to the running Ray instance (call ``ray.init(...)`` first).

On a shared cluster nothing may wait forever:
- each actor asks for the CPUs its node has free now (at most ``workers``), never more, and an
  actor that is not ready within ``start_timeout_s`` is given up (its node is skipped);
- every batch has a deadline (its rows' worst case: each test's budget, its retry and the
  watchdog's grace, plus a slack); an actor past it is killed;
- a batch whose actor died (node lost, worker killed) or stalled runs again on another actor;
  only when no actor is left, or a batch failed ``MAX_ATTEMPTS`` times, does ``run`` raise.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from .._optional import require
from ..errors import ConfigError, RewardkitError
from ._pool import Cell, LocalPool

__all__ = ["RayBackend"]

MIN_BATCH_S = 0.05  # a batch must carry at least this much work to be worth a Ray call
EST_PROGRAM_S = 0.002  # one fork per program (measured: 1–2.5 ms)
EST_TEST_S = 0.0001
IN_FLIGHT = 2  # batches queued per actor
MAX_ATTEMPTS = 3  # a batch that failed this often is not the node's fault
SLACK_S = 60.0  # added to every batch deadline (a busy node, a Ray round trip)


class _NodeSandbox:
    """The actor body: this node's zygotes."""

    def __init__(
        self, timeout_s: float, memory_mb: int, workers: int, isolation: str, packages: tuple
    ) -> None:
        self.pool = LocalPool(timeout_s, memory_mb, workers, isolation, packages=packages)

    def isolation(self) -> tuple[str, ...]:
        return self.pool.isolation

    def execute(
        self, programs: list[str], rows: list[int], inputs: list[str | None], entry: str
    ) -> list[Cell]:
        return self.pool.execute(programs, rows, inputs, entry)

    def close(self) -> None:
        self.pool.close()


class RayBackend:
    def __init__(
        self,
        timeout_s: float,
        memory_mb: int,
        workers: int | None,
        isolation: str,
        *,
        packages: tuple[str, ...] = (),
        start_timeout_s: float = 120.0,
        batch_timeout_s: float | None = None,
    ) -> None:
        ray = require("ray", "ray", 'Sandbox(backend="ray")')
        if not ray.is_initialized():
            raise ConfigError(
                "The 'backend' parameter of Sandbox is 'ray' but Ray is not initialised. "
                "Call ray.init(...) first."
            )
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self.ray = ray
        self.timeout_s = timeout_s
        self.batch_timeout_s = batch_timeout_s
        self.lost: list[str] = []  # why actors were given up, for the error message
        actor_cls = ray.remote(_NodeSandbox)
        pending: list[tuple[Any, int, str]] = []
        for node_id, cpus in _fitting_cpus(ray, workers):
            strategy = NodeAffinitySchedulingStrategy(node_id=node_id, soft=False)
            actor = actor_cls.options(
                num_cpus=cpus, scheduling_strategy=strategy, max_restarts=0
            ).remote(timeout_s, memory_mb, cpus, isolation, packages)
            pending.append((actor, cpus, node_id))
        if not pending:
            raise RewardkitError(
                "Sandbox(backend='ray') found no alive Ray node with a free CPU "
                f"(ray.available_resources(): {ray.available_resources()})."
            )
        self.actors: list[Any] = []
        self.sizes: list[int] = []
        levels = self._start(pending, start_timeout_s)
        # Report only the levels every node has.
        self.isolation = tuple(lv for lv in levels[0] if all(lv in other for other in levels))

    def _start(self, pending: list[tuple[Any, int, str]], timeout_s: float) -> list[tuple]:
        refs = {a.isolation.remote(): (a, cpus, node) for a, cpus, node in pending}
        ready, late = self.ray.wait(list(refs), num_returns=len(refs), timeout=timeout_s)
        levels, errors = [], []
        for ref in late:
            actor, _, node = refs[ref]
            self.ray.kill(actor)
            self.lost.append(f"node {node[:12]}: not ready within {timeout_s:g} s")
        for ref in ready:
            actor, cpus, node = refs[ref]
            try:
                levels.append(tuple(self.ray.get(ref)))
            except self.ray.exceptions.RayError as e:
                errors.append(f"node {node[:12]}: {_cause(e)}")
                self.ray.kill(actor)
                continue
            self.actors.append(actor)
            self.sizes.append(cpus)
        if errors:  # a node that cannot confine refuses, as the local backend does
            self.close()
            raise RewardkitError("Sandbox(backend='ray') could not start: " + "; ".join(errors))
        if not self.actors:
            raise RewardkitError(
                "Sandbox(backend='ray') could not start an actor: " + "; ".join(self.lost)
            )
        return levels

    # ------------------------------------------------------------------------------ execute
    def execute(
        self, programs: Sequence[str], inputs: Sequence[str | None], entry: str
    ) -> list[Cell]:
        m, n_valid = len(programs), sum(t is not None for t in inputs)
        if m == 0 or n_valid == 0:
            return []
        per_program = EST_PROGRAM_S + n_valid * EST_TEST_S
        min_rows = math.ceil(MIN_BATCH_S / per_program)
        # Enough batches to keep every zygote busy, none smaller than MIN_BATCH_S of work.
        n_batches = max(1, min(math.ceil(m / min_rows), 4 * sum(self.sizes)))
        size = math.ceil(m / n_batches)
        queue = deque((list(range(s, min(m, s + size))), 0) for s in range(0, m, size))
        inputs = list(inputs)
        flying: dict[Any, tuple[int, list[int], int, float]] = {}  # ref → actor, rows, tries, end
        cells: list[Cell] = []
        while queue or flying:
            self._dispatch(queue, flying, programs, inputs, entry, n_valid)
            if not flying:
                raise RewardkitError(
                    "Sandbox(backend='ray') lost every actor: " + "; ".join(self.lost)
                )
            wait_s = max(0.0, min(end for *_, end in flying.values()) - time.monotonic())
            done, _ = self.ray.wait(list(flying), num_returns=1, timeout=min(wait_s, 5.0))
            for ref in done:
                k, rows, tries, _ = flying.pop(ref)
                try:
                    part = self.ray.get(ref)
                except self.ray.exceptions.RayError as e:
                    self._lose(k, f"actor {k} failed: {_cause(e)}", flying, queue)
                    queue.appendleft((rows, tries + 1))
                    continue
                cells.extend(tuple(c) for c in part)  # checked again by the comparer
            now = time.monotonic()
            for ref, (k, _rows, _tries, end) in list(flying.items()):
                if ref in flying and now > end:
                    self._lose(k, f"actor {k} stalled past a batch deadline", flying, queue)
        return sorted(cells, key=lambda c: (c[0], c[1]) if _ints(c) else (-1, -1))

    def _dispatch(
        self,
        queue: deque,
        flying: dict,
        programs: Sequence[str],
        inputs: list[str | None],
        entry: str,
        n_valid: int,
    ) -> None:
        busy = [0] * len(self.actors)
        for k, *_ in flying.values():
            busy[k] += 1
        for k, actor in enumerate(self.actors):
            while actor is not None and queue and busy[k] < IN_FLIGHT:
                rows, tries = queue.popleft()
                if tries >= MAX_ATTEMPTS:
                    raise RewardkitError(
                        f"Sandbox(backend='ray'): a batch of {len(rows)} programs failed "
                        f"{tries} times: " + "; ".join(self.lost[-tries:])
                    )
                ref = actor.execute.remote([programs[r] for r in rows], rows, inputs, entry)
                flying[ref] = (k, rows, tries, time.monotonic() + self._deadline(k, rows, n_valid))
                busy[k] += 1

    def _deadline(self, k: int, rows: list[int], n_valid: int) -> float:
        """Seconds a batch may take on actor ``k`` before the actor counts as stalled."""
        if self.batch_timeout_s is not None:
            return self.batch_timeout_s
        per_test = 2 * (self.timeout_s + 0.25 + 0.25 * self.timeout_s)  # budget + retry
        work = len(rows) * (n_valid * per_test + 1.0)
        return IN_FLIGHT * work / self.sizes[k] + SLACK_S

    def _lose(self, k: int, why: str, flying: dict, queue: deque) -> None:
        """Give up actor ``k``: kill it, and queue every batch it holds for another actor."""
        actor = self.actors[k]
        if actor is None:
            return
        self.lost.append(why)
        self.actors[k] = None
        self.ray.kill(actor)
        for ref, (j, rows, tries, _) in list(flying.items()):
            if j == k:
                del flying[ref]
                queue.appendleft((rows, tries + 1))

    def close(self) -> None:
        live = [a for a in self.actors if a is not None]
        try:
            self.ray.get([a.close.remote() for a in live], timeout=30)
        except Exception:  # a dead or stuck actor: killing it below stops its zygotes
            pass
        finally:
            for a in live:
                self.ray.kill(a)
            self.actors = []


def _fitting_cpus(ray: Any, workers: int | None) -> list[tuple[str, int]]:
    """(node id, CPUs to ask for) per alive node: what it has free now, at most ``workers``."""
    try:
        from ray._private.state import available_resources_per_node

        free = available_resources_per_node()
    except Exception:  # the private helper moved: fall back to the totals
        free = {}
    out = []
    for node in sorted(ray.nodes(), key=lambda n: n["NodeID"]):
        total = int(node["Resources"].get("CPU", 0))
        if not node.get("Alive") or total < 1:
            continue
        # Ray leaves a fully used resource out of a node's entry: absent there means 0.
        node_free = free.get(node["NodeID"])
        avail = total if node_free is None else int(node_free.get("CPU", 0))
        cpus = min(workers or total, total, avail)
        if cpus >= 1:
            out.append((node["NodeID"], cpus))
    return out


def _cause(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[-1][:200] if text else ''}"


def _ints(c: tuple) -> bool:
    return len(c) >= 2 and type(c[0]) is int and type(c[1]) is int
