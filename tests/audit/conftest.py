"""Puts the fakes module on sys.path (and so on the fresh process's PYTHONPATH)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import audit_fakes


@pytest.fixture
def fakes():
    return {
        "tasks": audit_fakes.make_tasks(),
        "judge": audit_fakes.FakeJudge(),
        "judge_factory": ("audit_fakes:fake_judge", {}),
        "substrates": audit_fakes.SUBSTRATES,
        "candidates": audit_fakes.CANDIDATES,
        "golden": [
            audit_fakes.FakeGolden(
                "g1",
                (audit_fakes.dec("ok", 0), audit_fakes.dec("bad", 1), audit_fakes.dec("x", 2)),
                (3, 0, -1),
            ),
            audit_fakes.FakeGolden("g2", (audit_fakes.dec("meh", 0),), (1,)),
        ],
    }
