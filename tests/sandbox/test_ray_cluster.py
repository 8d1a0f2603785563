"""backend="ray" on a real multi-node cluster (``ray.cluster_utils.Cluster``, two nodes of one
CPU each): tables identical to the local backend, actors that ask only for what fits, a lost
node's programs re-run elsewhere, and a stalled actor given up at its batch deadline."""

from __future__ import annotations

import time

import numpy as np
import pytest

from rewardkit.sandbox import Sandbox, StdioTest, TestCase
from rewardkit.sandbox.bench import workload

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'rewardkit[ray]')")
from ray.cluster_utils import Cluster  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster():
    if ray.is_initialized():
        pytest.skip("a Ray instance is already running in this process")
    c = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False},
    )
    worker = c.add_node(num_cpus=1)
    ray.init(address=c.address, log_to_driver=False, configure_logging=False)
    c.wait_for_nodes()
    yield c, worker
    ray.shutdown()
    c.shutdown()


def _workload(n: int = 24):
    programs, tests, _ = workload(n, 8, n_looping=1)
    programs += [
        "def solve(xs, k)\n    return 0\n",
        "import os\ndef solve(xs, k):\n    os._exit(0)\n",
    ]
    return programs, [*tests, TestCase("not a literal", "0")]


def _same(a, b):
    np.testing.assert_array_equal(a.status, b.status)
    np.testing.assert_array_equal(a.output_hash, b.output_hash)
    np.testing.assert_array_equal(a.detail, b.detail)
    assert a.digest == b.digest


def test_a_node_without_a_free_cpu_is_skipped_not_waited_for(cluster):
    """Asking for every CPU of every node with hard affinity would wait forever here."""
    from ray._private.state import available_resources_per_node
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    head = ray.get_runtime_context().get_node_id()
    hold = (
        ray.remote(num_cpus=1)(_Holder)
        .options(scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=head, soft=False))
        .remote()
    )
    ray.get(hold.ready.remote(), timeout=60)
    deadline = time.monotonic() + 30
    while available_resources_per_node().get(head, {}).get("CPU", 0) >= 1:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    programs, tests = _workload()
    try:
        with Sandbox(timeout_s=0.3, workers=1) as sb:
            local = sb.run(programs, tests, entry_point="solve")
        with Sandbox(timeout_s=0.3, backend="ray") as sb:
            assert sb._ray.sizes == [1]  # only the free node
            _same(sb.run(programs, tests, entry_point="solve"), local)
    finally:
        ray.kill(hold)
        deadline = time.monotonic() + 60
        while available_resources_per_node().get(head, {}).get("CPU", 0) < 1:  # released
            assert time.monotonic() < deadline
            time.sleep(0.2)


class _Holder:
    def ready(self):
        return True


def _wait_until_an_actor_is_gone(actors, timeout_s: float = 60.0) -> None:
    """remove_node returns before the node's processes are gone; an actor still alive a moment
    later would finish its batch and nothing would be lost. Wait until Ray says one is dead."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for a in actors:
            try:  # a live actor answers, even on a busy machine; only Ray's word counts as dead
                ray.get(a.isolation.remote(), timeout=timeout_s)
            except ray.exceptions.RayActorError:
                return
        time.sleep(0.2)
    raise AssertionError(f"no actor died within {timeout_s:g} s of remove_node")


def test_two_nodes_give_the_local_table_then_survive_a_lost_node(cluster):
    c, worker = cluster
    # Enough programs for eight batches: both actors get work at once (two in flight each), so
    # the lost node's actor surely holds a batch whatever order the actors were listed in.
    programs, tests = _workload(200)
    stdio_progs = ["print(sum(map(int, input().split())))\n", "print(0)\n"]
    stdio_tests = [StdioTest("1 2\n", "3"), StdioTest("5 5\n", "10")]
    with Sandbox(timeout_s=0.3, workers=1) as sb:
        local = sb.run(programs, tests, entry_point="solve")
        local_io = sb.run(stdio_progs, stdio_tests)
    with Sandbox(timeout_s=0.3, workers=1, backend="ray") as sb:
        backend = sb._ray
        assert len(backend.actors) == 2 and backend.sizes == [1, 1]  # one CPU each: what fits
        _same(sb.run(programs, tests, entry_point="solve"), local)
        _same(sb.run(stdio_progs, stdio_tests), local_io)
        c.remove_node(worker)  # a node is lost: its actor dies with it
        try:
            _wait_until_an_actor_is_gone(backend.actors)
            _same(sb.run(programs, tests, entry_point="solve"), local)
            assert sum(a is not None for a in backend.actors) == 1
            assert any("failed" in why for why in backend.lost)
        finally:  # the cluster is shared by this file's tests, in any order: two nodes again
            c.add_node(num_cpus=1)
            c.wait_for_nodes()


def test_a_stalled_actor_is_given_up_and_its_batch_runs_elsewhere(cluster):
    programs, tests = _workload()
    with Sandbox(timeout_s=0.3, workers=1) as sb:
        local = sb.run(programs, tests, entry_point="solve")
    with Sandbox(timeout_s=0.3, workers=1, backend="ray") as sb:
        backend = sb._ray
        stuck = ray.remote(num_cpus=0)(_Stuck).remote()  # answers nothing, ever
        backend.actors.insert(0, stuck)  # first in line: it gets the first batches
        backend.sizes.insert(0, 1)
        backend.batch_timeout_s = 5.0
        _same(sb.run(programs, tests, entry_point="solve"), local)
        assert backend.actors[0] is None and "stalled" in backend.lost[-1]


class _Stuck:
    def execute(self, *args):
        import time

        time.sleep(3600)
