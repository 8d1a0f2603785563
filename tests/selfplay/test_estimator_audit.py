"""Estimator audit: known MI, bias and RMSE of each correction (the statistics notes' regime)."""

from __future__ import annotations

import numpy as np

from rewardkit.selfplay.estimator_audit import estimator_audit


def test_audit_reproduces_the_regime_findings():
    a = estimator_audit(m=16, G=16, n_rep=600, n_perm=40, rng=0)
    ind = {
        c: a.row("independent", c) for c in ("none", "miller_madow", "exact_null", "permutation")
    }
    assert ind["none"].true_mi == 0.0
    assert ind["none"].bias > 0.3  # plug-in on noise: more than half of H(t) ≤ ln 2
    assert 0 < ind["none"].bias - ind["miller_madow"].bias < 0.1  # MM removes only a little
    assert abs(ind["exact_null"].bias) < 0.02 and abs(ind["permutation"].bias) < 0.03
    strong = a.row("strong", "exact_null")
    assert strong.true_mi > 0.3 and strong.bias < -0.15  # over-corrects strong signals
    assert a.row("strong", "none").rmse < strong.rmse
    for r in a.rows:
        assert r.rmse >= abs(r.bias) - 1e-12
    assert a.to_json() == estimator_audit(m=16, G=16, n_rep=600, n_perm=40, rng=0).to_json()


def test_coarse_y_has_less_bias():
    fine = estimator_audit(m=16, G=16, n_rep=400, n_perm=20, rng=1).row("independent", "none")
    coarse = estimator_audit(m=16, G=4, n_rep=400, n_perm=20, rng=1).row("independent", "none")
    assert coarse.bias < fine.bias
    big_m = estimator_audit(m=64, G=16, n_rep=200, n_perm=20, rng=1).row("independent", "none")
    assert big_m.bias < fine.bias
    assert np.isfinite(big_m.rmse)
