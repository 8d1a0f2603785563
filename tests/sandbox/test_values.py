"""The value layer shared by workers and parent: canonical text and the literal parser."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardkit.sandbox._values import Unserialisable, canon, parse_literal
from rewardkit.sandbox.table import values_equal

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
    | st.binary(max_size=10)
    | st.complex_numbers(allow_nan=False, allow_infinity=False)
)
hashable = st.none() | st.booleans() | st.integers() | st.text(max_size=5)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.tuples(inner)
        | st.dictionaries(hashable, inner, max_size=4)
        | st.sets(hashable, max_size=4)
        | st.frozensets(hashable, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=120, deadline=None)
@given(values)
def test_canon_round_trips_through_the_parser(v):
    text = canon(v)
    back = parse_literal(text)
    assert values_equal(back, v) or _has_nan_in_container(v)
    assert canon(back) == text  # canonical: parsing and re-serialising is the identity


def _has_nan_in_container(v):
    # values_equal compares NaN == NaN only at the top level of floats inside lists/tuples/dicts,
    # which it does; sets holding NaN cannot round-trip by equality (NaN != NaN in a set lookup).
    return isinstance(v, (set, frozenset)) and any(
        isinstance(x, float) and math.isnan(x) for x in v
    )


@given(st.sets(st.integers(), max_size=6), st.dictionaries(st.text(max_size=3), st.integers()))
def test_canon_ignores_insertion_order(s, d):
    assert canon(set(sorted(s, reverse=True))) == canon(set(sorted(s)))
    assert canon(dict(reversed(list(d.items())))) == canon(d)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ((1,), "(1,)"),
        ((), "()"),
        (set(), "set()"),
        (frozenset(), "frozenset()"),
        (frozenset({2, 1}), "frozenset({1, 2})"),
        (float("nan"), "nan"),
        (-math.inf, "-inf"),
        ({"b": 1, "a": [True, None]}, "{'a': [True, None], 'b': 1}"),
        (1 + 2j, "complex(1.0, 2.0)"),
        (complex(-0.0, -0.0), "complex(-0.0, -0.0)"),
    ],
)
def test_canon_examples(value, text):
    assert canon(value) == text
    assert values_equal(parse_literal(text), value)


class Sub(int):
    pass


@pytest.mark.parametrize("value", [Sub(3), object(), [1, object()], {"k": range(3)}, 1.5j * Sub(1)])
def test_non_plain_values_are_unserialisable(value):
    if type(value) is complex:  # complex * int subclass is a plain complex: serialisable
        assert canon(value) == "complex(0.0, 1.5)"
        return
    with pytest.raises(Unserialisable):
        canon(value)


def test_nesting_limit():
    deep: list = []
    for _ in range(150):
        deep = [deep]
    with pytest.raises(Unserialisable, match="nesting deeper"):
        canon(deep)


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('true')",
        "open('/etc/passwd')",
        "(lambda: 1)()",
        "[x for x in range(3)]",
        "a.b",
        "{**{}}",
        "...",
        "set([1], [2])",
        "1 + 2",
    ],
)
def test_parser_refuses_code(text):
    with pytest.raises((ValueError, SyntaxError)):
        parse_literal(text)


def test_user_written_complex_literals_parse():
    assert parse_literal("1+2j") == 1 + 2j and parse_literal("-3j") == -3j


def test_values_equal_rules():
    """values_equal(actual, expected): tolerance only for a float expected value."""
    assert values_equal(0.1 + 0.2, 0.3)
    assert values_equal(2, 2.0)  # a float expected value accepts an int
    assert not values_equal(2.0, 2)  # an int expected value needs an int
    assert not values_equal(True, 1)
    assert not values_equal([1, 2], (1, 2))
    assert values_equal(float("nan"), float("nan"))
    assert values_equal({"a": [1]}, {"a": [1.0]})
    assert not values_equal({"a": [1.0]}, {"a": [1]})
    assert not values_equal({"a": 1}, {"b": 1})
    assert not values_equal(1e-3, 2e-3)


# ------------------------------------------- exact types in dict keys and set members
def test_keys_and_members_compare_with_exact_types():
    assert not values_equal({True: 2}, {1: 2})
    assert not values_equal({1: 2}, {True: 2})
    assert not values_equal({True}, {1})
    assert not values_equal(frozenset({False}), frozenset({0}))
    assert not values_equal({1.0: "a"}, {1: "a"})  # keys are identities: no int/float mixing
    assert not values_equal({1.0}, {1})
    assert not values_equal({(1, True): 0}, {(1, 1): 0})  # at every depth
    assert not values_equal({frozenset({True})}, {frozenset({1})})
    assert not values_equal([{"k": {True}}], [{"k": {1}}])
    assert values_equal({1: 2}, {1: 2.0})  # values still compare numerically
    assert values_equal({float("nan"): [1]}, {float("nan"): [1.0]})
    assert values_equal({(1, "a"), frozenset({None})}, {(1, "a"), frozenset({None})})


# No floats or complex here: without the numeric tolerance, equality as a test means it is
# exactly equality of the canonical (type-exact) text, which is the independent oracle.
exact_keys = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=2) | st.binary(max_size=2),
    lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=3),
    max_leaves=5,
)
exact_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=2),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(exact_keys, inner, max_size=3)
        | st.sets(exact_keys, max_size=3)
        | st.frozensets(exact_keys, max_size=3)
    ),
    max_leaves=10,
)


def _rebuild(v, scalar):
    """``v`` with ``scalar`` applied to every scalar: values, dict keys and set members alike."""
    t = type(v)
    if t in (list, tuple):
        return t(_rebuild(x, scalar) for x in v)
    if t is dict:
        return {_rebuild(k, scalar): _rebuild(x, scalar) for k, x in v.items()}
    if t in (set, frozenset):
        return t(_rebuild(x, scalar) for x in v)
    return scalar(v)


def _bools_to_ints(x):
    return int(x) if type(x) is bool else x


def _small_ints_to_bools(x):
    return bool(x) if type(x) is int and x in (0, 1) else x


@settings(max_examples=300, deadline=None)
@given(exact_values, st.sampled_from([lambda x: x, _bools_to_ints, _small_ints_to_bools]))
def test_values_equal_is_canonical_text_equality_without_floats(v, change):
    w = _rebuild(v, change)
    assert values_equal(v, w) == (canon(v) == canon(w))
    assert values_equal(w, v) == values_equal(v, w)


@settings(max_examples=200, deadline=None)
@given(exact_values)
def test_a_bool_anywhere_is_not_an_int(v):
    w = _rebuild(v, _bools_to_ints)
    has_bool = "True" in canon(v) or "False" in canon(v)
    assert values_equal(v, w) == (not has_bool)


def _int_keys_to_floats(v, in_key=False):
    t = type(v)
    if t in (list, tuple):
        return t(_int_keys_to_floats(x, in_key) for x in v)
    if t is dict:
        return {_int_keys_to_floats(k, True): _int_keys_to_floats(x, in_key) for k, x in v.items()}
    if t in (set, frozenset):
        return t(_int_keys_to_floats(x, True) for x in v)
    return float(v) if t is int and in_key else v


@settings(max_examples=200, deadline=None)
@given(exact_values)
def test_ints_become_floats_only_as_values(v):
    """int → float is numeric equality for values but a different key or set member."""
    as_values = _rebuild(v, lambda x: float(x) if type(x) is int else x)
    in_keys = _int_keys_to_floats(v)
    assert values_equal(v, as_values) == (canon(_int_keys_to_floats(v)) == canon(v))
    assert values_equal(v, in_keys) == (canon(in_keys) == canon(v))
