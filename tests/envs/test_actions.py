"""The strict action parser: every parser trick is rejected with a reason, nothing raises."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardkit.envs.actions import parse_action

GOOD = {"status": "met", "value": 1.2, "unit": "10*3/uL", "evidence": ["o-1"]}


def test_tool_and_answer_parse():
    a = parse_action('{"tool": "get_patient", "args": {"id": "p-1"}}')
    assert (a.kind, a.tool, a.args) == ("tool", "get_patient", {"id": "p-1"})
    b = parse_action({"answer": GOOD})
    assert b.kind == "answer"
    assert b.answer == {**GOOD, "note": ""}
    c = parse_action('{"answer": {"status": "unknown"}}')
    assert c.answer == {
        "status": "unknown",
        "value": None,
        "unit": None,
        "evidence": [],
        "note": "",
    }


@pytest.mark.parametrize(
    "raw, match",
    [
        ("", "empty action"),
        ("   ", "empty action"),
        ("{", "not valid JSON"),
        ('{"answer": {"status": "met", "status": "not_met"}}', "duplicate key 'status'"),
        ('{"tool": "a", "tool": "b", "args": {}}', "duplicate key 'tool'"),
        (json.dumps({"answer": GOOD, "confidence": 1}), "exactly the keys"),
        (json.dumps({"answer": {**GOOD, "why": "x"}}), "unknown key 'why'"),
        ('{"answer": {"status": "met", "value": NaN}}', "NaN"),
        ('{"answer": {"status": "met", "value": Infinity}}', "Infinity"),
        ('{"answer": {"status": "met", "value": 1e400}}', "out of range"),
        ('{"answer": {"status": "met", "value": 1e308}}', "out of range"),
        ('{"answer": {"status": "met", "value": ' + "9" * 5000 + "}}", "not valid JSON"),
        (json.dumps(json.dumps({"answer": GOOD})), "JSON inside a string"),
        (json.dumps({"answer": {**GOOD, "value": "1.2"}}), "must be a number"),
        (json.dumps({"answer": {**GOOD, "value": True}}), "must be a number"),
        (json.dumps({"answer": {**GOOD, "status": "MET"}}), "'status' must be one of"),
        (json.dumps({"answer": {**GOOD, "evidence": "o-1"}}), "'evidence' must be a list"),
        (json.dumps({"answer": {**GOOD, "evidence": [1]}}), "'evidence' must be a list"),
        (json.dumps({"tool": "x", "args": json.dumps({"id": 1})}), "'args' must be an object"),
        ('{"tool": 5}', "'tool' must be a tool name"),
        ("[1, 2]", "must be a JSON object; got list"),
        ("null", "must be a JSON object; got NoneType"),
        (b"\xff\xfe", "not UTF-8"),
        ({"answer": {**GOOD, "value": float("nan")}}, "NaN"),
        (42, "must be a JSON object; got int"),
    ],
)
def test_tricks_are_rejected_with_a_reason(raw, match):
    a = parse_action(raw)
    assert a.kind == "invalid"
    assert match in (a.error or "")


@settings(max_examples=120, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text_never_raises(text):
    assert parse_action(text).kind in ("tool", "answer", "invalid")


_json = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=120, deadline=None)
@given(_json)
def test_arbitrary_json_values_never_raise_and_answers_are_clean(obj):
    a = parse_action(obj)
    if a.kind == "answer":  # whatever got through is exactly the documented shape
        assert set(a.answer) == {"status", "value", "unit", "evidence", "note"}
        assert a.answer["value"] is None or abs(a.answer["value"]) <= 1e9


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "{",
        '{"tool": 7}',
        '{"tool": "query", "args": []}',
        '{"tool": "query", "extra": 1}',
        '{"answer": {"status": "met"}, "tool": "x"}',
        '{"a": 1, "a": 2}',
        '"{\\"tool\\": \\"query\\"}"',
        {"tool": ["x"] * 100},
        "[" * 40 + "]" * 40,
    ],
)
def test_every_environment_reads_the_action_envelope_alike(raw):
    """One envelope parser: the SQL actions differ only in their answer."""
    from rewardkit.envs.sql.actions import parse_sql_action

    fhir, sql = parse_action(raw), parse_sql_action(raw)
    assert fhir.kind == sql.kind == "invalid"
    assert fhir.error == sql.error and len(fhir.error) <= 200
