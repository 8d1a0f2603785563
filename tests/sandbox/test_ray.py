"""backend="ray" on a local Ray instance gives the same tables as the local backend."""

from __future__ import annotations

import numpy as np
import pytest

from rewardkit.errors import ConfigError
from rewardkit.sandbox import Sandbox, TestCase
from rewardkit.sandbox.bench import workload

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'rewardkit[ray]')")


def test_ray_needs_an_initialised_ray():
    if ray.is_initialized():
        pytest.skip("a Ray instance is already running in this process")
    with pytest.raises(ConfigError, match=r"Ray is not initialised. Call ray.init"):
        Sandbox(backend="ray").start()


@pytest.fixture(scope="module")
def local_ray():
    ray.init(
        address="local",  # a private instance, never a cluster left by another run here
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
    yield
    ray.shutdown()


@pytest.mark.slow
def test_ray_tables_equal_local_tables(local_ray):
    programs, tests, _ = workload(48, 12, n_looping=2)
    programs += [
        "def solve(xs, k)\n    return 0\n",
        "import os\ndef solve(xs, k):\n    os._exit(0)\n",
    ]
    tests += [TestCase("not a literal", "0")]
    with Sandbox(timeout_s=0.2, workers=2) as sb:
        local = sb.run(programs, tests, entry_point="solve")
    with Sandbox(timeout_s=0.2, backend="ray") as sb:
        remote = sb.run(programs, tests, entry_point="solve")
        again = sb.run(programs, tests, entry_point="solve")
        assert sb.isolation == local.isolation
    np.testing.assert_array_equal(remote.status, local.status)
    np.testing.assert_array_equal(remote.output_hash, local.output_hash)
    np.testing.assert_array_equal(remote.detail, local.detail)
    assert remote.digest == local.digest == again.digest
    assert remote.backend == "ray" and local.backend == "local"
