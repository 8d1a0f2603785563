"""Shared fixtures: the embedded bank, built once per session through the default executor
(the sandbox when it is installed)."""

from __future__ import annotations

import pytest

from rewardkit.selfplay.bank import load_bank
from rewardkit.selfplay.probes import build_probe_pool


@pytest.fixture(scope="session")
def bank():
    return load_bank()


@pytest.fixture(scope="session")
def pool(bank):
    return build_probe_pool(bank, rng=0)
