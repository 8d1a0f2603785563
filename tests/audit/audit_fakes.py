"""Small fakes that follow the bio-audit interface, so the audit is tested on its own too.

Importable by name (conftest puts this folder on sys.path) so that the determinism gate's fresh
process can rebuild them from ``"audit_fakes:…"`` factories."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True)
class FakeJudgment:
    level: int


class FakeJudge:
    """Level by action name: ``ok`` → 3, ``meh`` → 1, ``bad`` → 0, anything else → −1."""

    LEVELS: ClassVar[dict[str, int]] = {"ok": 3, "fine": 2, "meh": 1, "bad": 0}

    def audit(self, trajectory):
        return [FakeJudgment(self.LEVELS.get(d["action"], -1)) for d in trajectory]


def fake_judge() -> FakeJudge:
    return FakeJudge()


@dataclass(frozen=True)
class FakeTask:
    task_id: str
    decisions: tuple[dict[str, Any], ...]
    reviews: tuple[str | None, ...] | None
    n_gold_correct: int
    n_gold_error: int
    n_gold_edge: int


@dataclass(frozen=True)
class FakeGolden:
    trajectory_id: str
    decisions: tuple[dict[str, Any], ...]
    expected_levels: tuple[int, ...]


def dec(action: str, i: int = 0) -> dict[str, Any]:
    return {"decision_id": f"d{i:02d}", "action": action, "params": {}, "context": {}}


def make_tasks(n: int = 24) -> list[FakeTask]:
    """Good tasks are clean; bad ones carry a 'bad' (L0) or 'meh' step and gold errors."""
    tasks = []
    for k in range(n):
        bad = k % 2 == 1
        actions = ["ok"] * (6 + k % 5) + (["bad" if k % 4 == 1 else "meh"] if bad else ["fine"])
        reviews = None if k % 3 else tuple("final" for _ in actions)
        tasks.append(
            FakeTask(
                f"t{k:02d}",
                tuple(dec(a, i) for i, a in enumerate(actions)),
                reviews,
                n_gold_correct=8 - (k % 3) - (2 if bad else 0),
                n_gold_error=(1 + k % 3) if bad else 0,
                n_gold_edge=k % 2,
            )
        )
    return tasks


SUBSTRATES = {
    f"{p}_correct": tuple(dec("ok", i) for i in range(12)) for p in ("deg", "pan", "scrna")
}
CANDIDATES = {p: (dec("bad", 12),) for p in ("deg", "pan", "scrna")}


class NoisyReward:
    """Nondeterministic within one process: a little random noise on every value."""

    recipes = ("A", "B", "C")
    default_recipe = "B"

    def __init__(self) -> None:
        import random

        self._rng = random.Random()

    def __call__(self, steps, *, recipe, session=False):
        from rewardkit.levels import score_trajectory

        v = score_trajectory(steps, recipe=recipe, session=session).value
        return None if v is None else min(0.85, max(0.0, v - 1e-9 * self._rng.random()))


class HashSeedReward:
    """Deterministic in one process, different across PYTHONHASHSEEDs (iterates a str set)."""

    recipes = ("A", "B", "C")
    default_recipe = "B"

    def __call__(self, steps, *, recipe, session=False):
        from rewardkit.levels import score_trajectory

        out = score_trajectory(steps, recipe=recipe, session=session).to_dict()
        out["meta"]["order"] = list({"alpha", "beta", "gamma", "delta", "eps"})
        return out | {"value": out["value"]}


def noisy_reward() -> NoisyReward:
    return NoisyReward()


def hashseed_reward() -> HashSeedReward:
    return HashSeedReward()


class SwappedMappingReward:
    """A deliberately broken mapping: level 2 scores below level 1 (bypasses LevelMapping)."""

    recipes = ("A", "B", "C")
    default_recipe = "B"
    VALUES: ClassVar[dict[int, float]] = {0: 0.0, 1: 0.60, 2: 0.30, 3: 0.85}

    def __call__(self, steps, *, recipe, session=False):
        kept = [s.level for s in steps if s.level != -1]
        if not kept:
            return None
        mean = sum(self.VALUES[lv] for lv in kept) / len(kept)
        return mean * 0.3 if recipe == "B" and 0 in kept else mean


def swapped_reward() -> SwappedMappingReward:
    return SwappedMappingReward()
