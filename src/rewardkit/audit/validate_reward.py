"""``rewardkit validate --reward module:factory``: the five gates on the user's own data.

Usage::

    from rewardkit.audit.validate_reward import validate_reward
    from rewardkit.audit.userreward import load_reward
    v = validate_reward(load_reward("myreward:make"), items=read_items("items.jsonl"),
                        golden=read_golden("golden.jsonl"), pairs=read_spike_pairs("spike.jsonl"))
    v.outcome          # "pass" (all five ran and passed), "incomplete" (every gate that ran
                       #  passed, some were not run) or "fail" (a gate failed)

Nothing here reads shipped data: a gate without its data is "not run", and says which flag
would run it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .._json import JsonMixin
from .._validation import Interval, validate_params
from .data import GoldenItem, Item, SpikePair
from .reward_gates import (
    GateReport,
    Probe,
    gate_ablations,
    gate_determinism,
    gate_golden,
    gate_range,
    gate_spike_in,
)
from .userreward import UserReward

__all__ = ["RewardValidation", "probes_from", "validate_reward"]

Outcome = Literal["pass", "incomplete", "fail"]
# Exit status of `rewardkit validate` per outcome (documented in docs/audit.md).
EXIT_STATUS: Mapping[str, int] = {"pass": 0, "fail": 1, "incomplete": 4}


@dataclass(frozen=True)
class RewardValidation(JsonMixin):
    reward: str
    inputs: Mapping[str, Any]  # which file fed which gate, and the item counts
    gates: tuple[GateReport, ...]
    outcome: Outcome

    @property
    def passed(self) -> bool:
        """True only when all five gates ran and passed."""
        return self.outcome == "pass"

    def gate(self, name: str) -> GateReport:
        return next(g for g in self.gates if g.name == name)


def probes_from(
    items: Sequence[Item], golden: Sequence[GoldenItem], pairs: Sequence[SpikePair]
) -> tuple[tuple[Probe, ...], str]:
    """The probe items: ``items``; without them the golden items and the spike-in pairs' clean
    and corrupted items (all the user's own data). Returns the probes and where they came from."""
    if items:
        return tuple(Probe(i.id, i.where, i.reward_input()) for i in items), "items"
    out = [Probe(g.item.id, g.item.where, g.item.reward_input()) for g in golden]
    for p in pairs:
        where = f"{p.source[0]}, line {p.source[1]}"
        out.append(Probe(f"{p.id}/clean", f"{where} (clean)", dict(p.clean)))
        out.append(Probe(f"{p.id}/corrupted", f"{where} (corrupted)", dict(p.corrupted)))
    src = " + ".join(n for n, xs in (("golden", golden), ("spike-in", pairs)) if xs)
    return tuple(out), src or "none"


@validate_params({"spike_in_drop": [Interval(float, 0, None)], "cwd": ["str", None]})
def validate_reward(
    reward: UserReward,
    *,
    items: Sequence[Item] = (),
    golden: Sequence[GoldenItem] = (),
    pairs: Sequence[SpikePair] = (),
    perturb: Callable[[Any], Any] | None = None,
    declared_range: tuple[float, float] | None = None,
    spike_in_drop: float = 0.0,
    names: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> RewardValidation:
    """Run the five gates; see :mod:`rewardkit.audit.reward_gates` for what each checks."""
    probes, source = probes_from(items, golden, pairs)
    item_probes = tuple(Probe(i.id, i.where, i.reward_input()) for i in items)
    gates = (
        gate_range(reward, probes, declared=declared_range),
        gate_determinism(reward, probes, cwd=cwd),
        gate_spike_in(
            reward, pairs=pairs, perturb=perturb, perturb_items=item_probes, min_drop=spike_in_drop
        ),
        gate_ablations(reward, probes),
        gate_golden(reward, golden),
    )
    if any(g.status == "fail" for g in gates):
        outcome: Outcome = "fail"
    elif any(g.status == "not run" for g in gates):
        outcome = "incomplete"
    else:
        outcome = "pass"
    inputs = {
        **dict(names or {}),
        "probe_items": source,
        "n_probe_items": len(probes),
        "n_items": len(items),
        "n_golden": len(golden),
        "n_spike_pairs": len(pairs),
        "perturbation": perturb is not None,
    }
    return RewardValidation(reward.name, inputs, gates, outcome)
