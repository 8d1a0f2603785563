"""The audit's data model for any reward: items with gold labels, and reward outputs per item.

Usage::

    from rewardkit.audit.data import read_items, read_rewards, join
    items = read_items("gold.jsonl")          # {"id", "gold", "stratum"?, "group"?, ...fields}
    rewards = read_rewards("rewards.jsonl")    # {"id", "reward", "components"?} or adapter logs
    pairs = join(items, rewards)               # matched by id; unmatched ids are counted

Item files (JSONL, one object per line):

=============== ==============================================================================
``id``          a string or an int, unique in the file (required)
``gold``        a number (higher = better) or a bool label (true = good); required where the
                command compares against gold (``calibrate --gold``), optional elsewhere
``stratum``     optional: a string naming the item's stratum (another field with ``--strata``)
``group``       optional: items of one group were scored together (one prompt's completions);
                rank agreement inside groups is what group-relative training sees
anything else   the fields your reward reads; the reward gets every field except ``gold``
                (on a golden item also except ``expected`` and ``expected_components``)
=============== ==============================================================================

Reward files (JSONL): ``{"id", "reward": number | null}`` plus optional component values,
either as ``"components": {name: number | null}`` or as top-level numeric columns. The records
that the trainer adapters write with ``log_path=`` (see :mod:`rewardkit.integrations.samplelog`) are
read as they are: their ``id`` is ``<prompt_id>:<completion_hash>``. A ``null`` reward means
"cannot score" and is excluded (and counted), never read as 0. An id may repeat only with
identical values (a trainer scores the same completion of the same prompt again); it is kept
once and counted.

Every error names the file, the line and the field, and what is accepted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .._io import read_jsonl
from .._json import JsonMixin
from ..errors import InputError

__all__ = [
    "GoldenItem",
    "Item",
    "Joined",
    "RewardRecord",
    "SpikePair",
    "join",
    "read_golden",
    "read_items",
    "read_rewards",
    "read_spike_pairs",
]

# Keys of a reward record that are never components.
_RECORD_KEYS = frozenset(
    {
        "id",
        "reward",
        "components",
        "gates",
        "masks",
        "hard_failed",
        "errors",
        "prompt_id",
        "completion_hash",
        "prompt",
        "completion",
        "step",
        "trainer",
        "name",
        "version",
        "config_hash",
        "schema",
    }
)


SAMPLE_SCHEMA = "rewardkit.samples/1"  # the adapters' sample log (rewardkit.integrations)


def _is_sample_log(path: str | Path) -> bool:
    """Whether the file's first record is an adapter's sample-log record."""
    if not Path(path).is_file():
        return False  # a FIFO or device is never read here: read_jsonl refuses it by name
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    import json

                    obj = json.loads(line)
                    return isinstance(obj, dict) and obj.get("schema") == SAMPLE_SCHEMA
    except (OSError, ValueError, RecursionError):
        return False  # read_jsonl then says what is wrong with the file
    return False


# Fields a reward never sees: the answers it is audited against. ``gold`` everywhere; the
# golden answers only on golden items (elsewhere ``expected`` is the user's own field, e.g.
# the expected JSON a reward compares a completion with).
_HIDDEN = frozenset({"gold"})
_GOLDEN_HIDDEN = frozenset({"gold", "expected", "expected_components"})


@dataclass(frozen=True)
class Item:
    """One item: its id, gold (a number, a bool label or None), stratum, group and the fields
    the reward reads. ``source`` is ``(file, line)`` so that every message can point at it."""

    id: str
    gold: float | bool | None
    stratum: str | None
    group: str | None
    fields: Mapping[str, Any]
    source: tuple[str, int] = ("<memory>", 0)
    hidden: frozenset[str] = _HIDDEN  # golden items also hide expected, expected_components

    def reward_input(self) -> dict[str, Any]:
        """What a reward sees: every field except ``gold`` (and on a golden item, its
        ``expected`` answers); a fresh dict each call."""
        return {k: v for k, v in self.fields.items() if k not in self.hidden}

    @property
    def where(self) -> str:
        return f"{self.source[0]}, line {self.source[1]}"

    @property
    def gold_value(self) -> float | None:
        """The gold as a number (a label true = 1.0, false = 0.0)."""
        return None if self.gold is None else float(self.gold)


@dataclass(frozen=True)
class RewardRecord(JsonMixin):
    id: str
    reward: float | None
    components: Mapping[str, float | None] = field(default_factory=dict)
    source: tuple[str, int] = ("<memory>", 0)


def _id(obj: dict[str, Any], path: str, line: int, key: str = "id") -> str:
    if key not in obj:
        raise InputError("missing; expected a string or an int id", path=path, line=line, field=key)
    v = obj[key]
    if isinstance(v, bool) or not isinstance(v, (str, int)) or (isinstance(v, str) and not v):
        raise InputError(
            f"expected a non-empty string or an int; got {v!r:.60}", path=path, line=line, field=key
        )
    return str(v)


def _number(v: Any, path: str, line: int, name: str, *, nullable: bool = True) -> float | None:
    if v is None and nullable:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        accepted = "a finite number" + (" or null (cannot score)" if nullable else "")
        raise InputError(f"expected {accepted}; got {v!r:.60}", path=path, line=line, field=name)
    return float(v)


def _optional_str(obj: dict[str, Any], key: str, path: str, line: int) -> str | None:
    if key not in obj or obj[key] is None:
        return None
    v = obj[key]
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        raise InputError(
            f"expected a string (or an int); got {v!r:.60}", path=path, line=line, field=key
        )
    return str(v)


def read_items(
    path: str | Path, *, require_gold: bool = False, strata_field: str = "stratum"
) -> tuple[Item, ...]:
    """Read an item file; ``require_gold`` makes ``gold`` mandatory on every line, and
    ``strata_field`` names the field that holds the stratum (default ``stratum``)."""
    seen: dict[str, int] = {}
    n_repeats = 0

    def parse(obj: dict[str, Any], p: str, line: int) -> Item | None:
        nonlocal n_repeats
        iid = _id(obj, p, line)
        sample = obj.get("schema") == SAMPLE_SCHEMA
        if sample:  # an adapter's sample log: the item is what the reward scored
            episode = obj.get("episode")
            if not isinstance(episode, dict):
                raise InputError(
                    "a sample-log record without its episode (written with text=False?); "
                    "expected an object",
                    path=p,
                    line=line,
                    field="episode",
                )
            if iid in seen:  # the same completion of the same prompt, scored again
                n_repeats += 1
                return None
            labelled = {"gold": obj["gold"]} if "gold" in obj else {}
            obj = {**episode, "id": iid, **labelled}
        if iid in seen:
            raise InputError(
                f"duplicate id {iid!r} (first on line {seen[iid]}); ids must be unique",
                path=p,
                line=line,
                field="id",
            )
        seen[iid] = line
        gold: float | bool | None
        if "gold" not in obj or obj["gold"] is None:
            if require_gold:
                raise InputError(
                    "missing; expected a number (higher = better) or a bool label (true = good)",
                    path=p,
                    line=line,
                    field="gold",
                )
            gold = None
        elif isinstance(obj["gold"], bool):
            gold = obj["gold"]
        else:
            v = obj["gold"]
            if not isinstance(v, (int, float)) or not math.isfinite(v):
                raise InputError(
                    f"expected a finite number (higher = better) or a bool label (true = "
                    f"good); got {v!r:.60}",
                    path=p,
                    line=line,
                    field="gold",
                )
            gold = float(v)
        return Item(
            id=iid,
            gold=gold,
            stratum=_optional_str(obj, strata_field, p, line),
            group=_optional_str(obj, "group", p, line),
            fields=MappingProxyType(dict(obj)),
            source=(p, line),
        )

    parsed: list[Any] = read_jsonl(path, parse)
    items: tuple[Item, ...] = tuple(i for i in parsed if i is not None)
    golds = {type(i.gold) for i in items if i.gold is not None}
    if len(golds) > 1:
        first = next(i for i in items if isinstance(i.gold, bool))
        raise InputError(
            "gold mixes bool labels and numbers in one file; use one kind (true/false, or "
            "numbers such as 1/0)",
            path=first.source[0],
            line=first.source[1],
            field="gold",
        )
    return items


def _components(obj: dict[str, Any], p: str, line: int) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    comps = obj.get("components")
    if comps is not None:
        if not isinstance(comps, dict):
            raise InputError(
                f"expected an object name -> number | null; got {comps!r:.60}",
                path=p,
                line=line,
                field="components",
            )
        for k, v in comps.items():
            out[str(k)] = _number(v, p, line, f"components.{k}")
    for k, v in obj.items():
        if k in _RECORD_KEYS or k in out:
            continue
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[k] = _number(v, p, line, k)
    return out


def read_rewards(path: str | Path) -> tuple[tuple[RewardRecord, ...], int]:
    """Read a reward file (plain records or adapter logs); returns the records (one per id)
    and how many repeated records were folded into them."""
    first: dict[str, RewardRecord] = {}
    repeats = 0

    def parse(obj: dict[str, Any], p: str, line: int) -> None:
        nonlocal repeats
        iid = _id(obj, p, line)
        if "reward" not in obj:
            raise InputError(
                "missing; expected a number or null (cannot score)",
                path=p,
                line=line,
                field="reward",
            )
        rec = RewardRecord(
            iid, _number(obj["reward"], p, line, "reward"), _components(obj, p, line), (p, line)
        )
        old = first.get(iid)
        if old is None:
            first[iid] = rec
            return
        if (old.reward, dict(old.components)) != (rec.reward, dict(rec.components)):
            raise InputError(
                f"id {iid!r} repeats line {old.source[1]} with different values "
                f"({old.reward!r} vs {rec.reward!r}); one id must have one reward",
                path=p,
                line=line,
                field="reward",
            )
        repeats += 1

    read_jsonl(path, parse)
    return tuple(first.values()), repeats


@dataclass(frozen=True)
class Joined:
    """Items and rewards matched by id (in the item file's order)."""

    items: tuple[Item, ...]
    rewards: tuple[RewardRecord, ...]
    n_items_without_reward: int
    n_rewards_without_item: int
    missing_examples: tuple[str, ...]  # a few item ids with no reward record


def join(items: Sequence[Item], rewards: Sequence[RewardRecord], *, where: str = "") -> Joined:
    """Match by id. No match at all is an error (almost always the wrong file or id field)."""
    by_id = {r.id: r for r in rewards}
    pairs = [(i, by_id[i.id]) for i in items if i.id in by_id]
    item_ids = {i.id for i in items}
    if not pairs:
        raise InputError(
            f"no item id matches a reward id (items: {sorted(item_ids)[:3]}…, rewards: "
            f"{sorted(by_id)[:3]}…); both files must use the same 'id'",
            path=where or None,
            field="id",
        )
    missing = [i.id for i in items if i.id not in by_id]
    return Joined(
        items=tuple(i for i, _ in pairs),
        rewards=tuple(r for _, r in pairs),
        n_items_without_reward=len(missing),
        n_rewards_without_item=sum(1 for r in rewards if r.id not in item_ids),
        missing_examples=tuple(missing[:5]),
    )


@dataclass(frozen=True)
class GoldenItem:
    """A golden-file line: an item and the reward it must get, exactly (None = cannot score)."""

    item: Item
    expected: float | None
    expected_components: Mapping[str, float | None] | None


def read_golden(path: str | Path) -> tuple[GoldenItem, ...]:
    """Golden file: ``{"id", "expected": number | null, "expected_components"?: {...}, ...}``
    plus the fields the reward reads; or an adapter's sample log, whose logged rewards are the
    expected values (the run replayed)."""
    records = {r.id: r for r in read_rewards(path)[0]} if _is_sample_log(path) else None
    items = [replace(i, hidden=_GOLDEN_HIDDEN) for i in read_items(path)]
    out = []
    for it in items:
        p, line = it.source
        if records is not None:
            rec = records[it.id]
            out.append(GoldenItem(it, rec.reward, dict(rec.components)))
            continue
        if "expected" not in it.fields:
            raise InputError(
                "missing; expected the reward this item must get (a number, or null for "
                "cannot score)",
                path=p,
                line=line,
                field="expected",
            )
        exp = _number(it.fields["expected"], p, line, "expected")
        comps = it.fields.get("expected_components")
        ec: dict[str, float | None] | None = None
        if comps is not None:
            if not isinstance(comps, dict):
                raise InputError(
                    f"expected an object name -> number | null; got {comps!r:.60}",
                    path=p,
                    line=line,
                    field="expected_components",
                )
            ec = {str(k): _number(v, p, line, f"expected_components.{k}") for k, v in comps.items()}
        out.append(GoldenItem(it, exp, ec))
    return tuple(out)


@dataclass(frozen=True)
class SpikePair:
    """A clean item, its corrupted copy and the drop the reward must show between them."""

    id: str
    clean: Mapping[str, Any]
    corrupted: Mapping[str, Any]
    min_drop: float | None
    source: tuple[str, int]


def read_spike_pairs(path: str | Path) -> tuple[SpikePair, ...]:
    """Spike-in file: ``{"id", "clean": {...}, "corrupted": {...}, "min_drop"?: number}``;
    ``clean`` and ``corrupted`` hold the fields the reward reads."""
    seen: dict[str, int] = {}

    def parse(obj: dict[str, Any], p: str, line: int) -> SpikePair:
        iid = _id(obj, p, line)
        if iid in seen:
            raise InputError(
                f"duplicate id {iid!r} (first on line {seen[iid]})", path=p, line=line, field="id"
            )
        seen[iid] = line
        sides = []
        for key in ("clean", "corrupted"):
            v = obj.get(key)
            if not isinstance(v, dict):
                raise InputError(
                    f"{'missing' if v is None else f'got {v!r:.40}'}; expected an object with "
                    f"the fields the reward reads",
                    path=p,
                    line=line,
                    field=key,
                )
            sides.append({k: x for k, x in v.items() if k not in _HIDDEN})
        md = obj.get("min_drop")
        drop = None if md is None else _number(md, p, line, "min_drop", nullable=False)
        if drop is not None and drop < 0:
            raise InputError(
                f"expected a number >= 0; got {md!r}", path=p, line=line, field="min_drop"
            )
        return SpikePair(iid, sides[0], sides[1], drop, (p, line))

    pairs: tuple[SpikePair, ...] = tuple(read_jsonl(path, parse))  # type: ignore[arg-type]
    return pairs
