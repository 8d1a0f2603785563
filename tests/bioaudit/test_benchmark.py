"""The frozen benchmark: shapes, golden zero-diff, byte-identical regeneration, recall on
latent defects, mask reasons, spike-in numbers, and the calibration evidence."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr

from rewardkit.bioaudit import (
    INJECTION_CANDIDATES,
    PARADIGMS,
    Engine,
    generate,
    load_benchmark,
)
from rewardkit.bioaudit.demo import defect_recall
from rewardkit.errors import ConfigError, InputError
from rewardkit.levels import MASK_REASONS, Step, score_trajectory

BM = load_benchmark()
ENGINE = Engine()
DATA = Path(str(resources.files("rewardkit.bioaudit") / "data" / "v1.2.0"))


def test_shapes():
    assert BM.version == "v1.2.0"
    assert "synthetic benchmark" in BM.description
    assert len(BM.tasks) == 60
    assert {p: sum(t.paradigm == p for t in BM.tasks) for p in PARADIGMS} == dict.fromkeys(
        PARADIGMS, 20
    )
    assert len({t.task_id for t in BM.tasks}) == 60
    assert len(BM.legacy) == 20 and all(t.reviews is None for t in BM.legacy)
    assert len(BM.golden) == 20
    assert sum(len(g.decisions) for g in BM.golden) == 137
    assert sorted(BM.substrates) == ["deg_correct", "pan_correct", "scrna_correct"]
    for t in BM.tasks:
        assert 8 <= len(t.decisions) <= 16  # removed steps shorten a template
        assert t.n_gold_correct + t.n_gold_error + t.n_gold_edge == len(t.decisions)
        assert t.reviews is None or len(t.reviews) == len(t.decisions)
        assert all(d["context"]["paradigm"] == t.paradigm for d in t.decisions)
    assert set(BM.hashes) == {
        "tasks.jsonl",
        "legacy.jsonl",
        "golden.jsonl",
        "substrates.jsonl",
        "defects.jsonl",
    }
    assert all(h.startswith("sha256:") for h in BM.hashes.values())


def test_substrates_are_all_level_3():
    for name, decisions in BM.substrates.items():
        assert len(decisions) == 12
        assert ENGINE.levels(decisions) == (3,) * 12, name


def test_engine_reproduces_the_golden_file():
    for g in BM.golden:
        assert ENGINE.levels(g.decisions) == g.expected_levels, g.trajectory_id
    levels = {lv for g in BM.golden for lv in g.expected_levels}
    assert levels == {-1, 0, 1, 2, 3}  # every level occurs in the golden set
    actions = {d["action"] for g in BM.golden for d in g.decisions}
    assert "custom_script" in actions  # an unknown action (−1) is covered


def test_legacy_is_clean():
    for t in BM.legacy:
        assert set(ENGINE.levels(t.decisions)) == {3}


def test_regeneration_is_byte_identical(tmp_path):
    files = generate(out=tmp_path)
    for name, data in files.items():
        assert (DATA / name).read_bytes() == data, name
        assert (tmp_path / name).read_bytes() == data
    assert load_benchmark(tmp_path).hashes == BM.hashes


def test_another_seed_gives_another_benchmark():
    a = generate(7)["tasks.jsonl"]
    assert a != (DATA / "tasks.jsonl").read_bytes()
    assert generate(7)["tasks.jsonl"] == a


def test_bad_seed():
    with pytest.raises(ConfigError, match=r"The 'seed' parameter of generate must be"):
        generate(-1)


def test_edited_file_is_refused(tmp_path):
    shutil.copytree(DATA, tmp_path / "b")
    p = tmp_path / "b" / "tasks.jsonl"
    p.write_bytes(p.read_bytes().replace(b'"n_gold_error":0', b'"n_gold_error":1', 1))
    with pytest.raises(InputError, match=r"tasks\.jsonl: content hash sha256:\w+ differs"):
        load_benchmark(tmp_path / "b")
    with pytest.raises(InputError, match=r"unknown benchmark version 'v9'"):
        load_benchmark("v9")


def test_engine_recall_on_latent_defects_is_in_range():
    rec = defect_recall(BM, ENGINE)
    print(f"engine recall on latent defects: {rec}")
    assert 0.7 <= rec["recall"] <= 0.9
    assert rec["recall_visible"] == 1.0  # every visible defect is flagged, by construction
    assert rec["n_silent"] > 0


def _steps(t):
    levels = ENGINE.levels(t.decisions)
    return [Step(lv, None if t.reviews is None else t.reviews[i]) for i, lv in enumerate(levels)]


def test_every_mask_reason_occurs():
    reasons = set()
    for t in BM.tasks:
        r = score_trajectory(_steps(t), session=t.reviews is not None)
        reasons |= {m for m in r.mask_reasons if m is not None}
    assert reasons == set(MASK_REASONS)
    assert 0 < sum(t.reviews is not None for t in BM.tasks) < 60


def test_gold_is_not_a_function_of_the_levels():
    levels = {t.task_id: ENGINE.levels(t.decisions) for t in BM.tasks}
    # tasks the engine finds free of L0/L1 that gold marks wrong ...
    mild_but_wrong = [t for t in BM.tasks if min(levels[t.task_id]) >= 2 and t.n_gold_error]
    # ... and tasks with an L0 that gold passes
    l0_but_good = [t for t in BM.tasks if 0 in levels[t.task_id] and not t.n_gold_error]
    assert mild_but_wrong and l0_but_good
    # silent defects exist and the engine sees none of them
    silent = [d for d in BM.defects if d.kind == "silent"]
    assert silent
    lv = {
        t.task_id: dict(zip((d["decision_id"] for d in t.decisions), levels[t.task_id]))
        for t in BM.tasks
    }
    assert all(lv[d.task_id][d.decision_id] in (3, -1) for d in silent)


@pytest.mark.parametrize("paradigm", PARADIGMS)
def test_spike_in_with_recipe_b(paradigm):
    clean = list(BM.substrates[f"{paradigm}_correct"])
    for cand in INJECTION_CANDIDATES[paradigm]:
        injected = [*clean, cand]
        before = score_trajectory(ENGINE.levels(clean), recipe="B").value
        after = score_trajectory(ENGINE.levels(injected), recipe="B").value
        assert before == pytest.approx(0.85, abs=1e-12)
        assert after == pytest.approx(12 / 13 * 0.85 * 0.30, abs=1e-12)  # 0.235385
        assert before - after >= 0.30


def test_calibration_evidence_recipe_b_separates_more_than_a():
    """Seed 000 §7.2 shape: diff_B well above diff_A, both ρ moderate. Oracles: scipy's
    Spearman and plain numpy means (the bootstrap/permutation machinery is issue 4's)."""
    rows = []
    for t in BM.tasks:
        steps = _steps(t)
        a = score_trajectory(steps, recipe="A", session=t.reviews is not None).value
        b = score_trajectory(steps, recipe="B", session=t.reviews is not None).value
        q = t.gold_quality
        if a is not None and q is not None:
            rows.append((a, b, q, t.n_gold_error == 0))
    a, b, q, good = (np.array(c) for c in zip(*rows))
    diff_a = a[good].mean() - a[~good].mean()
    diff_b = b[good].mean() - b[~good].mean()
    rho_a, rho_b = spearmanr(a, q).statistic, spearmanr(b, q).statistic
    print(
        f"n={len(rows)} good={good.sum()} diff_A={diff_a:.3f} diff_B={diff_b:.3f} "
        f"rho_A={rho_a:.3f} rho_B={rho_b:.3f}"
    )
    assert 10 <= good.sum() <= 50
    assert diff_a > 0 and diff_b > diff_a + 0.1
    assert 0.4 <= rho_a <= 0.85 and 0.4 <= rho_b <= 0.85


def test_generation_does_not_depend_on_the_hash_seed():
    import os
    import subprocess
    import sys

    code = (
        "from rewardkit.bioaudit import generate; from rewardkit._json import content_hash;"
        "f = generate(); print(content_hash({k: content_hash(v) for k, v in f.items()}))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    from rewardkit._json import content_hash

    here = {name: content_hash((DATA / name).read_bytes()) for name in generate()}
    assert out.stdout.strip() == content_hash(here)
