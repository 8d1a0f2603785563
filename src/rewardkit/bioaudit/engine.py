"""The audit engine: judges each decision of an analysis trajectory with a rule pack.

Usage::

    from rewardkit.bioaudit import Engine
    eng = Engine()                       # the three shipped packs; or "scrna", a path, a RulePack
    d = {"decision_id": "d05", "action": "no_doublet_detection", "params": {},
         "context": {"paradigm": "scrna", "platform": "droplet", "n_cells": 8000}}
    eng.audit_decision(d, history=[])    # Judgment(level=0, rule_ids=('scrna.doublet.skipped',), …)
    eng.audit(trajectory)                # one Judgment per decision; history = earlier decisions

Levels (SPEC §3): an action the pack does not know is −1; a decision missing a
``required_context`` key of any rule that applies to its action is −1 (cannot evaluate); so is a
decision (or the earlier decision a rule looks back at) whose field holds a value of another
type than the pack declares — ``"1"``, ``true``, NaN or Infinity where an int or a number is
read is "cannot evaluate: params.<name> expected <type>; got <value>", never a pass.
Otherwise the level is the minimum over the rules it violates, 3 if it violates none.

The paradigm of a decision is the ``paradigm`` keyword, else ``context["paradigm"]``, else the
pack's only paradigm; with several packs and no paradigm the decision is −1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from .._json import JsonMixin, content_hash
from ..errors import ConfigError
from .rules import SHIPPED, Rule, RulePack, fields_read, load_rulepack, type_error

__all__ = ["PARADIGMS", "Engine", "Judgment"]

PARADIGMS = SHIPPED  # ("deg", "pan", "scrna")
UNEVALUABLE = -1


@dataclass(frozen=True)
class Judgment(JsonMixin):
    """The engine's judgement of one decision: level −1..3, the rules behind it, and why."""

    level: int
    rule_ids: tuple[str, ...]
    rationale: str


RulePackLike = str | Path | RulePack


def _as_packs(rulepack: RulePackLike | Sequence[RulePackLike]) -> dict[str, RulePack]:
    if isinstance(rulepack, str) and rulepack == "default":
        items: Sequence[RulePackLike] = PARADIGMS
    elif isinstance(rulepack, (str, Path, RulePack)):
        items = (rulepack,)
    elif isinstance(rulepack, Sequence) and rulepack:
        items = rulepack
    else:
        raise ConfigError(
            "The 'rulepack' parameter of Engine must be 'default', a paradigm name "
            f"({', '.join(PARADIGMS)}), a TOML path, a RulePack or a list of them. "
            f"Got {rulepack!r}."
        )
    packs: dict[str, RulePack] = {}
    for item in items:
        pack = item if isinstance(item, RulePack) else load_rulepack(item)
        if pack.paradigm in packs:
            raise ConfigError(
                f"The 'rulepack' parameter of Engine has two packs for paradigm "
                f"'{pack.paradigm}'; give one pack per paradigm."
            )
        packs[pack.paradigm] = pack
    return packs


class Engine:
    """A rule engine over one pack per paradigm. Stateless: the same input, the same judgment."""

    def __init__(self, rulepack: RulePackLike | Sequence[RulePackLike] = "default") -> None:
        self.packs: dict[str, RulePack] = _as_packs(rulepack)

    @cached_property
    def hash(self) -> str:
        """Content hash of every pack the engine uses, recorded next to its judgments."""
        return content_hash({p: pack.hash for p, pack in sorted(self.packs.items())})

    def _pack(self, decision: Mapping[str, Any], paradigm: str | None) -> RulePack | None:
        ctx = decision.get("context")
        name = paradigm or (ctx.get("paradigm") if isinstance(ctx, Mapping) else None)
        if name is None and len(self.packs) == 1:
            return next(iter(self.packs.values()))
        return self.packs.get(name) if isinstance(name, str) else None

    def audit_decision(
        self,
        decision: Mapping[str, Any],
        history: Sequence[Mapping[str, Any]] = (),
        *,
        paradigm: str | None = None,
    ) -> Judgment:
        """Judge one decision given the decisions made before it (oldest first)."""
        if not isinstance(decision, Mapping):
            raise ConfigError(
                "The 'decision' parameter of Engine.audit_decision must be a dict with "
                f"decision_id, action, params, context. Got {type(decision).__name__}."
            )
        pack = self._pack(decision, paradigm)
        if pack is None:
            known = ", ".join(sorted(self.packs))
            return Judgment(
                UNEVALUABLE, (), f"no rule pack for this decision's paradigm (packs: {known})"
            )
        action = decision.get("action")
        if not isinstance(action, str) or action not in pack.actions:
            return Judgment(
                UNEVALUABLE, (), f"unknown action {action!r} for the {pack.paradigm} pack"
            )
        rules = pack.rules_for(action)
        ctx = decision.get("context")
        ctx = ctx if isinstance(ctx, Mapping) else {}
        blind = [r for r in rules if any(k not in ctx for k in r.required_context)]
        if blind:
            missing = sorted({k for r in blind for k in r.required_context if k not in ctx})
            return Judgment(
                UNEVALUABLE,
                tuple(r.id for r in blind),
                f"cannot evaluate: missing context {', '.join(missing)}",
            )
        wrong = self._wrong_types(pack, rules, decision, history)
        if wrong is not None:
            return wrong
        fired = [r for r in rules if r.fires(decision, history)]
        if not fired:
            return Judgment(3, (), "no rule violated")
        fired.sort(key=lambda r: (r.level, r.id))
        return Judgment(
            fired[0].level,
            tuple(r.id for r in fired),
            " | ".join(f"{r.id} (L{r.level}): {r.rationale}" for r in fired),
        )

    @staticmethod
    def _wrong_types(
        pack: RulePack,
        rules: Sequence[Rule],
        decision: Mapping[str, Any],
        history: Sequence[Mapping[str, Any]],
    ) -> Judgment | None:
        """Level −1 when a field a rule reads holds a value of another type than declared."""
        problems: dict[str, list[str]] = {}
        for rule in rules:
            for field, earlier in fields_read(rule):
                source: Mapping[str, Any] | None = decision
                if earlier is not None:
                    prior = [d for d in history if d.get("action") == earlier]
                    source = prior[-1] if prior else None
                if source is None:
                    continue
                section, key = field.split(".", 1)
                table = source.get(section)
                if not isinstance(table, Mapping):
                    if table is not None:  # "params": [...] or a string: nothing can be read
                        what = f"{section} expected a table; got a {type(table).__name__}"
                        problems.setdefault(what, []).append(rule.id)
                    continue
                if key not in table:
                    continue
                err = type_error(field, table[key], pack.types[field])
                if err is not None:
                    where = "" if earlier is None else f" (earlier '{earlier}' decision)"
                    problems.setdefault(err + where, []).append(rule.id)
        if not problems:
            return None
        first = sorted(problems)[0]
        return Judgment(
            UNEVALUABLE, tuple(dict.fromkeys(problems[first])), f"cannot evaluate: {first}"
        )

    def audit(
        self, trajectory: Sequence[Mapping[str, Any]], *, paradigm: str | None = None
    ) -> list[Judgment]:
        """One judgment per decision; each sees the decisions before it as its history."""
        if isinstance(trajectory, (str, bytes, Mapping)) or not isinstance(trajectory, Sequence):
            raise ConfigError(
                "The 'trajectory' parameter of Engine.audit must be a list of decision dicts. "
                f"Got {type(trajectory).__name__}."
            )
        return [
            self.audit_decision(d, trajectory[:i], paradigm=paradigm)
            for i, d in enumerate(trajectory)
        ]

    def levels(
        self, trajectory: Sequence[Mapping[str, Any]], *, paradigm: str | None = None
    ) -> tuple[int, ...]:
        """Just the levels of :meth:`audit`."""
        return tuple(j.level for j in self.audit(trajectory, paradigm=paradigm))
