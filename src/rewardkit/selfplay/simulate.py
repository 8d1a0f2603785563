"""Offline self-play simulation on the embedded task bank (SPEC §8; a simulation, not LLM
training).

    >>> from rewardkit.selfplay.simulate import simulate
    >>> sim = simulate(arms=("A", "D"), steps=20, n_seeds=1, rng=0)
    >>> sorted(sim.records[0])[:4]
    ['C_hat', 'D_s', 'D_s_family', 'H_y']

Per task, the coder is a softmax over the bank's candidate programs (correct ones and mutants,
graded by GT) and the verifier a softmax over the six test generators of ``testgen``. Each
step, for every task at once: sample m = 16 programs and K = 32 tests, prune to k = 16 (invalid
→ duplicate input → duplicate profile), reward every test by the arm's rule, reward every
program by ½·y + ½·(pass rate on the kept tests), and move both policies along group-relative
advantages (z-scores; a task with zero reward variance is dropped from that role's update, as
CoVer §3.5 does). Arms (seed 003):

    A  plain CoVer IG: plug-in MI, covariance gate
    B  A with the bias subtracted (exact permutation-null mean)
    C  B on the dual pool: I_mix = α·I(P0) + (1 − α)·I(active)
    D  C plus the coverage term λ·d_j
    control  A's test rewards, but the coder ignores the tests: its reward is y alone
             (coder_gt_weight = 1.0), so nothing the verifier does reaches the coder

The control arm is what makes the simulation's readings attributable: a pattern that the
control shows too (D_s falling while pass@1 rises does, on this bank) comes from the coder
converging on GT, not from the test reward, and only differences *against the control*, paired
by seed, can be credited to how tests are rewarded.

Invalid tests earn ``−invalid_penalty``, duplicates 0. Instruments per step, pooled over tasks:
D_s (and per family) on the frozen P0, H(y), the exact null MI mean and its permutation SE over
the kept tests, Ĉ, k_eff, pass@1 (policy mass on programs passing GT and held-out tests), the
mean gated plug-in IG, and the extra executions that P0 costs (|P0|·k per task for C and D).
Executions come from one (candidates × universe) table per task, computed once through the
executor and cached by content hash.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._json import JsonMixin, canonical_json, write_atomic
from .._progress import track
from .._rng import as_generator
from .._validation import (
    Interval,
    check_memory,
    check_positive_int,
    check_real,
    validate_params,
)
from ..errors import ConfigError
from ._summary import summarise
from .bank import BANK_VERSION, TaskBank, initial_policy, load_bank
from .executor import Executor, owned_executor
from .infogain import ig_rewards, permutation_null
from .mutations import FAMILIES
from .probes import ProbePool, build_probe_pool
from .pruning import k_eff_batch, prune_batch
from .testgen import GENERATORS, build_universe

__all__ = ["ARMS", "CONTROL", "SimConfig", "SimulationResult", "simulate"]

LABEL = "offline self-play simulation on the embedded task bank — not LLM training"
ARMS: dict[str, dict[str, Any]] = {
    "A": {"correction": "none", "dual": False, "coverage": False},
    "B": {"correction": "exact_null", "dual": False, "coverage": False},
    "C": {"correction": "exact_null", "dual": True, "coverage": False},
    "D": {"correction": "exact_null", "dual": True, "coverage": True},
    "control": {
        "correction": "none",
        "dual": False,
        "coverage": False,
        "coder_ignores_tests": True,
    },
}
CONTROL = "control"


@dataclass(frozen=True)
class SimConfig(JsonMixin):
    m: int = 16
    K: int = 32
    k: int = 16
    alpha: float = 0.5
    lam: float = 0.5
    lr_coder: float = 0.05
    lr_verifier: float = 0.5
    coder_gt_weight: float = 0.5
    invalid_penalty: float = 0.1
    n_perm: int = 20  # permutations per step for the null SE instrument
    p0_size: int = 12


@dataclass(frozen=True)
class SimulationResult(JsonMixin):
    label: str
    config: SimConfig
    arms: tuple[str, ...]
    n_seeds: int
    seed: int  # the base seed drawn from rng (P0 and every stream derive from it)
    steps: int
    executor: str
    bank_hash: str
    probe_pool_hash: str
    records: tuple[dict[str, Any], ...] = field(repr=False)
    summary: dict[str, Any] = field(repr=False)

    def jsonl(self) -> str:
        return "".join(canonical_json(r) + "\n" for r in self.records)

    def write(self, out: str | Path, *, plot: bool = True) -> dict[str, Path]:
        """instruments.jsonl, summary.json and (with the report extra) curves.png."""
        out = Path(out)
        paths = {
            "instruments.jsonl": write_atomic(out / "instruments.jsonl", self.jsonl()),
            "summary.json": write_atomic(
                out / "summary.json",
                canonical_json(
                    {k: v for k, v in self.to_dict().items() if k != "records"}, indent=1
                )
                + "\n",
            ),
        }
        if plot:
            from .plots import plot_curves

            paths["curves.png"] = plot_curves(self, out / "curves.png")
        return paths


@dataclass
class _World:
    """Padded arrays for all tasks: T tasks, N candidates, U universe tests, n0 probes."""

    y: np.ndarray  # (T, N) GT graded correctness (padding: 0)
    truly_correct: np.ndarray  # (T, N) passes GT and held-out tests
    init_logits: np.ndarray  # (T, N), −inf on padding
    passed: np.ndarray  # (T, N, U) bool
    input_ids: np.ndarray  # (T, U)
    invalid: np.ndarray  # (T, U)
    gen_start: np.ndarray  # (T, G)
    gen_size: np.ndarray  # (T, G)
    p0_rows: np.ndarray  # (T, n0) candidate index of each probe
    p0_y: np.ndarray  # (T, n0)
    p0_family: np.ndarray  # (T, n0) index into FAMILIES + ("initial_policy",)


P0_FAMILIES = (*FAMILIES, "initial_policy")


def _build_world(bank: TaskBank, pool: ProbePool, executor: Executor) -> _World:
    unis = [build_universe(t, executor) for t in bank.tasks]
    T = len(bank.tasks)
    N = max(len(t.candidates) for t in bank.tasks)
    U = max(len(u.tests) for u in unis)
    n0 = pool.size_per_task
    G = len(GENERATORS)
    w = _World(
        y=np.zeros((T, N)),
        truly_correct=np.zeros((T, N), bool),
        init_logits=np.full((T, N), -np.inf),
        passed=np.zeros((T, N, U), bool),
        input_ids=np.full((T, U), -1),
        invalid=np.ones((T, U), bool),
        gen_start=np.zeros((T, G), int),
        gen_size=np.zeros((T, G), int),
        p0_rows=np.zeros((T, n0), int),
        p0_y=np.zeros((T, n0)),
        p0_family=np.zeros((T, n0), int),
    )
    for i, (task, u) in enumerate(zip(bank.tasks, unis)):
        n, nu = len(task.candidates), len(u.tests)
        assert u.passed is not None
        w.y[i, :n] = [c.y for c in task.candidates]
        w.truly_correct[i, :n] = [c.y == 1.0 and c.y_heldout == 1.0 for c in task.candidates]
        w.init_logits[i, :n] = np.log(initial_policy(task))
        w.passed[i, :n, :nu] = u.passed
        w.input_ids[i, :nu] = u.input_ids
        w.invalid[i, :nu] = u.invalid
        for g, name in enumerate(GENERATORS):
            w.gen_start[i, g], stop = u.slices[name]
            w.gen_size[i, g] = stop - w.gen_start[i, g]
        names = [c.name for c in task.candidates]
        probes = pool.for_task(task.task_id)
        w.p0_rows[i] = [names.index(p.name) for p in probes]
        w.p0_y[i] = [p.y for p in probes]
        w.p0_family[i] = [P0_FAMILIES.index(p.family) for p in probes]
    return w


def _softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _sample(p: np.ndarray, u: np.ndarray) -> np.ndarray:
    """(R, n) categorical draws from the rows of p (R, N), by inverse CDF of uniforms u (R, n)."""
    cdf = np.cumsum(p, axis=1)
    cdf[:, -1] = 1.0
    return (u[:, :, None] >= cdf[:, None, :]).sum(axis=2).clip(0, p.shape[1] - 1)


def _advantages(r: np.ndarray) -> np.ndarray:
    """Group z-scores per row; a row with zero variance gets 0 (dropped from the update)."""
    sd = r.std(axis=1, keepdims=True)
    live = sd > 1e-9
    return np.where(live, (r - r.mean(axis=1, keepdims=True)) / np.where(live, sd, 1.0), 0.0)


def _policy_step(logits: np.ndarray, picks: np.ndarray, adv: np.ndarray, lr: float) -> None:
    """REINFORCE on a softmax: logits += lr · mean_i A_i (e_{pick_i} − π)."""
    R, N = logits.shape
    grad = np.zeros((R, N))
    np.add.at(grad, (np.repeat(np.arange(R), picks.shape[1]), picks.ravel()), adv.ravel())
    grad = (grad - adv.sum(axis=1, keepdims=True) * _softmax(logits)) / picks.shape[1]
    logits += lr * np.where(np.isfinite(logits), grad, 0.0)


def _sample_tests(
    w: _World, tix: np.ndarray, vp: np.ndarray, u_gen: np.ndarray, u_item: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(R, K) universe indices and generator indices; 'duplicate' repeats an earlier pick."""
    g = _sample(vp, u_gen)
    dup, rv = GENERATORS.index("duplicate"), GENERATORS.index("random_valid")
    src = np.where(g == dup, rv, g)
    start = w.gen_start[tix[:, None], src]
    size = w.gen_size[tix[:, None], src]
    idx = start + np.minimum((u_item * size).astype(int), size - 1)
    for j in range(1, idx.shape[1]):
        pick = np.minimum((u_item[:, j] * j).astype(int), j - 1)
        is_dup = g[:, j] == dup
        idx[is_dup, j] = idx[is_dup, pick[is_dup]]
    return idx, g


def _group_mean(x: np.ndarray, groups: int) -> np.ndarray:
    """(R,) → (groups,) mean over the tasks of each (arm, seed) group."""
    return x.reshape(groups, -1).mean(axis=1)


def _run(
    w: _World,
    arms: tuple[str, ...],
    n_seeds: int,
    steps: int,
    cfg: SimConfig,
    gen: np.random.Generator,
    tick: Callable[[], object],
) -> tuple[list[dict[str, Any]], np.ndarray, np.ndarray]:
    """All arms × seeds × tasks as one batch of R rows, ordered (arm, seed, task). Uniforms
    are drawn per (seed, task) and shared by the arms: common random numbers, so arm
    differences at a seed are paired and the arms coincide until their rewards differ."""
    A, S, T = len(arms), n_seeds, w.y.shape[0]
    R, n_groups = A * S * T, A * S
    tix = np.tile(np.arange(T), A * S)  # (R,) task of each row
    arm_of = np.repeat(np.arange(A), S * T)
    correction_on = np.isin(
        arm_of, [i for i, a in enumerate(arms) if ARMS[a]["correction"] != "none"]
    )
    dual_on = np.isin(arm_of, [i for i, a in enumerate(arms) if ARMS[a]["dual"]])
    cov_on = np.isin(arm_of, [i for i, a in enumerate(arms) if ARMS[a]["coverage"]])
    ignores = [i for i, a in enumerate(arms) if ARMS[a].get("coder_ignores_tests", False)]
    gt_weight = np.where(np.isin(arm_of, ignores), 1.0, cfg.coder_gt_weight)[:, None]  # (R, 1)
    coder = w.init_logits[tix].copy()  # (R, N)
    verifier = np.zeros((R, len(GENERATORS)))
    p0_pass = w.passed[tix[:, None], w.p0_rows[tix]]  # (R, n0, U)
    p0_y, p0_fam = w.p0_y[tix], w.p0_family[tix]
    p0_buggy = p0_y < 1.0
    n0 = p0_y.shape[1]
    y_all, correct_all = w.y[tix], w.truly_correct[tix]
    r_ = np.arange(R)[:, None, None]
    records: list[dict[str, Any]] = []
    h_task = np.zeros((steps, R))
    ig_task = np.zeros((steps, R))

    def shared(*shape: int) -> np.ndarray:
        return np.broadcast_to(gen.random((S, T, *shape)), (A, S, T, *shape)).reshape(R, *shape)

    for step in range(steps):
        pc, pv = _softmax(coder), _softmax(verifier)
        progs = _sample(pc, shared(cfg.m))  # (R, m)
        y = np.take_along_axis(y_all, progs, axis=1)  # (R, m)
        tests, gens = _sample_tests(w, tix, pv, shared(cfg.K), shared(cfg.K))  # (R, K)
        E = w.passed[tix[:, None, None], progs[:, :, None], tests[:, None, :]]  # (R, m, K)
        reason = prune_batch(
            E, w.input_ids[tix[:, None], tests], w.invalid[tix[:, None], tests], y >= 1.0, k=cfg.k
        )
        kept = reason == 0  # (R, K)
        n_kept = kept.sum(axis=1)
        # rewards: every arm's rule from one pass (the exact null is shared)
        ig = ig_rewards(E, y, correction="exact_null")
        plain = np.where(ig.gate_open, ig.mi, 0.0)
        active = np.where(correction_on[:, None], ig.reward, plain)
        E_p0 = p0_pass[r_, np.arange(n0)[None, :, None], tests[:, None, :]]  # (R, n0, K)
        rejected = ~E_p0 & p0_buggy[:, :, None]
        d = rejected.sum(axis=1) / np.maximum(p0_buggy.sum(axis=1, keepdims=True), 1)
        probe = ig_rewards(E_p0, p0_y, correction="exact_null").reward
        reward = np.where(dual_on[:, None], cfg.alpha * probe + (1.0 - cfg.alpha) * active, active)
        reward = np.where(cov_on[:, None], reward + cfg.lam * d, reward)
        dup = (reason == 2) | (reason == 3)
        r_test = np.where(reason == 1, -cfg.invalid_penalty, np.where(dup, 0.0, reward))
        pass_rate = (E & kept[:, None, :]).sum(axis=2) / np.maximum(n_kept, 1)[:, None]
        suite = np.where(n_kept[:, None] > 0, pass_rate, y)
        r_code = gt_weight * y + (1.0 - gt_weight) * suite
        # instruments (before the update)
        detected = (rejected & kept[:, None, :]).any(axis=2)  # (R, n0)
        # the kept suite compacted to its first k columns (padding columns are masked out)
        order = np.argsort(~kept, axis=1, kind="stable")[:, : cfg.k]
        E_k = np.take_along_axis(E, order[:, None, :], axis=2)  # (R, m, k)
        kept_k = np.take_along_axis(kept, order, axis=1)  # (R, k)
        null_se_k = permutation_null(E_k, y, n_perm=cfg.n_perm, rng=gen).se
        keff, _ = k_eff_batch(E_k, kept_k)
        ig_kept = np.where(kept, plain, 0.0).sum(axis=1) / np.maximum(n_kept, 1)
        h_task[step], ig_task[step] = np.asarray(ig.h_y), ig_kept
        gsum = lambda x: x.reshape(n_groups, -1).sum(axis=1)  # noqa: E731
        ds = gsum((detected & p0_buggy).sum(axis=1)) / np.maximum(gsum(p0_buggy.sum(axis=1)), 1)
        fam = {}
        for f, name in enumerate(P0_FAMILIES):
            sel = p0_buggy & (p0_fam == f)
            fam[name] = (gsum((detected & sel).sum(axis=1)), gsum(sel.sum(axis=1)))
        kept_n = gsum(n_kept)
        null_mean = gsum(np.where(kept, ig.correction_term, 0.0).sum(axis=1))
        null_se = gsum(np.where(kept_k, null_se_k, 0.0).sum(axis=1))
        kept_reward = gsum(np.where(kept, r_test, 0.0).sum(axis=1))
        cols = {
            "D_s": ds,
            "H_y": _group_mean(np.asarray(ig.h_y), n_groups),
            "C_hat": _group_mean(np.asarray(ig.c_hat, float), n_groups),
            "k_eff": _group_mean(keff, n_groups),
            "n_kept": _group_mean(n_kept.astype(float), n_groups),
            "pass_at_1": _group_mean((pc * correct_all).sum(axis=1), n_groups),
            "mean_ig": _group_mean(ig_kept, n_groups),
            "frac_invalid": _group_mean((reason == 1).mean(axis=1), n_groups),
            "frac_duplicate": _group_mean(dup.mean(axis=1), n_groups),
        }
        gen_mass = pv.reshape(n_groups, -1, pv.shape[1]).mean(axis=1)
        for gi in range(n_groups):
            a, sd = divmod(gi, S)
            rec: dict[str, Any] = {"arm": arms[a], "seed": sd, "step": step}
            rec.update({k: float(v[gi]) for k, v in cols.items()})
            rec["D_s_family"] = {
                n: float(num[gi] / den[gi]) for n, (num, den) in fam.items() if den[gi] > 0
            }
            kn = kept_n[gi]
            rec["null_mi_mean"] = float(null_mean[gi] / kn) if kn else None
            rec["null_mi_se"] = float(null_se[gi] / kn) if kn else None
            rec["mean_test_reward"] = float(kept_reward[gi] / kn) if kn else None
            rec["generator_mass"] = {g: float(gen_mass[gi, j]) for j, g in enumerate(GENERATORS)}
            rec["probe_executions"] = int(kn) * n0 if ARMS[arms[a]]["dual"] else 0
            rec["active_executions"] = cfg.m * cfg.K * T
            records.append(rec)
        _policy_step(coder, progs, _advantages(r_code), cfg.lr_coder)
        _policy_step(verifier, gens, _advantages(r_test), cfg.lr_verifier)
        tick()
    return records, h_task, ig_task


@validate_params(
    {
        "steps": [Interval(int, 1, 10**6)],
        "rng": ["rng"],
        "n_seeds": [Interval(int, 1, 10**4)],
        "progress": ["boolean", None],
    }
)
def simulate(
    arms: Sequence[str] = ("A", "B", "C", "D", CONTROL),
    steps: int = 350,
    *,
    rng: Any = 0,
    n_seeds: int = 3,
    config: SimConfig | None = None,
    bank: TaskBank | None = None,
    executor: Executor | None = None,
    progress: bool | None = False,
) -> SimulationResult:
    """Run every arm for ``steps`` steps over ``n_seeds`` seeds with common random numbers
    (differences against A and against the control are paired by seed). Deterministic in
    ``rng``."""
    func = "simulate"
    arms = tuple(arms)
    if not arms or len(set(arms)) != len(arms) or any(a not in ARMS for a in arms):
        raise ConfigError(
            f"The 'arms' parameter of {func} must be a non-empty tuple of distinct arms from "
            f"{tuple(ARMS)}. Got {arms!r}."
        )
    cfg = config or SimConfig()
    check_real(cfg.alpha, "alpha", "SimConfig", low=0.0, high=1.0)
    check_real(cfg.lam, "lam", "SimConfig", low=0.0)
    check_positive_int(cfg.k, "k", "SimConfig")
    if cfg.k > cfg.K:
        raise ConfigError(
            f"The 'k' parameter of SimConfig must be an int <= K={cfg.K}. Got {cfg.k}."
        )
    gen = as_generator(rng, func)
    seed = int(gen.integers(0, 2**31 - 1))
    bank = bank or load_bank()
    # every (arm, seed, task) is a row and each step keeps two floats per row: steps and seeds
    # each in range can still ask for more than the machine has (10**5 × 1000 seeds: 127 GiB)
    rows = len(arms) * n_seeds * len(bank.tasks)
    check_memory(
        steps,
        "steps",
        func,
        nbytes=16 * steps * rows,
        formula=f"steps × {rows} rows (arms × seeds × tasks) × 16 bytes",
    )
    pool = build_probe_pool(bank, rng=seed, size=cfg.p0_size)
    with owned_executor(executor) as ex:
        world = _build_world(bank, pool, ex)
        ex_name = ex.name
    bar = iter(
        track(range(steps), description="self-play simulation", total=steps, enabled=progress)
    )
    records, h_task, ig_task = _run(
        world,
        arms,
        n_seeds,
        steps,
        cfg,
        np.random.default_rng(seed),
        lambda: next(bar, None),
    )
    for _ in bar:  # let the progress bar finish
        pass
    summary = summarise(records, arms, n_seeds, h_task, ig_task)
    return SimulationResult(
        LABEL
        if bank.version == BANK_VERSION
        else LABEL.replace("the embedded task bank", f"the task bank {bank.version!r}"),
        cfg,
        arms,
        n_seeds,
        seed,
        steps,
        ex_name,
        bank.content_hash,
        pool.content_hash,
        tuple(records),
        summary,
    )
