"""``backend="ray"``: the same rows, run as batches by one actor per Ray node.

Each actor owns its node's zygote pool (a ``LocalPool``: one zygote per core, started once, never
forked from the Ray worker's large process) and returns raw cells; the driver compares them with
the expected values exactly as the local backend does, so both give identical tables.  A Ray
call costs 1–2.5 ms and ``ray.init`` seconds, so work travels in batches of rows worth ≥ 50 ms.
Connects to the running Ray instance (call ``ray.init(...)`` first).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .._optional import require
from ..errors import ConfigError
from ._pool import Cell, LocalPool

__all__ = ["RayBackend"]

MIN_BATCH_S = 0.05  # a batch must carry at least this much work to be worth a Ray call
EST_PROGRAM_S = 0.002  # one fork per program (measured: 1–2.5 ms)
EST_TEST_S = 0.0001


class _NodeSandbox:
    """The actor body: this node's zygotes."""

    def __init__(self, timeout_s: float, memory_mb: int, workers: int, isolation: str) -> None:
        self.pool = LocalPool(timeout_s, memory_mb, workers, isolation)

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
        self, timeout_s: float, memory_mb: int, workers: int | None, isolation: str
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
        nodes = [n for n in ray.nodes() if n.get("Alive") and n["Resources"].get("CPU", 0) >= 1]
        actor_cls = ray.remote(_NodeSandbox)
        self.actors: list[Any] = []
        for node in sorted(nodes, key=lambda n: n["NodeID"]):
            cpus = int(node["Resources"]["CPU"])
            n = workers or cpus
            strategy = NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=False)
            self.actors.append(
                actor_cls.options(num_cpus=min(n, cpus), scheduling_strategy=strategy).remote(
                    timeout_s, memory_mb, n, isolation
                )
            )
        self.sizes = [workers or int(n["Resources"]["CPU"]) for n in nodes]
        levels = ray.get([a.isolation.remote() for a in self.actors])
        # Report only the levels every node has.
        self.isolation = tuple(lv for lv in levels[0] if all(lv in other for other in levels))

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
        futures = []
        for b, start in enumerate(range(0, m, size)):
            rows = list(range(start, min(m, start + size)))
            actor = self.actors[b % len(self.actors)]
            futures.append(
                actor.execute.remote([programs[r] for r in rows], rows, list(inputs), entry)
            )
        cells: list[Cell] = []
        for part in self.ray.get(futures):
            cells.extend(tuple(c) for c in part)
        return sorted(cells)

    def close(self) -> None:
        try:
            self.ray.get([a.close.remote() for a in self.actors])
        finally:
            for a in self.actors:
                self.ray.kill(a)
            self.actors = []
