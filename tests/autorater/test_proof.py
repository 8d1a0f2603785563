"""The math diagnostic, its gradient backends, and receipts bound to the source."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from rewardkit._json import canonical_json
from rewardkit.autorater import diagnostic, proof, receipt, source_digest, verify_receipt
from rewardkit.errors import ConfigError

dmod = proof
RECEIPTS = Path(__file__).resolve().parents[2] / "docs" / "receipts"


def test_diagnostic_passes_and_has_every_checked_scalar():
    d = diagnostic(42)
    assert d["passed"] is True and d["failed"] == []
    assert "not a training run" in d["scope"]
    missing = set(dmod.CHECKS) - set(d)
    if d["gradient_backend"] == "numpy":  # torch absent: no torch/numpy comparison to make
        missing -= {f"grad_{r}_torch_numpy_max_abs_diff" for r in ("brier", "log")}
    assert missing == set()
    assert d["log_invalid"] == math.log(0.001)
    assert d["control_constant_half_brier"] == 0.75
    assert d["grad_brier_mean_reward_gain"] > 0 and d["grad_log_mean_reward_gain"] > 0


def test_diagnostic_is_deterministic_and_seeded():
    assert canonical_json(diagnostic(43)) == canonical_json(diagnostic(43))
    a, b = diagnostic(43), diagnostic(44)
    assert a["propriety_brier_min_margin"] != b["propriety_brier_min_margin"]


def test_a_broken_rule_fails_the_diagnostic(monkeypatch):
    # R = 1 − |p − y| (written through the real Brier so invalid stays 0) is not proper: its
    # expected reward peaks at 0 or 1, so the propriety checks must catch it.
    real = dmod.brier_reward

    def absolute(p, y):
        return 1.0 - np.sqrt(1.0 - np.asarray(real(p, y)))

    monkeypatch.setattr(dmod, "brier_reward", absolute)
    d = diagnostic(42)
    assert d["passed"] is False
    assert "propriety_brier_max_argmax_error" in d["failed"]
    assert "propriety_log_max_argmax_error" not in d["failed"]


def test_numpy_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    z = rng.normal(0, 1.5, size=40)
    y = rng.uniform(size=40)
    valid = rng.uniform(size=40) < 0.7
    h = 1e-6
    for rule, reward in (("brier", dmod.brier_reward), ("log", dmod.log_reward)):
        g = dmod._numpy_gradient(rule, z, y, valid)

        def r(zz, reward=reward):
            p = np.where(valid, 1 / (1 + np.exp(-zz)), np.nan)
            return np.asarray(reward(p, y))

        fd = (r(z + h) - r(z - h)) / (2 * h)  # each item depends only on its own logit
        np.testing.assert_allclose(g, fd, atol=1e-8)
        assert (g[~valid] == 0).all()


def test_torch_and_numpy_gradients_agree():
    pytest.importorskip("torch", reason="torch extra not installed: numpy gradient only")
    rng = np.random.default_rng(1)
    z = rng.normal(0, 2, size=100)
    y = np.where(rng.uniform(size=100) < 0.5, rng.integers(0, 2, size=100), rng.uniform(size=100))
    valid = rng.uniform(size=100) < 0.8
    for rule in ("brier", "log"):
        gt = dmod._torch_gradient(rule, z, y, valid, "cpu")
        gn = dmod._numpy_gradient(rule, z, y, valid)
        np.testing.assert_allclose(gt, gn, atol=1e-14)
        assert np.isfinite(gt).all() and (gt[~valid] == 0).all()
    assert diagnostic(42)["gradient_backend"] == "torch"
    assert diagnostic(42)["grad_log_torch_numpy_max_abs_diff"] <= 1e-12


def test_without_torch_the_numpy_gradient_gives_the_same_scalars(monkeypatch):
    with_torch = diagnostic(42)
    monkeypatch.setattr(dmod, "have", lambda module: False)
    d = diagnostic(42)
    assert d["gradient_backend"] == "numpy" and d["passed"]
    for key in ("grad_brier_toward_y_frac", "grad_log_toward_y_frac", "grad_log_invalid_max_abs"):
        assert d[key] == with_torch[key]
    assert d["grad_brier_mean_reward_gain"] == pytest.approx(
        with_torch["grad_brier_mean_reward_gain"], abs=1e-12
    )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"seed": -1}, r"The 'seed' parameter of diagnostic must be an int in \[0, "),
        ({"seed": 1.5}, "The 'seed' parameter of diagnostic"),
        ({"device": "tpu"}, "The 'device' parameter of diagnostic must be 'cpu', 'cuda'"),
    ],
)
def test_diagnostic_bad_arguments(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        diagnostic(**kwargs)


def test_cuda_without_a_gpu_is_a_clear_error():
    torch = pytest.importorskip("torch", reason="torch extra not installed")
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is visible here")
    with pytest.raises(ConfigError, match="torch sees no CUDA device"):
        diagnostic(42, device="cuda")


# --- receipts ------------------------------------------------------------------------------------


def test_receipt_for_three_seeds_on_cpu():
    r = receipt(seeds=(42, 43, 44), device="cpu")
    assert r["passed"] is True
    assert sorted(r["seeds"]) == ["42", "43", "44"]
    assert r["source_sha256"] == source_digest()["sha256"]
    assert set(r["source_files"]) >= {"parse.py", "rewards.py", "proof.py"}
    assert r["versions"]["numpy"] == np.__version__
    assert r["device"]["requested"] == "cpu" and r["device"]["name"]
    check = verify_receipt(r)
    assert check.hash_ok and check.source_matches and check.passed
    assert canonical_json(r) == canonical_json(receipt(seeds=(42, 43, 44), device="cpu"))


def test_receipt_hash_changes_when_the_module_source_changes(tmp_path, monkeypatch):
    copy = tmp_path / "autorater"
    shutil.copytree(dmod._SOURCE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(dmod, "_SOURCE_DIR", copy)
    before = receipt(seeds=(42, 43, 44), device="cpu")
    with (copy / "rewards.py").open("a") as fh:
        fh.write("\n# one changed byte of source is a different claim\n")
    after = receipt(seeds=(42, 43, 44), device="cpu")
    assert after["source_files"]["rewards.py"] != before["source_files"]["rewards.py"]
    assert after["source_files"]["parse.py"] == before["source_files"]["parse.py"]
    assert after["source_sha256"] != before["source_sha256"]
    assert after["receipt_sha256"] != before["receipt_sha256"]
    assert after["seeds"] == before["seeds"]  # same numbers, different source: a new receipt
    assert verify_receipt(after).source_matches  # against the (patched) current source
    monkeypatch.undo()
    assert not verify_receipt(after).source_matches


def test_a_tampered_receipt_fails_verification():
    r = receipt(seeds=(42,), device="cpu")
    r["seeds"]["42"]["grad_log_toward_y_frac"] = 0.5
    assert not verify_receipt(r).hash_ok
    with pytest.raises(ConfigError, match="must be a receipt dict"):
        verify_receipt({"kind": "other"})


@pytest.mark.parametrize(
    ("seeds", "match"),
    [
        ((), "a sequence of 1 or more distinct values"),
        ("42", "a sequence of 1 or more distinct values"),
        ((42, 42), "distinct values"),
        (
            (42, -3),
            "The 'seeds' parameter of receipt must be a sequence of 1 or more distinct values, "
            "each",
        ),
    ],
)
def test_receipt_bad_seeds(seeds, match):
    with pytest.raises(ConfigError, match=match):
        receipt(seeds=seeds)


def test_the_kept_cpu_receipt_is_intact_and_describes_this_source():
    kept = sorted(RECEIPTS.glob("autorater-cpu-*.json"))
    assert kept, f"no CPU receipt under {RECEIPTS}"
    r = json.loads(kept[-1].read_text())
    check = verify_receipt(r)
    assert check.hash_ok and check.passed
    assert sorted(r["seeds"]) == ["42", "43", "44"] and r["device"]["requested"] == "cpu"
    assert check.source_matches, (
        f"{kept[-1].name} was made from other autorater source; regenerate it with "
        "`rewardkit autorater diagnostic --seeds 42 43 44 --device cpu --receipt "
        "docs/receipts/autorater-cpu-$(date +%F).json`"
    )
