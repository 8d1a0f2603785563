"""Order inside groups: does the reward rank a group's items as gold does?

Usage::

    from rewardkit.stats.groups import group_ordering
    g = group_ordering(rewards, gold, groups)    # groups: one prompt's completions share a key
    g.n_pairs, g.frac_concordant, g.frac_inverted, g.worst_groups

Group-relative training (GRPO, RLOO) only sees the order of rewards inside a group, so an item
that gold calls worse but the reward puts above a better one is an inversion even when both
rewards are low. Pairs whose gold is tied are not counted; pairs with tied rewards are counted
as ties (they get equal advantages). Items with a None reward or gold are excluded.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from .._json import JsonMixin
from ..errors import ConfigError

__all__ = ["GroupOrdering", "group_ordering"]


@dataclass(frozen=True)
class GroupOrdering(JsonMixin):
    n_groups: int  # groups with at least one pair of different gold
    n_pairs: int  # within-group pairs with different gold
    n_concordant: int
    n_tied_reward: int
    n_inverted: int
    frac_concordant: float | None
    frac_tied_reward: float | None
    frac_inverted: float | None
    worst_groups: tuple[tuple[str, int], ...]  # (group, inverted pairs), most first, up to 5


def group_ordering(
    reward: Sequence[float | None], gold: Sequence[float | None], groups: Sequence[str | None]
) -> GroupOrdering:
    """Concordant / tied / inverted within-group pairs (items without a group are skipped)."""
    if not len(reward) == len(gold) == len(groups):
        raise ConfigError(
            "The 'gold' and 'groups' parameters of group_ordering must have one value per "
            f"reward ({len(reward)}). Got {len(gold)} and {len(groups)}."
        )
    by: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r, g, k in zip(reward, gold, groups):
        if r is not None and g is not None and k is not None:
            by[k].append((float(r), float(g)))
    conc = tied = inv = 0
    n_groups = 0
    worst: list[tuple[str, int]] = []
    for k in sorted(by):
        rows = by[k]
        g_inv = g_pairs = 0
        for a in range(len(rows)):
            for b in range(a + 1, len(rows)):
                (ra, ga), (rb, gb) = rows[a], rows[b]
                if ga == gb:
                    continue
                g_pairs += 1
                s = (ra - rb) * (ga - gb)
                if s > 0:
                    conc += 1
                elif ra == rb:
                    tied += 1
                else:
                    inv += 1
                    g_inv += 1
        if g_pairs:
            n_groups += 1
        if g_inv:
            worst.append((k, g_inv))
    n = conc + tied + inv
    worst.sort(key=lambda t: (-t[1], t[0]))
    return GroupOrdering(
        n_groups=n_groups,
        n_pairs=n,
        n_concordant=conc,
        n_tied_reward=tied,
        n_inverted=inv,
        frac_concordant=conc / n if n else None,
        frac_tied_reward=tied / n if n else None,
        frac_inverted=inv / n if n else None,
        worst_groups=tuple(worst[:5]),
    )
