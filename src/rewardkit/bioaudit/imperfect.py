"""An engine with imperfect rule firing, so that calibrating on the benchmark is not tautological.

Usage::

    from rewardkit.bioaudit.imperfect import ImperfectEngine
    judge = ImperfectEngine(miss_rate=0.15, spurious_rate=0.05, rng=0)
    judge.audit(trajectory)          # like Engine.audit, with misses and spurious firings

The shipped benchmark is built so that the engine fires exactly the catalogued rule on every
decision: its precision and its recall on visible defects are 1.0 by construction. A real judge
is not that good. ``ImperfectEngine`` wraps :class:`~rewardkit.bioaudit.Engine`:

* a decision on which rules fired (level 0–2) is missed with probability ``miss_rate``
  (judged 3, no rule);
* a clean decision (level 3) gets a spurious firing with probability ``spurious_rate``: one of
  the rules for its action (chosen uniformly), judged at that rule's level; an action without
  rules gets a spurious L0;
* −1 (cannot evaluate) is kept.

The draws are keyed by ``rng`` (an int seed), the decision's content and its position, through
SHA-256, so the same inputs give the same judgments in any process (the determinism gate holds).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from .._validation import SEED, Interval, validate_params
from .engine import Engine, Judgment

__all__ = ["ImperfectEngine", "engine_agreement"]


def _uniform(seed: int, decision: Mapping[str, Any], position: int, tag: str) -> float:
    key = json.dumps([seed, position, tag, decision], sort_keys=True, default=str)
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") / 2.0**64


class ImperfectEngine:
    """An :class:`Engine` that misses and invents rule firings at the given rates."""

    @validate_params(
        {
            "miss_rate": [Interval(float, 0, 1)],
            "spurious_rate": [Interval(float, 0, 1)],
            "rng": [SEED],
        }
    )
    def __init__(
        self,
        engine: Engine | None = None,
        *,
        miss_rate: float = 0.0,
        spurious_rate: float = 0.0,
        rng: int = 0,
    ) -> None:
        self.engine = Engine() if engine is None else engine
        self.miss_rate, self.spurious_rate = float(miss_rate), float(spurious_rate)
        self.rng = int(rng)

    @property
    def factory(self) -> tuple[str, dict[str, Any]]:
        """How a fresh process rebuilds this judge (the shipped rule packs)."""
        return (
            "rewardkit.bioaudit.imperfect:ImperfectEngine",
            {"miss_rate": self.miss_rate, "spurious_rate": self.spurious_rate, "rng": self.rng},
        )

    def audit(self, trajectory: Sequence[Mapping[str, Any]]) -> list[Judgment]:
        out = []
        for i, (d, j) in enumerate(zip(trajectory, self.engine.audit(trajectory))):
            if 0 <= j.level <= 2 and _uniform(self.rng, d, i, "miss") < self.miss_rate:
                out.append(Judgment(3, (), f"missed firing of {', '.join(j.rule_ids)}"))
            elif j.level == 3 and _uniform(self.rng, d, i, "spurious") < self.spurious_rate:
                out.append(self._spurious(d, i))
            else:
                out.append(j)
        return out

    def _spurious(self, decision: Mapping[str, Any], position: int) -> Judgment:
        ctx = decision.get("context")
        name = ctx.get("paradigm") if isinstance(ctx, Mapping) else None
        pack = self.engine.packs.get(name) if isinstance(name, str) else None
        rules = pack.rules_for(str(decision.get("action"))) if pack is not None else ()
        if not rules:
            return Judgment(0, ("spurious",), "spurious firing (no rule for this action)")
        k = int(_uniform(self.rng, decision, position, "which") * len(rules))
        r = rules[min(k, len(rules) - 1)]
        return Judgment(r.level, (r.id,), f"spurious firing of {r.id}")


def engine_agreement(judge: Any, benchmark: Any) -> dict[str, Any]:
    """Precision and recall of a judge's firings against the generator's latent labels.

    A decision is *flagged* when judged 0–2; it is *catalogued* when the generator put a visible
    defect or a borderline choice on it. Precision = flagged ∧ catalogued / flagged; visible
    recall = flagged ∧ catalogued / catalogued; recall on all defects also counts the silent ones
    (which no judge of the record can see)."""
    visible: set[tuple[str, str]] = set()
    defects: set[tuple[str, str]] = set()
    for d in benchmark.defects:
        key = (d.task_id, d.decision_id)
        if d.visible:
            visible.add(key)
        if d.kind in ("defect", "silent"):
            defects.add(key)
    flagged: set[tuple[str, str]] = set()
    for t in benchmark.tasks:
        for dec, j in zip(t.decisions, judge.audit(list(t.decisions))):
            if 0 <= j.level <= 2:
                flagged.add((t.task_id, str(dec.get("decision_id"))))
    task_ids = {t.task_id for t in benchmark.tasks}
    visible = {k for k in visible if k[0] in task_ids}
    defects = {k for k in defects if k[0] in task_ids}
    tp = len(flagged & visible)
    return {
        "n_flagged": len(flagged),
        "n_catalogued_visible": len(visible),
        "precision": tp / len(flagged) if flagged else None,
        "visible_recall": tp / len(visible) if visible else None,
        "defect_recall": len(flagged & defects) / len(defects) if defects else None,
    }
