"""calibrate on the user's own data: every statistic equals its scipy / sklearn oracle."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rewardkit.audit.agreement import calibrate_rewards
from rewardkit.audit.data import read_items, read_rewards

scipy_stats = pytest.importorskip("scipy.stats")
B = 400


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _data(tmp_path, *, probability=False, n=40, seed=3):
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 4, n).astype(float)  # a numeric gold score 0..3
    if probability:
        gold = (gold >= 2).astype(float)
    noise = rng.normal(0, 0.8, n)
    reward = gold + noise
    if probability:
        reward = 1 / (1 + np.exp(-(2 * gold - 1 + noise)))
    items = [
        {
            "id": f"i{k}",
            "gold": bool(g) if probability else g,
            "stratum": "ab"[k % 2],
            "group": f"g{k // 4}",
            "x": k,
        }
        for k, g in enumerate(gold)
    ]
    recs = [
        {"id": f"i{k}", "reward": None if k == 5 else float(r), "part": float(r) * 2}
        for k, r in enumerate(reward)
    ]
    recs.append({"id": "stray", "reward": 1.0})
    return (
        read_items(_write(tmp_path / "gold.jsonl", items), require_gold=True),
        read_rewards(_write(tmp_path / "rewards.jsonl", recs))[0],
        gold,
        reward,
    )


def _spearman(x, y, axis=-1):
    return scipy_stats.spearmanr(x, y, axis=axis).statistic


def test_rank_agreement_and_stratified_test_equal_scipy(tmp_path):
    items, recs, gold, reward = _data(tmp_path)
    cal = calibrate_rewards(items, recs, n_resamples=B, seeds=(42, 7))
    keep = np.arange(len(gold)) != 5  # the null reward is excluded
    x, y = reward[keep], gold[keep]
    boot = scipy_stats.bootstrap(
        (x, y),
        lambda a, b: scipy_stats.spearmanr(a, b).statistic,
        paired=True,
        vectorized=False,
        method="percentile",
        n_resamples=B,
        rng=np.random.default_rng(42),
    )
    ci = cal.rank_agreement.spearman.confidence_interval
    assert (ci.low, ci.high) == pytest.approx(
        (boot.confidence_interval.low, boot.confidence_interval.high), abs=1e-12
    )
    assert cal.rank_agreement.kendall_tau_b.value == pytest.approx(
        scipy_stats.kendalltau(x, y).statistic, abs=1e-12
    )
    # good = the highest gold value (3.0) by default
    good, bad = x[y >= 3.0], x[y < 3.0]
    perm = scipy_stats.permutation_test(
        (good, bad),
        lambda a, b, axis=-1: np.mean(a, axis=axis) - np.mean(b, axis=axis),
        permutation_type="independent",
        alternative="two-sided",
        n_resamples=B,
        vectorized=True,
        rng=np.random.default_rng(42),
    )
    assert cal.stratified.pvalue == pytest.approx(perm.pvalue, abs=1e-12)
    assert cal.stratified.diff == pytest.approx(good.mean() - bad.mean())
    assert cal.data["n_reward_none"] == 1 and cal.data["n_rewards_without_item"] == 1
    # the component column gets its own rank agreement (scored where the total is null too)
    assert cal.components["part"].spearman.value == pytest.approx(
        scipy_stats.spearmanr(reward * 2, gold).statistic, abs=1e-12
    )
    # per stratum: the items of that stratum only
    s_a = next(s for s in cal.strata if s.stratum == "a")
    idx = [k for k in range(len(gold)) if k % 2 == 0 and k != 5]
    assert s_a.rank_agreement.spearman.value == pytest.approx(
        scipy_stats.spearmanr(reward[idx], gold[idx]).statistic
    )
    # good vs bad inside the stratum, against scipy too
    xs, ys = reward[idx], gold[idx]
    perm_a = scipy_stats.permutation_test(
        (xs[ys >= 3.0], xs[ys < 3.0]),
        lambda a, b, axis=-1: np.mean(a, axis=axis) - np.mean(b, axis=axis),
        permutation_type="independent",
        alternative="two-sided",
        n_resamples=B,
        vectorized=True,
        rng=np.random.default_rng(42),
    )
    assert s_a.stratified.pvalue == pytest.approx(perm_a.pvalue, abs=1e-12)
    assert "good − bad, p" in cal.table()
    assert cal.probability is None and "not probabilities" in cal.probability_note


def test_good_min_moves_the_split(tmp_path):
    items, recs, gold, _ = _data(tmp_path)
    cal = calibrate_rewards(items, recs, n_resamples=B, seeds=(42,), good_min=2.0)
    keep = np.arange(len(gold)) != 5
    assert cal.stratified.n_good == int(np.sum(gold[keep] >= 2))
    assert "gold ≥ 2 (--good-min)" in cal.table()


def test_probability_reward_gets_ece_and_reliability(tmp_path):
    sk = pytest.importorskip("sklearn.metrics")
    pytest.importorskip("matplotlib", reason="the reliability diagram needs the [report] extra")
    items, recs, gold, reward = _data(tmp_path, probability=True)
    cal = calibrate_rewards(items, recs, n_resamples=B, seeds=(42,), out=tmp_path / "o", plots=True)
    keep = np.arange(len(gold)) != 5
    assert cal.probability is not None
    png = (tmp_path / "o" / "calibration-reliability.png").read_bytes()
    assert png[:4] == b"\x89PNG"
    assert cal.probability.brier == pytest.approx(sk.brier_score_loss(gold[keep], reward[keep]))
    assert "Reliability diagram" in cal.table() and "ECE" in cal.table()


def test_report_speaks_of_the_users_files_and_preregisters_first(tmp_path):
    items, recs, _, _ = _data(tmp_path)
    out = tmp_path / "out"
    cal = calibrate_rewards(
        items,
        recs,
        n_resamples=B,
        seeds=(42,),
        names={"rewards": "rewards.jsonl", "gold": "gold.jsonl"},
        out=out,
    )
    text = (out / "calibration.md").read_text()
    assert "rewards.jsonl against gold.jsonl" in text
    assert "synthetic" not in text.lower() and "benchmark" not in text.lower()
    prereg = json.loads((out / "preregistration.json").read_text())
    assert cal.preregistration_hash and prereg["n_resamples"] == B
    assert cal.groups is not None and cal.groups.n_pairs > 0


def test_too_few_good_items_is_reported_not_run(tmp_path):
    items = read_items(
        _write(tmp_path / "g.jsonl", [{"id": str(k), "gold": k == 0} for k in range(6)])
    )
    recs, _ = read_rewards(
        _write(tmp_path / "r.jsonl", [{"id": str(k), "reward": k / 6} for k in range(6)])
    )
    cal = calibrate_rewards(items, recs, n_resamples=50, seeds=(1,))
    assert cal.stratified is None and cal.stratified_note.startswith("not run: needs at least 2")
