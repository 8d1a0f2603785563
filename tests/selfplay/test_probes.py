"""The frozen probe pool P0 and the detection rate."""

from __future__ import annotations

import json

import pytest

from rewardkit.errors import ConfigError, InputError
from rewardkit.selfplay.executor import TestCase, owned_executor
from rewardkit.selfplay.probes import ProbePool, build_probe_pool, detection_rate


def test_pool_is_frozen_and_byte_identical_per_seed(bank, pool, tmp_path):
    again = build_probe_pool(bank, rng=0)
    assert again.to_json() == pool.to_json() and again.content_hash == pool.content_hash
    assert build_probe_pool(bank, rng=1).content_hash != pool.content_hash
    assert len(pool.probes) == pool.size_per_task * len(bank.tasks)
    h = pool.save(tmp_path / "p0.json")
    b1 = (tmp_path / "p0.json").read_bytes()
    build_probe_pool(bank, rng=0).save(tmp_path / "p0b.json")
    assert (tmp_path / "p0b.json").read_bytes() == b1
    loaded = ProbePool.load(tmp_path / "p0.json")
    assert loaded == pool and loaded.content_hash == h


def test_tampered_pool_is_refused(pool, tmp_path):
    path = tmp_path / "p0.json"
    pool.save(path)
    doc = json.loads(path.read_text())
    doc["probes"][0]["y"] = 0.0 if doc["probes"][0]["y"] else 1.0
    path.write_text(json.dumps(doc))
    with pytest.raises(
        InputError, match=r"field 'content_hash': content hash .* the frozen pool was modified"
    ):
        ProbePool.load(path)
    with pytest.raises(InputError, match="no such file"):
        ProbePool.load(tmp_path / "missing.json")


def test_families_and_members(bank, pool):
    fams = {p.family for p in pool.probes}
    assert {"aliasing", "boundary", "reorder", "off_by_one", "comparison", "initial_policy"} <= fams
    e4 = [p for p in pool.for_task("remove_all") if p.name == "e4_aliasing"]
    assert len(e4) >= 1 and e4[0].family == "aliasing" and e4[0].y == 0.5


def test_e4_modal_suite_misses_the_aliasing_bug(bank, pool):
    task = bank.task("remove_all")
    modal = [
        t
        for t in task.gt_tests
        if t.input in ("([1, 2, 3], 9)", "([5, 6], 1)", "([8, 8], 3)", "([], 3)")
    ]
    assert len(modal) == 4
    d = detection_rate(pool, {"remove_all": modal})
    assert d.per_family["aliasing"] < 1.0
    sensitive = [*modal, TestCase("([4, 4, 5], 4)", task.expected("([4, 4, 5], 4)"))]
    d2 = detection_rate(pool, {"remove_all": sensitive})
    assert d2.per_family["aliasing"] == 1.0
    assert d2.overall >= d.overall
    assert len(d2.per_test["remove_all"]) == 5


def test_full_gt_detects_every_buggy_member(bank, pool):
    gt = {t.task_id: t.gt_tests for t in bank.tasks}
    with owned_executor(None) as ex:
        d = detection_rate(pool, gt, executor=ex)
        assert d.overall == 1.0  # y < 1 means some GT test rejects it
        empty = detection_rate(pool, {t.task_id: [] for t in bank.tasks}, executor=ex)
        assert empty.overall == 0.0 and empty.n_counted == d.n_counted
        und = detection_rate(pool, gt, executor=ex, undisputed_only=True)
        assert und.n_counted <= d.n_counted


def test_unknown_task_is_refused(pool):
    with pytest.raises(ConfigError, match="names tasks not in the pool: \\['nope'\\]"):
        detection_rate(pool, {"nope": []})


def test_bad_pool_sizes(bank):
    with pytest.raises(
        ConfigError, match="'n_initial' parameter of build_probe_pool must be smaller"
    ):
        build_probe_pool(bank, rng=0, size=4, n_initial=4)
