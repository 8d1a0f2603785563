"""Rule packs: every shipped rule fires on its positive example and stays silent on the clean
decision; the condition language; bad rule files fail at load with file, rule id and reason."""

from __future__ import annotations

import pytest

from rewardkit.bioaudit import PARADIGMS, Engine, load_rulepack
from rewardkit.bioaudit.defects import MUTATIONS, apply
from rewardkit.bioaudit.rules import Clause
from rewardkit.bioaudit.templates import full_template
from rewardkit.errors import InputError

ENGINE = Engine()
RULES = {r.id: (p, r) for p in PARADIGMS for r in load_rulepack(p).rules}


def test_packs_have_at_least_15_cited_rules_each():
    for p in PARADIGMS:
        pack = load_rulepack(p)
        assert pack.paradigm == p
        assert len(pack.rules) >= 15, p
        for r in pack.rules:
            assert r.id.startswith(p + ".")
            assert r.source and r.rationale
            # every source names an author or a tool and a year
            assert any(ch.isdigit() for ch in r.source), r.id


def test_every_rule_has_an_example():
    # "don't forget any": the positive examples cover the whole pack and nothing else
    assert set(MUTATIONS) == set(RULES)


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_rule_fires_on_positive_and_not_on_negative(rule_id):
    paradigm, rule = RULES[rule_id]
    clean = full_template(paradigm)
    res = apply(MUTATIONS[rule_id], clean)
    assert res is not None, f"{rule_id}: the template has no target"
    mutated, flagged, _ = res
    i = next(k for k, d in enumerate(mutated) if d["decision_id"] == flagged)
    pos = ENGINE.audit_decision(mutated[i], mutated[:i])
    assert pos.rule_ids == (rule_id,)
    assert pos.level == rule.level
    assert rule_id in pos.rationale
    # the negative: the same decision of the clean trajectory
    j = next(k for k, d in enumerate(clean) if d["decision_id"] == flagged)
    neg = ENGINE.audit_decision(clean[j], clean[:j])
    assert neg.level == 3 and neg.rule_ids == ()
    # and nothing else in the mutated trajectory fires
    others = [jj for k, jj in enumerate(ENGINE.audit(mutated)) if k != i]
    assert all(o.level == 3 for o in others)


@pytest.mark.parametrize("paradigm", PARADIGMS)
def test_clean_full_template_is_all_level_3(paradigm):
    assert set(ENGINE.levels(full_template(paradigm))) == {3}


def d(params=None, context=None, action="x"):
    return {"decision_id": "d", "action": action, "params": params or {}, "context": context or {}}


@pytest.mark.parametrize(
    "clause, decision, expected",
    [
        (Clause("eq", "params.a", 1), d({"a": 1}), True),
        (Clause("eq", "params.a", 1), d({"a": True}), False),  # a flag never equals a count
        (Clause("eq", "params.a", True), d({"a": 1}), False),
        (Clause("eq", "params.a", False), d({"a": False}), True),
        (Clause("ne", "params.a", 1), d({"a": 2}), True),
        (Clause("ne", "params.a", 1), d({}), False),  # missing field: every op false ...
        (Clause("missing", "params.a"), d({}), True),  # ... except missing
        (Clause("present", "params.a"), d({"a": None}), True),
        (Clause("lt", "context.n", 3), d(context={"n": 2}), True),
        (Clause("lt", "context.n", 3), d(context={"n": 3}), False),
        (Clause("le", "context.n", 3), d(context={"n": 3}), True),
        (Clause("gt", "context.n", 3), d(context={"n": "10"}), False),  # needs a number
        (Clause("ge", "context.n", 3), d(context={"n": True}), False),
        (Clause("in", "params.m", ("t", "w")), d({"m": "w"}), True),
        (Clause("not_in", "params.m", ("t", "w")), d({"m": "z"}), True),
        (Clause("not_in", "params.m", ("t", "w")), d({}), False),
    ],
)
def test_clause_semantics(clause, decision, expected):
    assert clause.holds(decision, []) is expected


def test_earlier_clauses_look_only_at_history_and_the_latest_match():
    hist = [d({"r": "ok"}, action="check"), d({"r": "bad"}, action="check")]
    assert Clause("absent", earlier="check").holds(d(), []) is True
    assert Clause("absent", earlier="check").holds(d(action="check"), []) is True  # not itself
    assert Clause("present", earlier="check").holds(d(), hist) is True
    assert Clause("eq", "params.r", "bad", earlier="check").holds(d(), hist) is True
    assert Clause("eq", "params.r", "ok", earlier="check").holds(d(), hist) is False
    assert Clause("eq", "params.r", "ok", earlier="check").holds(d(), []) is False


HEAD = '[pack]\nparadigm = "t"\nversion = "1"\nactions = ["a", "b"]\n'
RULE = '[[rules]]\nid = "t.r1"\nactions = ["a"]\nlevel = 0\nrationale = "why"\nsource = "X 2020"\n'


@pytest.mark.parametrize(
    "text, match",
    [
        (
            HEAD + RULE.replace("level = 0", "level = 3"),
            r"rule 't\.r1': 'level' must be an int in 0\.\.2",
        ),
        (
            HEAD + RULE.replace('["a"]', '["zzz"]'),
            r"rule 't\.r1': action 'zzz' is not in \[pack\]\.actions",
        ),
        (HEAD + RULE + RULE, r"rule 't\.r1': duplicate rule id"),
        (HEAD + RULE.replace('rationale = "why"\n', ""), r"rule 't\.r1': missing key 'rationale'"),
        (
            HEAD + RULE.replace('source = "X 2020"', 'source = " "'),
            r"rule 't\.r1': 'source' must be a non-empty",
        ),
        (
            HEAD + RULE + 'when = [{ field = "params.x", op = "like", value = 1 }]\n',
            r"rule 't\.r1': when\[0\]\.op must be one of eq",
        ),
        (
            HEAD + RULE + 'when = [{ field = "x", op = "eq", value = 1 }]\n',
            r"when\[0\]\.field must be 'params\.<key>' or 'context\.<key>'",
        ),
        (
            HEAD + RULE + 'when = [{ field = "params.x", op = "missing", value = 1 }]\n',
            r"op 'missing' takes no value",
        ),
        (
            HEAD + RULE + 'when = [{ field = "params.x", op = "lt", value = "3" }]\n',
            r"op 'lt' needs a number",
        ),
        (
            HEAD + RULE + 'when = [{ field = "params.x", op = "in", value = [] }]\n',
            r"op 'in' needs a non-empty list",
        ),
        (
            HEAD + RULE + 'when = [{ earlier = "b", op = "eq" , value = 1}]\n',
            r"when\[0\]\.op must be one of absent, present",
        ),
        (HEAD + RULE + 'colour = "red"\n', r"rule 't\.r1': unknown key 'colour'"),
        (HEAD + RULE + 'required_context = "n"\n', r"'required_context' must be a list"),
        (HEAD, r"no \[\[rules\]\]"),
        (RULE, r"missing table \[pack\]"),
        (HEAD + "[[rules]]\nlevel = 1\n", r"rules\[0\] needs a non-empty string 'id'"),
        ("[pack\n", r"not valid TOML"),
    ],
)
def test_bad_rule_file_fails_at_load_naming_file_rule_and_reason(tmp_path, text, match):
    p = tmp_path / "bad_pack.toml"
    p.write_text(text)
    with pytest.raises(InputError, match=r"bad_pack\.toml") as exc:
        load_rulepack(p)
    assert exc.match(match)


def test_user_pack_from_path(tmp_path):
    p = tmp_path / "mine.toml"
    p.write_text(HEAD + RULE)
    eng = Engine(p)
    assert eng.audit_decision(d(action="a"), []).level == 0
    assert eng.audit_decision(d(action="b"), []).level == 3
    assert eng.audit_decision(d(action="c"), []).level == -1
