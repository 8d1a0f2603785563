"""Rule packs: declarative audit rules loaded from TOML and validated at load.

Usage::

    from rewardkit.bioaudit.rules import load_rulepack
    pack = load_rulepack("scrna")            # the shipped pack, or a path to your own TOML
    pack.rules[0].id, pack.rules[0].level    # 'scrna.qc.no_mito_filter', 1

A pack file has a ``[pack]`` header and a list of ``[[rules]]``::

    [pack]
    paradigm = "scrna"
    version = "1.0.0"
    actions = ["qc_filter", "no_doublet_detection", ...]   # every action the pack knows

    [[rules]]
    id = "scrna.doublet.skipped"
    actions = ["no_doublet_detection"]
    level = 0                                # the level a violation gets: 0, 1 or 2
    required_context = ["platform", "n_cells"]
    rationale = "Droplet data always carry heterotypic doublets ..."
    source = "Luecken & Theis 2019, Mol Syst Biol 15:e8746 (doublet detection)"
    when = [{ field = "context.platform", op = "eq", value = "droplet" }]

A pack declares the type of every field its rules read, in ``[types.context]`` and
``[types.params]`` (``"int"``, ``"number"``, ``"bool"`` or ``"str"``)::

    [types.context]
    platform = "str"
    n_cells = "int"

A decision whose field holds a value of another type — ``"1"`` or ``true`` for an int, NaN or
Infinity for a number, a list for a string — cannot be evaluated (level −1, "cannot evaluate:
params.<name> expected <type>; got <value>"); it is never judged "no rule violated". Numbers
must be finite with ``|x| <= 1e15``. A rule that reads an undeclared field is refused at load.

``when`` is a list of clauses that must all hold (an empty list always fires). A clause either
tests the decision itself — ``field`` is ``params.<key>`` or ``context.<key>``, ``op`` one of
``eq ne lt le gt ge in not_in missing present`` — or, with ``earlier = "<action>"``, the earlier
decisions: ``op = "absent"`` / ``"present"`` alone, or a ``field`` test on the most recent
earlier decision with that action (false when there is none). A missing field makes every op
false except ``missing``; ordering ops need numbers on both sides.

A bad file raises :class:`~rewardkit.errors.InputError` naming the file, the rule id and the
reason, before any rule is used.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any

from .._io import read_toml
from .._json import JsonMixin, content_hash
from ..errors import InputError

__all__ = ["FIELD_TYPES", "OPS", "Clause", "Rule", "RulePack", "load_rulepack", "type_error"]

FIELD_OPS = ("eq", "ne", "lt", "le", "gt", "ge", "in", "not_in", "missing", "present")
EARLIER_OPS = ("absent", "present")
OPS = tuple(dict.fromkeys(FIELD_OPS + EARLIER_OPS))
_CMP = {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge}
_ORDER = set(_CMP)
_NO_VALUE = {"missing", "present", "absent"}
_RULE_KEYS = {"id", "actions", "level", "required_context", "rationale", "source", "when"}
_CLAUSE_KEYS = {"field", "op", "value", "earlier"}
SHIPPED = ("deg", "pan", "scrna")
MAX_MAGNITUDE = 10**15  # a declared int or number beyond this cannot be evaluated
FIELD_TYPES = ("int", "number", "bool", "str")
_TYPE_TEXT = {
    "int": "int (|x| <= 1e15)",
    "number": "number (finite, |x| <= 1e15)",
    "bool": "bool (true or false)",
    "str": "str",
}


def _has_type(x: Any, kind: str) -> bool:
    if kind == "bool":
        return isinstance(x, bool)
    if kind == "str":
        return isinstance(x, str)
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return False
    if isinstance(x, int):  # compared as an int: a 400-digit int must not reach float()
        return abs(x) <= MAX_MAGNITUDE
    return kind == "number" and math.isfinite(x) and abs(x) <= MAX_MAGNITUDE


def type_error(field: str, value: Any, kind: str) -> str | None:
    """``"params.n expected int (…); got '1'"`` when ``value`` is not a ``kind``, else None."""
    if _has_type(value, kind):
        return None
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return f"{field} expected {_TYPE_TEXT[kind]}; got {shown}"


def _number(x: Any) -> bool:
    return _has_type(x, "number")


def _equal(a: Any, b: Any) -> bool:
    # A flag never equals a count: True == 1 in Python, not in a rule.
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


def _lookup(decision: Mapping[str, Any], field: str) -> tuple[bool, Any]:
    section, key = field.split(".", 1)
    table = decision.get(section)
    if not isinstance(table, Mapping) or key not in table:
        return False, None
    return True, table[key]


@dataclass(frozen=True)
class Clause(JsonMixin):
    """One test of a rule's ``when``; ``earlier`` set means it looks at earlier decisions."""

    op: str
    field: str | None = None
    value: Any = None
    earlier: str | None = None

    def _test(self, decision: Mapping[str, Any]) -> bool:
        assert self.field is not None
        found, x = _lookup(decision, self.field)
        if self.op == "missing":
            return not found
        if not found:
            return False
        if self.op == "present":
            return True
        if self.op in _ORDER:
            if not _number(x):
                return False
            return bool(_CMP[self.op](x, self.value))
        if self.op in ("eq", "ne"):
            return _equal(x, self.value) == (self.op == "eq")
        return any(_equal(x, m) for m in self.value) == (self.op == "in")

    def holds(self, decision: Mapping[str, Any], history: Sequence[Mapping[str, Any]]) -> bool:
        if self.earlier is None:
            return self._test(decision)
        prior = [d for d in history if d.get("action") == self.earlier]
        if self.field is None:
            return (not prior) if self.op == "absent" else bool(prior)
        return bool(prior) and self._test(prior[-1])


@dataclass(frozen=True)
class Rule(JsonMixin):
    """One audit rule: a decision of one of ``actions`` that meets every clause gets ``level``."""

    id: str
    actions: tuple[str, ...]
    level: int
    when: tuple[Clause, ...]
    rationale: str
    source: str
    required_context: tuple[str, ...] = ()

    def fires(self, decision: Mapping[str, Any], history: Sequence[Mapping[str, Any]]) -> bool:
        return all(c.holds(decision, history) for c in self.when)


@dataclass(frozen=True)
class RulePack(JsonMixin):
    """A paradigm's validated rules and the actions it knows (any other action is level −1)."""

    paradigm: str
    version: str
    actions: tuple[str, ...]
    rules: tuple[Rule, ...]
    types: Mapping[str, str]  # "params.alpha" → "number": the type of every field rules read

    @cached_property
    def hash(self) -> str:
        return content_hash(self.to_dict())

    def rules_for(self, action: str) -> tuple[Rule, ...]:
        return tuple(r for r in self.rules if action in r.actions)


def fields_read(rule: Rule) -> tuple[tuple[str, str | None], ...]:
    """(field, earlier action or None) for every field ``rule`` reads, required context first."""
    out: list[tuple[str, str | None]] = [(f"context.{k}", None) for k in rule.required_context]
    out += [(c.field, c.earlier) for c in rule.when if c.field is not None]
    return tuple(dict.fromkeys(out))


def _shipped_path(name: str) -> Path:
    return Path(str(resources.files("rewardkit.bioaudit") / "rulepacks" / f"{name}.toml"))


def load_rulepack(source: str | Path) -> RulePack:
    """Load a shipped pack by paradigm name (``"deg"``, ``"pan"``, ``"scrna"``) or a TOML file."""
    path = _shipped_path(source) if isinstance(source, str) and source in SHIPPED else Path(source)
    return parse_rulepack(read_toml(path), str(path))


def _fail(path: str, rule: str | None, reason: str) -> InputError:
    where = f"rule '{rule}': " if rule else ""
    return InputError(where + reason, path=path)


def _str_list(x: Any) -> bool:
    return isinstance(x, list) and all(isinstance(s, str) and s for s in x)


def _clause(raw: Any, path: str, rid: str, i: int) -> Clause:
    at = f"when[{i}]"
    if not isinstance(raw, dict):
        raise _fail(path, rid, f"{at} must be a table; got {raw!r:.60}")
    unknown = sorted(set(raw) - _CLAUSE_KEYS)
    if unknown:
        raise _fail(
            path, rid, f"{at} has unknown key '{unknown[0]}'; accepted: {sorted(_CLAUSE_KEYS)}"
        )
    op: Any = raw.get("op")
    field, earlier = raw.get("field"), raw.get("earlier")
    if earlier is not None and not (isinstance(earlier, str) and earlier):
        raise _fail(path, rid, f"{at}.earlier must be an action name; got {earlier!r}")
    ops = EARLIER_OPS if earlier is not None and field is None else FIELD_OPS
    if op not in ops:
        raise _fail(path, rid, f"{at}.op must be one of {', '.join(ops)}; got {op!r}")
    section, _, key = field.partition(".") if isinstance(field, str) else ("", "", "")
    if (field is not None or earlier is None) and not (section in ("params", "context") and key):
        raise _fail(
            path, rid, f"{at}.field must be 'params.<key>' or 'context.<key>'; got {field!r}"
        )
    if op in _NO_VALUE:
        if "value" in raw:
            raise _fail(path, rid, f"{at}: op '{op}' takes no value")
        return Clause(op=op, field=field, earlier=earlier)
    if "value" not in raw:
        raise _fail(path, rid, f"{at}: op '{op}' needs a value")
    value = raw["value"]
    if op in _ORDER and not _number(value):
        raise _fail(path, rid, f"{at}: op '{op}' needs a number; got {value!r}")
    if op in ("in", "not_in"):
        if not isinstance(value, list) or not value:
            raise _fail(path, rid, f"{at}: op '{op}' needs a non-empty list; got {value!r}")
        value = tuple(value)
    return Clause(op=op, field=field, value=value, earlier=earlier)


def _rule(raw: Any, path: str, i: int, known: tuple[str, ...]) -> Rule:
    if not isinstance(raw, dict):
        raise _fail(path, None, f"rules[{i}] must be a table")
    rid = raw.get("id")
    if not (isinstance(rid, str) and rid):
        raise _fail(path, None, f"rules[{i}] needs a non-empty string 'id'; got {rid!r}")
    unknown = sorted(set(raw) - _RULE_KEYS)
    if unknown:
        raise _fail(path, rid, f"unknown key '{unknown[0]}'; accepted: {sorted(_RULE_KEYS)}")
    for key in ("actions", "level", "rationale", "source"):
        if key not in raw:
            raise _fail(path, rid, f"missing key '{key}'")
    actions = raw["actions"]
    if not _str_list(actions) or not actions:
        raise _fail(
            path, rid, f"'actions' must be a non-empty list of strings; got {actions!r:.60}"
        )
    for a in actions:
        if a not in known:
            raise _fail(path, rid, f"action '{a}' is not in [pack].actions")
    level = raw["level"]
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level <= 2:
        raise _fail(
            path, rid, f"'level' must be an int in 0..2 (3 means no violation); got {level!r}"
        )
    for key in ("rationale", "source"):
        if not (isinstance(raw[key], str) and raw[key].strip()):
            raise _fail(path, rid, f"'{key}' must be a non-empty string")
    req = raw.get("required_context", [])
    if not isinstance(req, list) or not all(isinstance(s, str) and s for s in req):
        raise _fail(
            path, rid, f"'required_context' must be a list of context keys; got {req!r:.60}"
        )
    when = raw.get("when", [])
    if not isinstance(when, list):
        raise _fail(path, rid, f"'when' must be a list of clauses; got {when!r:.60}")
    return Rule(
        id=rid,
        actions=tuple(actions),
        level=level,
        when=tuple(_clause(c, path, rid, j) for j, c in enumerate(when)),
        rationale=raw["rationale"].strip(),
        source=raw["source"].strip(),
        required_context=tuple(req),
    )


def _types(raw: Any, path: str) -> dict[str, str]:
    if raw is None:
        return {}  # a pack whose rules read no field needs no [types]
    if not isinstance(raw, dict):
        raise _fail(path, None, "[types] must hold the tables [types.context], [types.params]")
    out: dict[str, str] = {}
    accepted = ", ".join(FIELD_TYPES)
    for section, table in raw.items():
        if section not in ("context", "params") or not isinstance(table, dict):
            raise _fail(
                path, None, f"[types] has '{section}'; accepted: [types.context], [types.params]"
            )
        for key, kind in table.items():
            if kind not in FIELD_TYPES:
                msg = f"[types.{section}].{key} must be one of {accepted}; got {kind!r}"
                raise _fail(path, None, msg)
            out[f"{section}.{key}"] = kind
    return out


def _check_rule_types(rule: Rule, types: Mapping[str, str], path: str) -> None:
    for field, _ in fields_read(rule):
        if field not in types:
            section, _, key = field.partition(".")
            raise _fail(
                path,
                rule.id,
                f"reads {field}, which [types.{section}] does not declare (add {key} = "
                f"one of {', '.join(repr(t) for t in FIELD_TYPES)})",
            )
    for i, c in enumerate(rule.when):
        if c.field is None or c.op in _NO_VALUE:
            continue
        kind = types[c.field]
        if c.op in _ORDER and kind not in ("int", "number"):
            raise _fail(path, rule.id, f"when[{i}]: op '{c.op}' on {c.field}, declared {kind}")
        values = c.value if c.op in ("in", "not_in") else (c.value,)
        for v in values:
            if not _has_type(v, "number" if kind == "int" and c.op in _ORDER else kind):
                raise _fail(
                    path, rule.id, f"when[{i}]: value {v!r} is not a {kind} ({c.field} is {kind})"
                )


def parse_rulepack(data: Mapping[str, Any], path: str = "<rulepack>") -> RulePack:
    """Validate a parsed TOML document into a :class:`RulePack` (errors name file and rule)."""
    unknown = sorted(set(data) - {"pack", "rules", "types"})
    if unknown:
        raise _fail(
            path, None, f"unknown top-level key '{unknown[0]}'; accepted: pack, rules, types"
        )
    head = data.get("pack")
    if not isinstance(head, dict):
        raise _fail(path, None, "missing table [pack] with paradigm, version and actions")
    for key in ("paradigm", "version"):
        if not (isinstance(head.get(key), str) and head[key]):
            raise _fail(path, None, f"[pack].{key} must be a non-empty string")
    actions = head.get("actions")
    if not _str_list(actions) or not actions or len(set(actions)) != len(actions):
        raise _fail(path, None, "[pack].actions must be a non-empty list of distinct action names")
    raw_rules = data.get("rules")
    if not isinstance(raw_rules, list) or not raw_rules:
        raise _fail(path, None, "no [[rules]]: a pack needs at least one rule")
    rules = [_rule(r, path, i, tuple(actions)) for i, r in enumerate(raw_rules)]
    seen: set[str] = set()
    for r in rules:
        if r.id in seen:
            raise _fail(path, r.id, "duplicate rule id")
        seen.add(r.id)
    types = _types(data.get("types"), path)
    for r in rules:
        _check_rule_types(r, types, path)
    return RulePack(
        paradigm=head["paradigm"],
        version=head["version"],
        actions=tuple(actions),
        rules=tuple(rules),
        types=types,
    )
