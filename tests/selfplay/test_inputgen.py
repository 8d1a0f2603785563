"""The declarative input-generator vocabulary: every kind draws what its table says and
consumes the rng exactly as the written-out numpy calls do; every bad spec is refused with
the field and what is accepted."""

from __future__ import annotations

import ast
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardkit.errors import InputError
from rewardkit.selfplay.inputgen import KINDS, draw, draw_args, parse_args, parse_spec

SEEDS = st.integers(0, 2**32 - 1)
# no per-example deadline: the machine running the suite may be loaded; a draw takes < 1 ms
NO_DEADLINE = settings(deadline=None)
BOUNDS = st.tuples(st.integers(-50, 50), st.integers(0, 60)).map(lambda t: (t[0], t[0] + t[1]))
LENS = st.tuples(st.integers(0, 6), st.integers(0, 6)).map(lambda t: [t[0], t[0] + t[1]])
ALPHABETS = st.text(alphabet="abcxyz01 ", min_size=1, max_size=6)


def INT(lo, hi):
    return {"kind": "int", "lo": lo, "hi": hi}


def STR(ln, alphabet):
    return {"kind": "str", "len": ln, "alphabet": alphabet}


def same_stream(a: np.random.Generator, b: np.random.Generator) -> bool:
    return a.bit_generator.state == b.bit_generator.state


def run(spec, seed, oracle):
    """draw(spec) and the oracle on two copies of one stream: equal values, equal state."""
    r1, r2 = np.random.default_rng(seed), np.random.default_rng(seed)
    got = draw(parse_spec(spec, field="s"), r1)
    want = oracle(r2)
    assert got == want and type(got) is type(want)
    assert same_stream(r1, r2)
    return got


@NO_DEADLINE
@given(BOUNDS, SEEDS)
def test_int(b, seed):
    v = run(INT(*b), seed, lambda r: int(r.integers(b[0], b[1] + 1)))
    assert b[0] <= v <= b[1]


@NO_DEADLINE
@given(LENS, BOUNDS, SEEDS)
def test_list_of_ints_is_one_vectorised_draw(ln, b, seed):
    def oracle(r):
        n = int(r.integers(ln[0], ln[1] + 1))
        return [int(v) for v in r.integers(b[0], b[1] + 1, size=n)]

    v = run({"kind": "list", "len": ln, "of": INT(*b)}, seed, oracle)
    assert ln[0] <= len(v) <= ln[1] and all(b[0] <= x <= b[1] for x in v)


@NO_DEADLINE
@given(LENS, ALPHABETS, SEEDS)
def test_str_draws_its_length_then_one_choice_call(ln, alphabet, seed):
    def oracle(r):
        n = int(r.integers(ln[0], ln[1] + 1))
        return "".join(r.choice(list(alphabet), size=n))

    v = run(STR(ln, alphabet), seed, oracle)
    assert ln[0] <= len(v) <= ln[1] and set(v) <= set(alphabet)


@NO_DEADLINE
@given(LENS, LENS, ALPHABETS, SEEDS)
def test_list_of_strings_draws_one_element_at_a_time(ln, wl, alphabet, seed):
    def word(r):
        return "".join(r.choice(list(alphabet), size=int(r.integers(wl[0], wl[1] + 1))))

    def oracle(r):
        return [word(r) for _ in range(int(r.integers(ln[0], ln[1] + 1)))]

    v = run({"kind": "list", "len": ln, "of": STR(wl, alphabet)}, seed, oracle)
    assert all(set(w) <= set(alphabet) and wl[0] <= len(w) <= wl[1] for w in v)


@NO_DEADLINE
@given(LENS, LENS, BOUNDS, SEEDS)
def test_matrix_draws_both_sides_first_then_rows(rows, cols, b, seed):
    def oracle(r):
        n, k = int(r.integers(rows[0], rows[1] + 1)), int(r.integers(cols[0], cols[1] + 1))
        return [[int(v) for v in r.integers(b[0], b[1] + 1, size=k)] for _ in range(n)]

    v = run({"kind": "matrix", "rows": rows, "cols": cols, "of": INT(*b)}, seed, oracle)
    assert len({len(row) for row in v}) <= 1  # rectangular


@NO_DEADLINE
@given(LENS, BOUNDS, SEEDS)
def test_sorted(ln, b, seed):
    def oracle(r):
        n = int(r.integers(ln[0], ln[1] + 1))
        return sorted(int(v) for v in r.integers(b[0], b[1] + 1, size=n))

    v = run({"kind": "sorted", "of": {"kind": "list", "len": ln, "of": INT(*b)}}, seed, oracle)
    assert v == sorted(v)


@NO_DEADLINE
@given(LENS, BOUNDS, BOUNDS, SEEDS)
def test_scaled_draws_the_list_then_one_factor_per_element(ln, b, f, seed):
    def oracle(r):
        n = int(r.integers(ln[0], ln[1] + 1))
        xs = [int(v) for v in r.integers(b[0], b[1] + 1, size=n)]
        return [x * int(r.integers(f[0], f[1] + 1)) for x in xs]

    spec = {"kind": "scaled", "of": {"kind": "list", "len": ln, "of": INT(*b)}, "by": INT(*f)}
    run(spec, seed, oracle)


@NO_DEADLINE
@given(LENS, ALPHABETS, SEEDS)
def test_palindrome(ln, alphabet, seed):
    def oracle(r):
        w = "".join(r.choice(list(alphabet), size=int(r.integers(ln[0], ln[1] + 1))))
        return w + w[::-1][int(r.integers(0, 2)) :]

    v = run({"kind": "palindrome", "half": STR(ln, alphabet)}, seed, oracle)
    assert v == v[::-1]


@NO_DEADLINE
@given(st.floats(0, 1), BOUNDS, LENS, SEEDS)
def test_either_draws_one_uniform_then_only_the_chosen_branch(p, b, ln, seed):
    def oracle(r):
        if r.random() < p:
            return int(r.integers(b[0], b[1] + 1))
        return "".join(r.choice(list("ab"), size=int(r.integers(ln[0], ln[1] + 1))))

    run({"kind": "either", "p": p, "then": INT(*b), "else": STR(ln, "ab")}, seed, oracle)


@NO_DEADLINE
@given(st.text(alphabet=" ,-", max_size=2), LENS, SEEDS)
def test_join(sep, ln, seed):
    def oracle(r):
        n = int(r.integers(ln[0], ln[1] + 1))
        return sep.join("".join(r.choice(list("xy"), size=int(r.integers(1, 3)))) for _ in range(n))

    words = {"kind": "list", "len": ln, "of": STR([1, 2], "xy")}
    run({"kind": "join", "sep": sep, "of": words}, seed, oracle)


@NO_DEADLINE
@given(LENS, st.lists(st.sampled_from("xyzw"), min_size=1, max_size=4), BOUNDS, SEEDS)
def test_dict_keeps_first_place_and_last_value_of_a_repeated_key(ln, keys, b, seed):
    def oracle(r):
        ks = r.choice(list(keys), size=int(r.integers(ln[0], ln[1] + 1)))
        out = {}
        for k in ks:  # written out: first insertion fixes the place, the last value stays
            out[str(k)] = int(r.integers(b[0], b[1] + 1))
        return out

    v = run({"kind": "dict", "len": ln, "keys": keys, "values": INT(*b)}, seed, oracle)
    assert set(v) <= set(keys)


@NO_DEADLINE
@given(SEEDS)
def test_const_draws_nothing(seed):
    r1, r2 = np.random.default_rng(seed), np.random.default_rng(seed)
    spec = parse_spec({"kind": "const", "value": [1, "a", [2.5, True]]}, field="s")
    v = draw(spec, r1)
    assert v == [1, "a", [2.5, True]] and same_stream(r1, r2)
    v.append(3)  # a fresh list each time: a task cannot edit the spec's value
    assert draw(spec, r1) == [1, "a", [2.5, True]]


@NO_DEADLINE
@given(SEEDS)
def test_args_are_drawn_left_to_right(seed):
    specs = parse_args([INT(0, 9), STR([1, 3], "ab"), {"kind": "const", "value": 5}], field="args")
    r1, r2 = np.random.default_rng(seed), np.random.default_rng(seed)
    a = int(r2.integers(0, 10))
    w = "".join(r2.choice(list("ab"), size=int(r2.integers(1, 4))))
    assert draw_args(specs, r1) == (a, w, 5) and same_stream(r1, r2)


def test_every_kind_is_tested_here():
    tested = {n.removeprefix("test_").split("_")[0] for n in globals() if n.startswith("test_")}
    assert set(KINDS) <= tested


# --- bad specs: the field and what is accepted ------------------------------------------------

LIST = {"kind": "list", "len": [1, 3], "of": INT(0, 1)}
BAD = [
    ({"kind": "float", "lo": 0}, "s.kind", "unknown kind 'float'; expected one of int, const"),
    ({"lo": 0, "hi": 1}, "s.kind", "missing; expected one of int, const, list"),
    ("int", "s", "expected a spec table with a 'kind'"),
    ({"kind": "int", "lo": 0}, "s.hi", "missing; kind 'int' needs lo, hi"),
    ({"kind": "int", "lo": 0, "hi": 1, "max": 3}, "s.max", "kind 'int' has no field 'max'"),
    ({"kind": "int", "lo": "0", "hi": 1}, "s.lo", "expected an int; got '0'; lo, hi"),
    ({"kind": "int", "lo": True, "hi": 1}, "s.lo", "expected an int; got True"),
    ({"kind": "int", "lo": 0.0, "hi": 1}, "s.lo", "expected an int; got 0.0"),
    ({"kind": "int", "lo": 5, "hi": 1}, "s.lo", "lo = 5 is greater than hi = 1; lo, hi"),
    ({"kind": "int", "lo": 0, "hi": 2**63}, "s.hi", r"outside \["),
    (
        {"kind": "list", "len": [3, 1], "of": INT(0, 1)},
        "s.len",
        r"0 <= a <= b <= 1000; got \[3, 1\]",
    ),
    ({"kind": "list", "len": [-1, 1], "of": INT(0, 1)}, "s.len", "0 <= a <= b"),
    ({"kind": "list", "len": [0, 10**6], "of": INT(0, 1)}, "s.len", "b <= 1000"),
    ({"kind": "list", "len": 3, "of": INT(0, 1)}, "s.len", r"expected \[a, b\], two ints; got 3"),
    ({"kind": "list", "len": [1, 2], "of": {"kind": "int"}}, "s.of.lo", "missing; kind 'int'"),
    (
        {"kind": "list", "len": [1, 2], "of": {"kind": "int", "lo": 2, "hi": 1}},
        "s.of.lo",
        "greater",
    ),
    ({"kind": "str", "len": [1, 2], "alphabet": ""}, "s.alphabet", "non-empty string; got ''"),
    ({"kind": "str", "len": [1, 2], "alphabet": ["a"]}, "s.alphabet", "non-empty string"),
    (
        {"kind": "matrix", "rows": [1, 2], "cols": [1, 2], "of": STR([1, 1], "a")},
        "s.of",
        "expected an int spec; got kind 'str'",
    ),
    ({"kind": "sorted", "of": INT(0, 1)}, "s.of", "a spec giving list; got kind 'int'"),
    (
        {"kind": "sorted", "of": {"kind": "const", "value": [1, "a"]}},
        "s.of",
        r"its elements \(list\[any\]\) cannot be ordered: give a list of one type",
    ),
    (
        {
            "kind": "sorted",
            "of": {
                "kind": "list",
                "len": [1, 2],
                "of": {"kind": "dict", "len": [0, 1], "keys": ["a"], "values": INT(0, 1)},
            },
        },
        "s.of",
        r"\(list\[dict\]\) cannot be ordered",
    ),
    (
        {
            "kind": "scaled",
            "of": {"kind": "list", "len": [1, 2], "of": STR([1, 1], "a")},
            "by": INT(1, 2),
        },
        "s.of",
        r"giving list\[int\]; got kind 'list' \(list\[str\]\)",
    ),
    ({"kind": "scaled", "of": LIST, "by": STR([1, 1], "a")}, "s.by", "giving int; got kind 'str'"),
    ({"kind": "palindrome", "half": INT(0, 1)}, "s.half", "giving str; got kind 'int'"),
    (
        {"kind": "either", "p": 1.5, "then": INT(0, 1), "else": INT(0, 1)},
        "s.p",
        r"number in \[0, 1\]; got 1.5",
    ),
    ({"kind": "either", "p": "0.5", "then": INT(0, 1), "else": INT(0, 1)}, "s.p", "got '0.5'"),
    ({"kind": "either", "p": 0.5, "then": INT(0, 1)}, "s.else", "missing; kind 'either'"),
    (
        {"kind": "join", "sep": " ", "of": LIST},
        "s.of",
        r"list\[str\]; got kind 'list' \(list\[int\]\)",
    ),
    ({"kind": "join", "sep": 1, "of": LIST}, "s.sep", "expected a string; got 1"),
    (
        {"kind": "dict", "len": [0, 2], "keys": [], "values": INT(0, 1)},
        "s.keys",
        "non-empty array of strings",
    ),
    ({"kind": "dict", "len": [0, 2], "keys": [1], "values": INT(0, 1)}, "s.keys", "strings"),
    ({"kind": "const", "value": math.nan}, "s.value", "not accepted: nan; value: a finite"),
    ({"kind": "const", "value": {"a": 1}}, "s.value", "not accepted"),
    ({"kind": "const", "value": [1, [2**70]]}, "s.value", "not accepted"),
]


@pytest.mark.parametrize(("spec", "field", "message"), BAD)
def test_bad_spec_names_field_and_what_is_accepted(spec, field, message):
    with pytest.raises(InputError, match=message) as exc:
        parse_spec(spec, field="s")
    assert exc.value.field == field
    assert str(exc.value).startswith(f"field '{field}': ")


def test_bad_args_array_and_deep_nesting():
    with pytest.raises(InputError, match="field 'args': expected an array of specs"):
        parse_args(INT(0, 1), field="args")
    with pytest.raises(InputError, match=r"field 'args\[1\].kind': missing"):
        parse_args([INT(0, 1), {}], field="args")
    spec: dict = INT(0, 1)
    for _ in range(20):
        spec = {"kind": "sorted", "of": spec}
    with pytest.raises(InputError, match="nested more than 16 deep"):
        parse_spec(spec, field="s")


def test_a_spec_that_could_draw_too_many_values_is_refused():
    row = {"kind": "list", "len": [0, 1000], "of": INT(0, 1)}
    assert parse_spec(row, field="s").size == 1000
    with pytest.raises(
        InputError, match=r"field 's': one draw can hold up to 1e\+06 values; at most"
    ):
        parse_spec({"kind": "list", "len": [1, 1000], "of": row}, field="s")
    words = {
        "kind": "join",
        "sep": "",
        "of": {"kind": "list", "len": [1, 400], "of": STR([1, 400], "a")},
    }
    with pytest.raises(InputError, match=r"up to 1\.6e\+05 values"):
        parse_spec(words, field="s")


def test_custom_error_builder_gets_field_and_message():
    seen = []

    def fail(field, message):
        seen.append((field, message))
        return InputError(message, path="f.toml", field=field)

    with pytest.raises(InputError, match=r"f\.toml, field 'a\.b\.of\.lo'"):
        parse_spec({"kind": "list", "len": [1, 2], "of": INT(3, 1)}, field="a.b", fail=fail)
    assert seen[0][0] == "a.b.of.lo"


@settings(max_examples=30, deadline=None)
@given(SEEDS)
def test_parsed_specs_are_immutable_and_reusable(seed):
    spec = parse_spec({"kind": "list", "len": [0, 4], "of": INT(0, 3)}, field="s")
    a = draw(spec, np.random.default_rng(seed))
    b = draw(spec, np.random.default_rng(seed))
    assert a == b
    with pytest.raises(AttributeError):
        spec.kind = "int"  # type: ignore[misc]


# --- any valid spec: parses, is deterministic, gives a literal of its declared type ------------

INTS = BOUNDS.map(lambda b: INT(*b))
WORDS = st.builds(STR, LENS, ALPHABETS)
INT_LISTS = st.builds(lambda ln, i: {"kind": "list", "len": ln, "of": i}, LENS, INTS)
WORD_LISTS = st.builds(lambda ln, w: {"kind": "list", "len": ln, "of": w}, LENS, WORDS)
LEAVES = st.one_of(
    INTS,
    WORDS,
    st.builds(lambda v: {"kind": "const", "value": v}, st.integers(-9, 9) | st.text(max_size=3)),
    st.builds(lambda w: {"kind": "palindrome", "half": w}, WORDS),
    st.builds(
        lambda s, ws: {"kind": "join", "sep": s, "of": ws}, st.sampled_from(" ,"), WORD_LISTS
    ),
    st.builds(lambda xs, by: {"kind": "scaled", "of": xs, "by": by}, INT_LISTS, INTS),
    st.builds(lambda xs: {"kind": "sorted", "of": xs}, INT_LISTS),
    st.builds(lambda r, c, i: {"kind": "matrix", "rows": r, "cols": c, "of": i}, LENS, LENS, INTS),
)
SPECS = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.builds(lambda ln, of: {"kind": "list", "len": ln, "of": of}, LENS, inner),
        st.builds(
            lambda p, a, b: {"kind": "either", "p": p, "then": a, "else": b},
            st.floats(0, 1),
            inner,
            inner,
        ),
        st.builds(
            lambda ln, k, v: {"kind": "dict", "len": ln, "keys": k, "values": v},
            LENS,
            st.lists(st.sampled_from("abc"), min_size=1, max_size=3),
            inner,
        ),
    ),
    max_leaves=6,
)
PY_TYPES = {"int": int, "str": str, "dict": dict}


@settings(max_examples=200, deadline=None)
@given(SPECS, SEEDS)
def test_any_valid_spec_is_deterministic_and_gives_a_literal_of_its_type(spec, seed):
    parsed = parse_spec(spec, field="s")
    value = draw(parsed, np.random.default_rng(seed))
    assert draw(parsed, np.random.default_rng(seed)) == value
    assert ast.literal_eval(repr(value)) == value  # inputs are stored as literals
    if parsed.type in PY_TYPES:
        assert type(value) is PY_TYPES[parsed.type]
    elif parsed.type.startswith("list"):
        assert isinstance(value, list)
