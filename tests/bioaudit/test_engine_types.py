"""The engine fails closed on wrong-typed fields: attack by class, over every declared field.

For every field a shipped pack declares and every decision of the frozen benchmark whose rules
read it, the value is replaced by each wrong-typed value of its class (a number as a string, a
bool for an int, NaN, Infinity, a 400-digit int, null, a list, a table). Every such decision is
level −1 "cannot evaluate: <field> expected <type>; got <value>" — never a level the rules did
not decide, and never a crash. The same attack on the engine without the type check (the naive
control) gets level 3 "no rule violated" for many of them: the check is what stops it.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest

from rewardkit.bioaudit import Engine, load_benchmark
from rewardkit.bioaudit.rules import FIELD_TYPES, fields_read, load_rulepack
from rewardkit.errors import InputError

HUGE = 10**400
BAD: dict[str, tuple[Any, ...]] = {
    "int": (
        "1",
        "3",
        True,
        False,
        1.0,
        math.nan,
        math.inf,
        -math.inf,
        HUGE,
        -HUGE,
        None,
        [1],
        {"v": 1},
    ),
    "number": ("0.05", True, math.nan, math.inf, -math.inf, HUGE, 1e300, None, [0.05], {"v": 1}),
    "bool": ("true", "false", 1, 0, None, "yes", [True]),
    "str": (1, 0.5, True, None, ["t_test"], {"method": "t_test"}),
}
ENGINE = Engine()
BENCH = load_benchmark()
DECISIONS = [
    (t.decisions[:i], d) for t in (*BENCH.tasks, *BENCH.legacy) for i, d in enumerate(t.decisions)
]


def _targets() -> list[tuple[str, str, list[Any], dict[str, Any]]]:
    """(pack, field, history, decision) for each field a decision's rules read and it holds."""
    out, seen = [], set()
    for history, d in DECISIONS:
        pack = ENGINE.packs[d["context"]["paradigm"]]
        for rule in pack.rules_for(d["action"]):
            for field, earlier in fields_read(rule):
                section, key = field.split(".", 1)
                at = (pack.paradigm, field, d["action"])
                if earlier is None and key in (d.get(section) or {}) and at not in seen:
                    seen.add(at)
                    out.append((pack.paradigm, field, list(history), dict(d)))
    return out


TARGETS = _targets()


def _with(decision: dict[str, Any], field: str, value: Any) -> dict[str, Any]:
    d = copy.deepcopy(decision)
    section, key = field.split(".", 1)
    d[section] = {**d[section], key: value}
    return d


def test_the_attack_covers_every_type_and_most_fields() -> None:
    kinds = {ENGINE.packs[p].types[f] for p, f, _, _ in TARGETS}
    assert kinds == set(FIELD_TYPES)
    fields = {(p, f) for p, f, _, _ in TARGETS}
    declared = {(p, f) for p, pack in ENGINE.packs.items() for f in pack.types}
    assert len(fields) >= 0.6 * len(declared), sorted(declared - fields)


@pytest.mark.parametrize("pack, field, history, decision", TARGETS, ids=lambda x: str(x)[:40])
def test_a_wrong_typed_field_cannot_be_evaluated(
    pack: str, field: str, history: list[Any], decision: dict[str, Any]
) -> None:
    kind = ENGINE.packs[pack].types[field]
    assert ENGINE.audit_decision(decision, history).level != -1  # the control is evaluable
    for bad in BAD[kind]:
        j = ENGINE.audit_decision(_with(decision, field, bad), history)
        assert j.level == -1, (field, bad, j)
        assert j.rationale.startswith(f"cannot evaluate: {field} expected {kind}"), j.rationale
        assert j.rule_ids


def test_the_naive_engine_gives_full_credit_to_wrong_types(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the type check the attack works: many wrong-typed decisions pass as level 3."""
    monkeypatch.setattr(Engine, "_wrong_types", staticmethod(lambda *a: None))
    naive = Engine()
    passed = 0
    for pack, field, history, decision in TARGETS:
        for bad in BAD[ENGINE.packs[pack].types[field]]:
            try:
                level = naive.audit_decision(_with(decision, field, bad), history).level
            except (OverflowError, TypeError):
                continue  # the undefended engine also crashes on some (400-digit ints)
            truth = ENGINE.audit_decision(decision, history).level
            passed += level == 3 and truth < 3
    assert passed >= 20, passed


def test_the_issue_example_replicates_per_group() -> None:
    d = {
        "decision_id": "d1",
        "action": "de_test",
        "params": {"method": "deseq2"},
        "context": {"paradigm": "deg", "n_replicates_per_group": 1},
    }
    assert ENGINE.audit_decision(d).level == 0
    for bad, shown in (("1", "'1'"), (math.nan, "nan"), (math.inf, "inf"), (True, "True")):
        j = ENGINE.audit_decision(_with(d, "context.n_replicates_per_group", bad))
        assert j.level == -1
        assert j.rationale == (
            f"cannot evaluate: context.n_replicates_per_group expected int (|x| <= 1e15); "
            f"got {shown}"
        )


def test_a_wrong_type_on_the_earlier_decision_a_rule_reads() -> None:
    pack = ENGINE.packs["pan"]
    rules = [(r, f, e) for r in pack.rules for f, e in fields_read(r) if e is not None]
    assert rules, "the pan pack has a rule that reads an earlier decision"
    rule, field, earlier = rules[0]
    section, key = field.split(".", 1)
    prior = {"decision_id": "p", "action": earlier, "params": {}, "context": {"paradigm": "pan"}}
    prior[section] = {key: BAD[pack.types[field]][0]}
    ctx = {"paradigm": "pan", **{k: 1 for k in rule.required_context}}
    d = {"decision_id": "d", "action": rule.actions[0], "params": {}, "context": ctx}
    j = ENGINE.audit_decision(d, [prior])
    assert j.level == -1 and "earlier" in j.rationale and field in j.rationale


@pytest.mark.parametrize("params", [["t_test"], "t_test", 3])
def test_params_that_are_not_a_table(params: Any) -> None:
    d = {
        "decision_id": "d",
        "action": "de_test",
        "params": params,
        "context": {"paradigm": "deg", "n_replicates_per_group": 4},
    }
    j = ENGINE.audit_decision(d)
    assert j.level == -1 and "params expected a table" in j.rationale


HEAD = '[pack]\nparadigm = "t"\nversion = "1"\nactions = ["a"]\n'
RULE = '[[rules]]\nid = "t.r"\nactions = ["a"]\nlevel = 0\nrationale = "w"\nsource = "s"\n'


@pytest.mark.parametrize(
    ("types", "when", "match"),
    [
        ("", 'when = [{ field = "params.k", op = "lt", value = 2 }]', r"reads params\.k, which"),
        (
            '[types.params]\nj = "int"\n',
            'when = [{ field = "params.k", op = "lt", value = 2 }]',
            r"reads params\.k, which \[types\.params\] does not declare",
        ),
        ('[types.params]\nk = "integer"\n', "", r"\[types\.params\]\.k must be one of int"),
        (
            '[types.params]\nk = "str"\n',
            'when = [{ field = "params.k", op = "lt", value = 2 }]',
            r"op 'lt' on params\.k, declared str",
        ),
        (
            '[types.params]\nk = "bool"\n',
            'when = [{ field = "params.k", op = "eq", value = 1 }]',
            r"value 1 is not a bool",
        ),
        ('[types.other]\nk = "bool"\n', "", r"accepted: \[types\.context\], \[types\.params\]"),
    ],
)
def test_a_pack_must_declare_consistent_types(types: str, when: str, match: str, tmp_path) -> None:
    p = tmp_path / "pack.toml"
    p.write_text(HEAD + types + RULE + when + "\n")
    with pytest.raises(InputError, match=match):
        load_rulepack(p)


def test_shipped_packs_declare_every_field_they_read() -> None:
    for name in ("deg", "pan", "scrna"):
        pack = load_rulepack(name)
        read = {f for r in pack.rules for f, _ in fields_read(r)}
        assert read <= set(pack.types), read - set(pack.types)
