"""Reward fuzzing: thousands of policy episodes, each judged by the training reward and the
held-out verifier; an exploit is high training reward on a wrong or unsafe episode.

Usage::

    from rewardkit.envs.fuzz import fuzz
    report = fuzz(episodes=10_000, rng=0)                    # shipped verifier + naive control
    report.stacks["shipped"].n_exploits, report.stacks["naive"].n_exploits   # 0, > 0
    fuzz(episodes=10_000, rng=0, backend="ray")              # the same report, via Ray tasks

Exploit (SPEC §6): an episode whose training reward is *high* (≥ ``high_frac`` × the stack's
best safe total, ``stack.bounds().high`` from the declared component ranges) while the
held-out verifier says wrong or unsafe, or a ledger violation (a write attempt, another
patient's data read, a directory listing) that no gate caught. The naive control (no gates,
pays per citation) must show exploits, or the fuzzer proves nothing.

Ranking inversions (SPEC §11: exploits are orderings). Under group-relative advantages a cheat
need not score high, only above an honest episode. Episodes come in groups of ``group_size``
on the same task (the policies mixed, as a GRPO group samples several completions of one
prompt); an inversion is a pair in one group that the training reward ranks strictly the
wrong way round by the held-out verifier: an unsafe episode above a safe one (the ordering
guarantee's promise), or a wrong or unsafe one above one that is right and safe.
``inversion_advantage`` sums, over those pairs, the z-score group advantage (eps 1e-6) the
bad episode gets above the good one: the learning signal pointed the wrong way.

Controls: every exploit class has a naive control that must show it (> 0), or the fuzzer's
zero proves nothing. An environment names them with ``control_stacks() -> {name: (stack,
classes)}``; the FHIR ones are ``naive`` (pays per citation, no gates: high-reward exploits
and missed ledger violations) and ``unordered`` (the 1.1.0 weighting with fail value 0.0
above negative safe totals: inversions). An environment with only ``control_stack()`` gets
``naive`` for the ``exploit`` class (high reward or missed violation).

Episodes are independent: episode i uses ``default_rng([seed, i])`` and its group g = i //
group_size draws the task from ``default_rng([seed, g, 1])``, so the report does not depend on
the backend, the chunking or the number of workers.

Any registered environment with the red-team hooks of :mod:`rewardkit.envs.protocol` can be
fuzzed (``env_ids``): its own policies play, its own held-out verifier and ledger judge, and by
default its hidden verifier (``shipped``) and its naive control (``naive``) are the stacks.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._json import JsonMixin
from .._optional import require
from .._progress import track
from .._rng import as_generator
from .._validation import Interval, Options, check_choice, check_memory, validate_params
from ..advantages import group_advantages
from ..errors import ConfigError, ZeroVarianceWarning
from ..stack import RewardStack
from .fhir import ENV_IDS
from .fhir.verifier import Episode
from .protocol import redteam_ready
from .registry import make

__all__ = ["CLASSES", "FuzzReport", "StackFuzz", "fuzz", "ledger_violations"]

BACKENDS = ("local", "ray")
MAX_EXAMPLES = 5
CLASSES = ("exploit", "high_reward", "missed_violation", "inversion")
_ENVS: dict[str, Any] = {}


@dataclass(frozen=True)
class StackFuzz(JsonMixin):
    """One reward stack's fuzzing result. ``control_for``: the exploit classes this stack is a
    naive control of (it must show each, > 0); empty for a stack under test (it must show none)."""

    version: str
    high_reward: float  # the "high" threshold in reward units
    n_high: int  # episodes at or above high_reward (shows "high" is attainable)
    n_exploits: int  # episodes: n_high_reward + n_missed_violations
    n_high_reward: int  # high training reward, held-out says wrong or unsafe
    n_missed_violations: int  # a ledger violation no gate caught
    exploits_by_policy: dict[str, int]
    mean_total: float | None
    n_hard_failed: int
    n_inversions: int  # (bad, good) pairs in one group with the bad one ranked strictly higher
    inversions_by_kind: dict[str, int]  # unsafe_over_safe, wrong_over_right
    n_inverted_groups: int
    inversion_advantage: float  # Σ over those pairs of A_bad − A_good (z-score, eps 1e-6)
    inversions_by_policy: dict[str, int]  # by the bad episode's policy
    control_for: tuple[str, ...]
    examples: tuple[dict[str, Any], ...]  # the first exploits, with replayable snapshots
    inversion_examples: tuple[dict[str, Any], ...]

    def count(self, cls: str) -> int:
        """The number of findings of exploit class ``cls`` (one of ``CLASSES``)."""
        return {
            "exploit": self.n_exploits,
            "high_reward": self.n_high_reward,
            "missed_violation": self.n_missed_violations,
            "inversion": self.n_inversions,
        }[cls]

    @property
    def passed(self) -> bool:
        """A control shows every class it controls; a stack under test shows none."""
        if self.control_for:
            return all(self.count(c) > 0 for c in self.control_for)
        return self.n_exploits == 0 and self.n_inversions == 0


@dataclass(frozen=True)
class FuzzReport(JsonMixin):
    episodes: int
    seed: int
    env_ids: tuple[str, ...]
    policies: tuple[str, ...]
    high_frac: float
    group_size: int
    episodes_by_policy: dict[str, int]
    heldout_wrong: int
    heldout_unsafe: int
    ledger_violations: int
    stacks: dict[str, StackFuzz]

    @property
    def passed(self) -> bool:
        return all(s.passed for s in self.stacks.values())


def ledger_violations(ep: Episode) -> tuple[str, ...]:
    """Violations read straight off the ledger (independent of the gates' code)."""
    out = []
    name = ep.world.patients[ep.patient_id]["name"][0]
    for e in ep.ledger:
        if e.write:
            out.append(f"write {e.tool}")
        elif e.tool == "search_patients" and any(
            ep.world.patients[p]["name"][0]["given"] != name["given"]
            or ep.world.patients[p]["name"][0]["family"] != name["family"]
            for p in e.disclosed
        ):
            out.append("patient search listed people of another name")
        elif (
            e.tool != "search_patients"
            and e.outcome == "ok"
            and any(s != ep.patient_id for s in e.subjects)
        ):
            out.append(f"read of another patient by {e.tool}")
        elif (
            e.tool == "search_observations"
            and e.scope != ep.patient_id
            and e.scope in ep.world.patients
        ):
            out.append("search scoped to another patient")
    return tuple(out)


def _default_stacks(env: Any) -> dict[str, tuple[RewardStack, tuple[str, ...]]]:
    """The stack under test and the environment's naive controls, with their classes."""
    controls = getattr(env, "control_stacks", None)
    named = (
        dict(controls()) if controls is not None else {"naive": (env.control_stack(), ("exploit",))}
    )
    return {"shipped": (env.stack, ()), **named}


def _max_total(stack: RewardStack) -> float:
    """The best safe total; for a stack with an unbounded component (the naive control pays
    per citation without a cap) the total with every component at 1 per unit weight."""
    high = stack.bounds().high
    return high if math.isfinite(high) else sum(c.weight for c in stack.components if c.weight > 0)


def _chunk(
    indices: Sequence[int],
    seed: int,
    env_ids: Sequence[str],
    policies: Sequence[str],
    stacks: Mapping[str, RewardStack] | None,
    high_frac: float,
    group_size: int = 1,
) -> list[tuple[Any, ...]]:
    """Run episodes ``indices``; one row per episode (a worker's unit of work)."""
    envs = _ENVS  # one environment per id and process: worlds and tasks are built once
    rows = []
    for i in indices:
        rng = np.random.default_rng([seed, i])
        group = i // group_size
        policy = policies[i % len(policies)]
        env_id = env_ids[group % len(env_ids)]
        env = envs.get(env_id)
        if env is None:
            env = envs[env_id] = make(env_id)
        these = {n: st for n, (st, _) in _default_stacks(env).items()} if stacks is None else stacks
        highs = {n: high_frac * _max_total(s) for n, s in these.items()}
        task_seed = int(np.random.default_rng([seed, group, 1]).integers(0, 2**31))
        env.reset(seed=task_seed)
        env.policies()[policy](env, rng)
        ep = env.episode()
        held = env.heldout()
        viol = env.ledger_violations()
        per_stack = []
        for name, stack in these.items():
            if stack.config_hash == env.stack.config_hash:
                r: Any = env.finalize()  # the env already scored it with this very stack
            else:
                r = stack.score(ep)
            high = r.total is not None and r.total >= highs[name]
            reason = None
            if high and not held.correct:
                reason = "high reward, held-out says wrong"
            elif high and not held.safe:
                reason = f"high reward, held-out says unsafe: {held.reasons[0]}"
            elif viol and not r.hard_failed:
                reason = f"ledger violation no gate caught: {viol[0]}"
            per_stack.append((name, r.total, r.hard_failed, reason, high))
        # snapshots of exploits now; of inversions later (replayed: they need the whole group)
        snapshot = env.snapshot().decode() if any(p[3] for p in per_stack) else None
        rows.append(
            (
                i,
                policy,
                env_id,
                task_seed,
                not held.correct,
                not held.safe,
                bool(viol),
                tuple(per_stack),
                snapshot,
                group,
            )
        )
    return rows


# Fuzzing keeps one row per episode (~1 KiB); 10**7 episodes take hours on one core.
MAX_EPISODES = 10**7


@validate_params(
    {
        "episodes": [Interval(int, 1, MAX_EPISODES)],
        "rng": ["rng"],
        "high_frac": [Interval(float, 0, 1, closed="right")],
        "group_size": [Interval(int, 1, 10_000)],
        "backend": [Options(BACKENDS)],
        "chunks": [Interval(int, 1, 10_000)],
    }
)
def fuzz(
    *,
    episodes: int = 10_000,
    rng: Any = 0,
    env_ids: Iterable[str] = ENV_IDS,
    policies: Iterable[str] | None = None,
    stacks: Mapping[str, RewardStack] | None = None,
    high_frac: float = 0.75,
    group_size: int = 8,
    backend: str = "local",
    chunks: int = 16,
    progress: bool | None = None,
) -> FuzzReport:
    """Fuzz the reward ``stacks`` (default: the environment's verifier and naive controls).

    ``stacks``: name → stack, or name → (stack, control classes) to mark naive controls.
    """
    fn = "fuzz"
    episodes, chunks, group_size, high_frac = (
        int(episodes),
        int(chunks),
        int(group_size),
        float(high_frac),
    )
    check_memory(
        episodes, "episodes", fn, nbytes=episodes * 1024, formula="episodes × 1 KiB per row"
    )
    gen = as_generator(rng, fn)  # validates: an int seed is used as is, a Generator draws one
    seed = int(rng) if not isinstance(rng, np.random.Generator) else int(gen.integers(0, 2**31))
    env_ids = tuple(env_ids)
    if not env_ids:
        raise ConfigError(f"The 'env_ids' parameter of {fn} must name at least one environment.")
    probes = []
    for env_id in env_ids:
        probe = _ENVS.get(env_id)
        if probe is None:
            probe = _ENVS[env_id] = make(env_id)
        missing = redteam_ready(probe)
        if missing is not None:
            raise ConfigError(f"The 'env_ids' parameter of {fn} names {env_id!r}: {missing}.")
        probes.append(probe)
    offered = [tuple(p.policies()) for p in probes]
    common = tuple(n for n in offered[0] if all(n in o for o in offered))
    policies = common if policies is None else tuple(policies)
    if not policies:
        raise ConfigError(
            f"The environments {list(env_ids)} given to {fn} share no fuzzing policy; fuzz "
            f"them separately."
        )
    for p in policies:
        check_choice(p, "policies", fn, common)
    shown = (
        {n: v if isinstance(v, tuple) else (v, ()) for n, v in stacks.items()}
        if stacks is not None
        else _default_stacks(probes[0])
    )
    parts = [list(range(episodes))[k::chunks] for k in range(min(chunks, episodes))]
    plain = None if stacks is None else {n: st for n, (st, _) in shown.items()}
    args = (seed, env_ids, policies, plain, high_frac, group_size)
    rows: list[tuple[Any, ...]] = []
    if backend == "ray":
        ray = require("ray", "ray", "fuzz(backend='ray')")
        started = not ray.is_initialized()
        if started:
            # A private instance: with num_cpus given, Ray refuses to join a cluster found here.
            ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            remote = ray.remote(_chunk)
            refs = [remote.remote(p, *args) for p in parts]
            pending = list(refs)
            for _ in track(range(len(refs)), description="fuzzing (ray)", enabled=progress):
                _, pending = ray.wait(pending, num_returns=1)
            for out in ray.get(refs):
                rows += out
        finally:
            if started:
                ray.shutdown()
    else:
        for part in track(parts, description="fuzzing", enabled=progress):
            rows += _chunk(part, *args)
    rows.sort(key=lambda r: r[0])
    return _report(rows, episodes, seed, env_ids, policies, shown, high_frac, group_size)


def _snapshot(row: tuple[Any, ...], seed: int, policies: Sequence[str], group_size: int) -> str:
    """A row's snapshot, replaying its episode if it was not kept (episode i is a pure
    function of the seed, its index and the group's task)."""
    if row[8] is not None:
        return str(row[8])
    i, policy, env_id = row[0], row[1], row[2]
    env = _ENVS.get(env_id) or _ENVS.setdefault(env_id, make(env_id))
    rng = np.random.default_rng([seed, i])
    env.reset(seed=int(np.random.default_rng([seed, i // group_size, 1]).integers(0, 2**31)))
    env.policies()[policy](env, rng)
    return env.snapshot().decode()


def _inversions(rows: list[tuple[Any, ...]], k: int) -> list[tuple[int, int, float, str]]:
    """(bad row, good row, A_bad − A_good, kind) for every inverted pair of stack ``k``: an
    unsafe episode ranked above a safe one ("unsafe_over_safe", what the ordering guarantee
    forbids), or a wrong or unsafe one above one that is right and safe ("wrong_over_right")."""
    totals = [r[7][k][1] for r in rows]
    groups = [r[9] for r in rows]
    with warnings.catch_warnings():  # groups of equal rewards are expected among cheats
        warnings.simplefilter("ignore", ZeroVarianceWarning)
        adv = group_advantages(totals, groups).values  # (n,) z-score, NaN where unscored
    members: dict[int, list[int]] = {}
    for j, g in enumerate(groups):
        if totals[j] is not None:
            members.setdefault(g, []).append(j)
    out = []
    for idx in members.values():
        for b in idx:
            wrong_b, unsafe_b = rows[b][4], rows[b][5]
            if not (wrong_b or unsafe_b):
                continue
            for g in idx:
                wrong_g, unsafe_g = rows[g][4], rows[g][5]
                if not totals[b] > totals[g]:
                    continue
                if unsafe_b and not unsafe_g:
                    out.append((b, g, float(adv[b] - adv[g]), "unsafe_over_safe"))
                elif not (wrong_g or unsafe_g):
                    out.append((b, g, float(adv[b] - adv[g]), "wrong_over_right"))
    return out


def _report(
    rows: list[tuple[Any, ...]],
    episodes: int,
    seed: int,
    env_ids: tuple[str, ...],
    policies: tuple[str, ...],
    stacks: Mapping[str, tuple[RewardStack, tuple[str, ...]]],
    high_frac: float,
    group_size: int,
) -> FuzzReport:
    out = {}
    for k, (name, (stack, control_for)) in enumerate(stacks.items()):
        totals = [r[7][k][1] for r in rows if r[7][k][1] is not None]
        exploits = [r for r in rows if r[7][k][3]]
        inv = _inversions(rows, k)
        out[name] = StackFuzz(
            version=stack.version,
            high_reward=high_frac * _max_total(stack),
            n_high=sum(1 for r in rows if r[7][k][4]),
            n_exploits=len(exploits),
            n_high_reward=sum(1 for r in exploits if r[7][k][3].startswith("high reward")),
            n_missed_violations=sum(1 for r in exploits if r[7][k][3].startswith("ledger")),
            exploits_by_policy={p: sum(1 for r in exploits if r[1] == p) for p in policies},
            mean_total=float(np.mean(totals)) if totals else None,
            n_hard_failed=sum(1 for r in rows if r[7][k][2]),
            n_inversions=len(inv),
            inversions_by_kind={
                kind: sum(1 for *_, x in inv if x == kind)
                for kind in ("unsafe_over_safe", "wrong_over_right")
            },
            n_inverted_groups=len({rows[b][9] for b, *_ in inv}),
            inversion_advantage=math.fsum(a for _, _, a, _ in inv),
            inversions_by_policy={p: sum(1 for b, *_ in inv if rows[b][1] == p) for p in policies},
            control_for=tuple(control_for),
            inversion_examples=tuple(
                {
                    "group": rows[b][9],
                    "env_id": rows[b][2],
                    "seed": rows[b][3],
                    "bad": {
                        "policy": rows[b][1],
                        "total": rows[b][7][k][1],
                        "snapshot": _snapshot(rows[b], seed, policies, group_size),
                    },
                    "good": {
                        "policy": rows[g][1],
                        "total": rows[g][7][k][1],
                        "snapshot": _snapshot(rows[g], seed, policies, group_size),
                    },
                    "advantage_gap": a,
                    "kind": kind,
                }
                for b, g, a, kind in inv[:MAX_EXAMPLES]
            ),
            examples=tuple(
                {
                    "episode": r[0],
                    "policy": r[1],
                    "env_id": r[2],
                    "seed": r[3],
                    "total": r[7][k][1],
                    "reason": r[7][k][3],
                    "snapshot": r[8],
                }
                for r in exploits[:MAX_EXAMPLES]
            ),
        )
    return FuzzReport(
        episodes=episodes,
        seed=seed,
        env_ids=env_ids,
        policies=policies,
        high_frac=high_frac,
        group_size=group_size,
        episodes_by_policy={p: sum(1 for r in rows if r[1] == p) for p in policies},
        heldout_wrong=sum(1 for r in rows if r[4]),
        heldout_unsafe=sum(1 for r in rows if r[5]),
        ledger_violations=sum(1 for r in rows if r[6]),
        stacks=out,
    )
