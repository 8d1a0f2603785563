"""The data file's generator specs against the bank's former Python generators (lambdas), for
every shipped task: same values, same rng state after, for any seed."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardkit.selfplay._bank_tasks import DEFINITIONS
from rewardkit.selfplay.bankfile import read_bank_file

TASKS = read_bank_file().tasks


def test_same_tasks_same_order_same_programs():
    assert [t.task_id for t in TASKS] == [d["task_id"] for d in DEFINITIONS]
    for t, d in zip(TASKS, DEFINITIONS, strict=True):
        assert t.prompt == d["prompt"] and t.reference == d["reference"]
        assert t.boundary == d["boundary"] and t.gt_inputs == d["gt_inputs"]
        assert t.variants == d["variants"]
        assert tuple((b.name, b.family, b.source) for b in t.bugs) == d["extra"]


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(TASKS) - 1), st.integers(0, 2**64 - 1), st.integers(1, 60))
def test_specs_draw_what_the_lambdas_drew(i, seed, n):
    r1, r2 = np.random.default_rng(seed), np.random.default_rng(seed)
    for _ in range(n):
        assert repr(TASKS[i].draw(r1)) == repr(tuple(DEFINITIONS[i]["gen"](r2)))
    assert r1.bit_generator.state == r2.bit_generator.state


def test_every_task_over_many_seeds():
    for t, d in zip(TASKS, DEFINITIONS, strict=True):
        for seed in range(30):
            r1, r2 = np.random.default_rng([seed, 3]), np.random.default_rng([seed, 3])
            a = [repr(t.draw(r1)) for _ in range(100)]
            assert a == [repr(tuple(d["gen"](r2))) for _ in range(100)], t.task_id
            assert r1.bit_generator.state == r2.bit_generator.state
