"""The math diagnostic of the proper rewards, and the receipt that binds it to the source.

Usage::

    from rewardkit.autorater import diagnostic, receipt, verify_receipt
    d = diagnostic(42)                      # dict of scalars; d["passed"] is True
    r = receipt(seeds=(42, 43, 44), device="cpu")
    r["source_sha256"], r["receipt_sha256"], verify_receipt(r).source_matches

``diagnostic(seed, device)`` checks, on synthetic numbers drawn from ``seed``: the definitions
at fixed points; strict propriety (for y ~ Bernoulli(q) the expected reward peaks at p = q, both
rules, on a grid); negative controls (invalid → 0 / log eps, a constant 0.5 → Brier 0.75);
isolation (garbage in a batch leaves the valid rewards unchanged, under
``numpy.errstate(all="raise")``); and one gradient step on logits z with p = sigmoid(z)
(torch on ``device`` when torch is installed, the analytic numpy gradient always; both must
agree): every valid p moves toward y, every invalid item gets exactly zero gradient.

It is a diagnostic of the math, not a training run: in real RL the text is sampled, parsed and
its reward frozen before the policy gradient; nothing is differentiated through a parser (seed
001, "数学梯度诊断不代表可以对生成文本float解析反传，更不等于GRPO训练").

``receipt`` runs it per seed and binds the scalars to the SHA-256 of this package's source, the
package versions and the device: no receipt, no claim.
"""

from __future__ import annotations

import hashlib
import math
import platform
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._json import JsonMixin, content_hash
from .._optional import have, require
from .._rng import as_generator
from .._validation import SEED, Each, validate_params
from .._version import __version__
from ..errors import ConfigError
from .rewards import DEFAULT_EPS, RULES, brier_reward, log_reward, proper_rewards

__all__ = ["SCOPE", "ReceiptCheck", "diagnostic", "receipt", "source_digest", "verify_receipt"]

SCOPE = (
    "diagnostic of the proper-reward math on synthetic numbers (seed 001, Sec. 3 Eq. 1-2); "
    "not a training run and not an evaluation of any autorater"
)
RECEIPT_KIND = "rewardkit.autorater.receipt/v1"
_SOURCE_DIR = Path(__file__).parent  # every module of rewardkit.autorater is bound
GRID = np.linspace(0.0, 1.0, 2001)  # (G,) candidate p for the propriety check; step 5e-4
MARGIN_DISTANCE = 0.01  # strictness: E(q) must beat every grid p at least this far from q
LR = 1.0  # logit step; sigmoid is 1/4-Lipschitz, so |Δp| < |p − y| and p cannot overshoot y
TOL = 1e-12

# Hand values at fixed points: (rule, p, y, expected reward).
_FIXED: tuple[tuple[str, float | None, float, float], ...] = (
    ("brier", 0.73, 1.0, 1 - 0.27**2),
    ("brier", 0.73, 0.0, 1 - 0.73**2),
    ("brier", 0.3, 0.6, 1 - 0.3**2),  # soft label
    ("brier", None, 1.0, 0.0),
    ("brier", 1.0, 1.0, 1.0),
    ("log", 0.7, 1.0, math.log(0.7)),
    ("log", 0.7, 0.0, math.log(0.3)),
    ("log", 0.5, 0.25, math.log(0.5)),
    ("log", 0.0, 1.0, math.log(DEFAULT_EPS)),  # clipped at eps
    ("log", 1.0, 1.0, math.log(1 - DEFAULT_EPS)),  # clipped at 1 − eps
    ("log", None, 0.0, math.log(DEFAULT_EPS)),
)
_GARBAGE: tuple[Any, ...] = (
    "",
    "0.7",
    "<probability>nan</probability>",
    "<probability>5e-1</probability>",
    "<probability>1e308</probability>",
    "<probability>1.5</probability>",
    "<probability>0.2</probability><probability>0.9</probability>",
    "<probability>0.3",
    None,
    float("nan"),
    float("inf"),
)


def _reward(rule: str, p: Any, y: Any) -> Any:
    return brier_reward(p, y) if rule == "brier" else log_reward(p, y)


def _definitions() -> dict[str, float]:
    err = max(abs(float(_reward(rule, p, y)) - want) for rule, p, y, want in _FIXED)
    return {"definition_max_abs_error": err, "log_invalid": float(log_reward(None, 1.0))}


def _propriety(rng: np.random.Generator) -> dict[str, float]:
    out: dict[str, float] = {}
    qs = rng.uniform(0.05, 0.95, size=16)  # (Q,) true P(y = 1)
    for rule in RULES:
        r1 = np.asarray(_reward(rule, GRID, 1.0))  # (G,)
        r0 = np.asarray(_reward(rule, GRID, 0.0))  # (G,)
        expected = qs[:, None] * r1 + (1 - qs[:, None]) * r0  # (Q, G)
        argmax_err = np.abs(GRID[expected.argmax(axis=1)] - qs).max()
        at_q = qs * np.asarray(_reward(rule, qs, 1.0)) + (1 - qs) * np.asarray(
            _reward(rule, qs, 0.0)
        )  # (Q,) expected reward of the truthful report
        far = np.abs(GRID[None, :] - qs[:, None]) >= MARGIN_DISTANCE  # (Q, G)
        margin = (at_q - np.where(far, expected, -np.inf).max(axis=1)).min()
        out[f"propriety_{rule}_max_argmax_error"] = float(argmax_err)
        out[f"propriety_{rule}_min_margin"] = float(margin)
    return out


def _texts(p: np.ndarray) -> list[str]:
    return [f"Reasoning… <probability>{x:.3f}</probability>" for x in p]


def _controls(rng: np.random.Generator) -> dict[str, float]:
    y = rng.integers(0, 2, size=64).astype(np.float64)  # (n,) binary labels
    garbage = [_GARBAGE[i] for i in rng.integers(0, len(_GARBAGE), size=64)]
    half = ["<probability>0.5</probability>"] * 64
    return {
        "control_invalid_brier": float(proper_rewards(garbage, y, rule="brier").mean()),
        "control_invalid_log": float(proper_rewards(garbage, y, rule="log").mean()),
        "control_constant_half_brier": float(proper_rewards(half, y, rule="brier").mean()),
    }


def _isolation(rng: np.random.Generator) -> dict[str, float]:
    n = 48
    p = rng.uniform(0, 1, size=n)
    y = np.where(rng.uniform(size=n) < 0.5, rng.integers(0, 2, size=n), rng.uniform(size=n))
    clean = _texts(p)
    slots = np.sort(rng.choice(n + 24, size=24, replace=False))  # where the garbage goes
    mixed: list[Any] = list(clean)
    y_mixed = list(y)
    for s in slots:
        mixed.insert(int(s), _GARBAGE[int(rng.integers(len(_GARBAGE)))])
        y_mixed.insert(int(s), float(rng.integers(0, 2)))
    is_valid = np.ones(n + 24, dtype=bool)
    is_valid[slots] = False
    out: dict[str, float] = {}
    with np.errstate(all="raise"):
        for rule in RULES:
            a = proper_rewards(clean, y, rule=rule)
            b = proper_rewards(mixed, y_mixed, rule=rule)
            invalid_value = 0.0 if rule == "brier" else math.log(DEFAULT_EPS)
            out[f"isolation_{rule}_max_abs_diff"] = float(np.abs(b[is_valid] - a).max())
            out[f"isolation_{rule}_nonfinite"] = float((~np.isfinite(b)).sum())
            out[f"isolation_{rule}_invalid_max_abs_error"] = float(
                np.abs(b[~is_valid] - invalid_value).max()
            )
    return out


def _numpy_gradient(rule: str, z: np.ndarray, y: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """dR/dz for p = sigmoid(z): Brier −2(p − y)·p(1 − p); log y − p inside (eps, 1 − eps) and 0
    where clipped; 0 for invalid items, whose reward does not depend on p."""
    p = 1.0 / (1.0 + np.exp(-z))
    if rule == "brier":
        g = -2.0 * (p - y) * p * (1.0 - p)
    else:
        g = np.where((p > DEFAULT_EPS) & (p < 1 - DEFAULT_EPS), y - p, 0.0)
    return np.where(valid, g, 0.0)


def _torch_gradient(
    rule: str, z: np.ndarray, y: np.ndarray, valid: np.ndarray, device: str
) -> np.ndarray:
    torch = require("torch", "torch", "the torch gradient of the autorater diagnostic")
    zt = torch.tensor(z, dtype=torch.float64, device=device, requires_grad=True)
    yt = torch.tensor(y, dtype=torch.float64, device=device)
    vt = torch.tensor(valid, device=device)
    p = torch.sigmoid(zt)
    safe = torch.where(vt, p, torch.full_like(p, 0.5))  # isolate before the nonlinearity
    if rule == "brier":
        r = torch.where(vt, 1.0 - (safe - yt) ** 2, torch.zeros_like(p))
    else:
        pc = torch.clamp(safe, DEFAULT_EPS, 1.0 - DEFAULT_EPS)
        rl = yt * torch.log(pc) + (1.0 - yt) * torch.log(1.0 - pc)
        r = torch.where(vt, rl, torch.full_like(p, math.log(DEFAULT_EPS)))
    r.sum().backward()
    assert zt.grad is not None
    return np.asarray(zt.grad.detach().cpu().numpy(), dtype=np.float64)


def _gradient(rng: np.random.Generator, device: str, use_torch: bool) -> dict[str, Any]:
    n = 256
    z = rng.normal(0.0, 1.5, size=n)  # (n,) logits
    y = np.where(rng.uniform(size=n) < 0.5, rng.integers(0, 2, size=n), rng.uniform(size=n))
    valid = rng.uniform(size=n) < 0.75  # (n,) the rest stand for parse failures
    p0 = 1.0 / (1.0 + np.exp(-z))
    out: dict[str, Any] = {"gradient_backend": "torch" if use_torch else "numpy"}
    for rule in RULES:
        g = _numpy_gradient(rule, z, y, valid)
        if use_torch:
            gt = _torch_gradient(rule, z, y, valid, device)
            out[f"grad_{rule}_torch_numpy_max_abs_diff"] = float(np.abs(gt - g).max())
            g = gt  # the step uses the autograd gradient when there is one
        p1 = 1.0 / (1.0 + np.exp(-(z + LR * g)))
        stated0 = np.where(valid, p0, np.nan)
        stated1 = np.where(valid, p1, np.nan)
        before = np.asarray(_reward(rule, stated0, y))
        after = np.asarray(_reward(rule, stated1, y))
        closer = np.abs(p1 - y)[valid] < np.abs(p0 - y)[valid]
        out[f"grad_{rule}_toward_y_frac"] = float(closer.mean())
        out[f"grad_{rule}_invalid_max_abs"] = float(np.abs(g[~valid]).max())
        out[f"grad_{rule}_mean_reward_gain"] = float((after - before)[valid].mean())
        out[f"grad_{rule}_invalid_reward_change"] = float(np.abs(after - before)[~valid].max())
    return out


# Each scalar's pass condition; `diagnostic` fails if any is false.
CHECKS: dict[str, Callable[[float], bool]] = {
    "definition_max_abs_error": lambda v: v <= TOL,
    "log_invalid": lambda v: abs(v - math.log(DEFAULT_EPS)) <= TOL,
    "control_invalid_brier": lambda v: v == 0.0,
    "control_invalid_log": lambda v: abs(v - math.log(DEFAULT_EPS)) <= TOL,
    "control_constant_half_brier": lambda v: abs(v - 0.75) <= TOL,
    # The grid argmax is one of the two grid points around q: the nearer one for the symmetric
    # Brier rule (half a step), either one for the asymmetric log rule (one step).
    "propriety_brier_max_argmax_error": lambda v: v <= 2.5e-4 + TOL,
    "propriety_log_max_argmax_error": lambda v: v <= 5e-4 + TOL,
    **{f"propriety_{r}_min_margin": (lambda v: v > 0.0) for r in RULES},
    **{f"isolation_{r}_max_abs_diff": (lambda v: v == 0.0) for r in RULES},
    **{f"isolation_{r}_nonfinite": (lambda v: v == 0.0) for r in RULES},
    **{f"isolation_{r}_invalid_max_abs_error": (lambda v: v <= TOL) for r in RULES},
    **{f"grad_{r}_toward_y_frac": (lambda v: v == 1.0) for r in RULES},
    **{f"grad_{r}_invalid_max_abs": (lambda v: v == 0.0) for r in RULES},
    **{f"grad_{r}_mean_reward_gain": (lambda v: v > 0.0) for r in RULES},
    **{f"grad_{r}_invalid_reward_change": (lambda v: v == 0.0) for r in RULES},
    **{f"grad_{r}_torch_numpy_max_abs_diff": (lambda v: v <= 1e-12) for r in RULES},
}


def _check_device(device: Any, func: str) -> tuple[str, bool]:
    """(device, use_torch). cpu works without torch; cuda needs torch with a visible GPU."""
    if not isinstance(device, str) or not (
        device == "cpu" or device == "cuda" or device.startswith("cuda:")
    ):
        raise ConfigError(
            f"The 'device' parameter of {func} must be 'cpu', 'cuda' or 'cuda:N'. Got {device!r}."
        )
    if device == "cpu":
        return device, have("torch")
    torch = require("torch", "torch", f"{func} on device {device!r}")
    if not torch.cuda.is_available():
        raise ConfigError(
            f"The 'device' parameter of {func} is {device!r}, but torch sees no CUDA device "
            f"(torch {torch.__version__}). Use device='cpu'."
        )
    return device, True


@validate_params({"seed": [SEED], "device": ["str"]})
def diagnostic(seed: int = 42, device: str = "cpu") -> dict[str, Any]:
    """The scalars of the math diagnostic for one seed, with ``passed`` and ``failed`` keys."""
    seed = int(seed)
    device, use_torch = _check_device(device, "diagnostic")
    return _diagnostic(seed, device, use_torch)


def _diagnostic(seed: int, device: str, use_torch: bool) -> dict[str, Any]:
    # use_torch=False is the numpy-only path (the demo takes it to skip importing torch).
    rng = as_generator(seed, "diagnostic", "seed")
    out: dict[str, Any] = {"scope": SCOPE, "seed": seed, "device": device}
    out |= _definitions()
    out |= _propriety(rng)
    out |= _controls(rng)
    out |= _isolation(rng)
    out |= _gradient(rng, device, use_torch)
    failed = sorted(k for k, ok in CHECKS.items() if k in out and not ok(out[k]))
    out["failed"] = failed
    out["passed"] = not failed
    return out


def source_digest() -> dict[str, Any]:
    """SHA-256 of every module of this package (by file name) and of the whole set."""
    files = {
        f.name: "sha256:" + hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(_SOURCE_DIR.glob("*.py"))
    }
    return {"files": files, "sha256": content_hash(files)}


def _device_name(device: str) -> str:
    if device.startswith("cuda"):
        torch = require("torch", "torch", "the device name")
        return str(torch.cuda.get_device_name(torch.device(device)))
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown cpu"


@validate_params({"seeds": [Each((SEED,), min_len=1, distinct=True)], "device": ["str"]})
def receipt(seeds: Sequence[int] = (42, 43, 44), device: str = "cpu") -> dict[str, Any]:
    """The diagnostic per seed, bound to the source SHA-256, versions and device.

    ``receipt_sha256`` is the content hash of every other field; the receipt holds no timestamp
    (date it by its file name), so the same code on the same machine gives the same bytes.
    """
    func = "receipt"
    seeds = [int(s) for s in seeds]
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f"The 'seeds' parameter of {func} must not repeat a seed. Got {seeds}.")
    device, use_torch = _check_device(device, func)
    torch_version = None
    if have("torch"):
        import torch

        torch_version = str(torch.__version__)
    per_seed = {str(s): diagnostic(s, device) for s in seeds}
    src = source_digest()
    body: dict[str, Any] = {
        "kind": RECEIPT_KIND,
        "scope": SCOPE,
        "module": "rewardkit.autorater",
        "source_sha256": src["sha256"],
        "source_files": src["files"],
        "versions": {
            "rewardkit": __version__,
            "python": platform.python_version(),
            "numpy": np.__version__,
            "torch": torch_version,
        },
        "device": {
            "requested": device,
            "name": _device_name(device),
            "gradient_backend": "torch" if use_torch else "numpy",
            "platform": f"{sys.platform}-{platform.machine()}",
        },
        "seeds": per_seed,
        "passed": all(d["passed"] for d in per_seed.values()),
    }
    body["receipt_sha256"] = content_hash(body)
    return body


@dataclass(frozen=True)
class ReceiptCheck(JsonMixin):
    """Whether a receipt is intact (its hash matches its content) and describes this code."""

    hash_ok: bool
    source_matches: bool
    passed: bool


def verify_receipt(rec: dict[str, Any]) -> ReceiptCheck:
    """Recompute a receipt's hash and compare its source SHA-256 with the installed package."""
    if not isinstance(rec, dict) or rec.get("kind") != RECEIPT_KIND:
        raise ConfigError(
            f"The 'rec' parameter of verify_receipt must be a receipt dict of kind "
            f"{RECEIPT_KIND!r}. Got {type(rec).__name__}."
        )
    body = {k: v for k, v in rec.items() if k != "receipt_sha256"}
    return ReceiptCheck(
        hash_ok=content_hash(body) == rec.get("receipt_sha256"),
        source_matches=rec.get("source_sha256") == source_digest()["sha256"],
        passed=bool(rec.get("passed")),
    )
