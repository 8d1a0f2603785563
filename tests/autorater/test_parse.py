"""The strict probability parser (SPEC §5): accepted forms, rejected forms, fuzzing, an oracle."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rewardkit.autorater import parse_probability
from rewardkit.errors import ConfigError

ACCEPTED = [
    ("<probability>0.73</probability>", 0.73),
    ("<probability> 1 </probability>", 1.0),
    ("<probability>0</probability>", 0.0),
    ("<probability>1</probability>", 1.0),
    ("<probability>1.0</probability>", 1.0),
    ("<probability>1.000</probability>", 1.0),
    ("<probability>0.5</probability>", 0.5),
    ("<probability>0.0001</probability>", 0.0001),
    ("Response B cites the source. <probability>0.9</probability>", 0.9),
    ("<probability>0.2</probability>\nThat is my answer.", 0.2),
    ("<probability>\n\t0.35\r\n</probability>", 0.35),
    ("A < B? yes. <probability>0.6</probability>", 0.6),  # a stray "<" is not a tag
    ("A scores 0.4, B 0.9 on recall. <probability>0.8</probability>", 0.8),  # numbers outside
    ("<probabilityscore>x</probabilityscore> <probability>0.4</probability>", 0.4),
]

REJECTED = [
    # the list
    "<probability>0.2</probability><probability>0.3</probability>",  # two tags
    "<probability><probability>0.5</probability></probability>",  # nested
    "<probability>0.5",  # unclosed
    "0.5</probability>",  # no opening tag
    "<probability>1.5</probability>",
    "<probability>-0.1</probability>",
    "<probability>5e-1</probability>",
    "<probability>50%</probability>",
    "<probability>nan</probability>",
    "<probability>NaN</probability>",
    "<probability>inf</probability>",
    "<probability>infinity</probability>",
    "<probability>1/2</probability>",
    "<probability></probability>",
    "<probability>   </probability>",
    "<probability>0.3 0.7</probability>",
    "<probability>0.3 or 0.7</probability>",
    "",
    "0.73",
    "no tag at all",
    # what float() or regex \d would accept
    "<probability>٠.٥</probability>",  # Arabic-Indic digits
    "<probability>０.５</probability>",  # fullwidth digits
    "<probability>0_5</probability>",
    "<probability>0.5_0</probability>",
    "<probability>+0.5</probability>",
    "<probability>-0</probability>",
    "<probability>.5</probability>",
    "<probability>1.</probability>",
    "<probability>00.5</probability>",
    "<probability>0x1</probability>",
    "<probability>½</probability>",
    "<probability>0,5</probability>",
    "<probability>1.0000000000000000001</probability>",  # float() rounds this to 1.0
    "<probability>1.01</probability>",
    "<probability>2</probability>",
    "<probability>\u00a00.5</probability>",  # no-break space is not ASCII whitespace
    "<probability>0.5\u3000</probability>",
    "<probability>0.5\x00</probability>",
    # tag variants
    "</probability>0.5<probability>",  # reversed
    "<probability >0.5</probability>",
    "<Probability>0.5</Probability>",
    "<probability>0.5</probability> <PROBABILITY>0.9</PROBABILITY>",
    "<probability>0.5</probability><probability/>",
    "<probability>0.5</ probability>",
    "<probability>0.5</probability></probability>",
]


@pytest.mark.parametrize(("text", "want"), ACCEPTED)
def test_accepts_the_convention(text, want):
    assert parse_probability(text) == want


@pytest.mark.parametrize("text", REJECTED)
def test_rejects_everything_else(text):
    assert parse_probability(text) is None


@pytest.mark.parametrize("value", [None, math.nan, 0.5, b"<probability>0.5</probability>", 1])
def test_non_strings_are_invalid(value):
    assert parse_probability(value) is None


def test_custom_tag():
    assert parse_probability("<p>0.25</p>", tag="p") == 0.25
    assert parse_probability("<probability>0.25</probability>", tag="p") is None


@pytest.mark.parametrize("tag", ["", "1p", "a b", "<p>", 3, None])
def test_bad_tag_is_a_config_error(tag):
    with pytest.raises(ConfigError, match="The 'tag' parameter of parse_probability must be"):
        parse_probability("<p>0.5</p>", tag=tag)


# --- fuzzing -----------------------------------------------------------------------------------

NASTY = "0123456789.,eE+-_%/ \t\n\u00a0٠٥０nainfx<>/probability"


@given(st.text())
def test_never_raises_and_stays_in_the_unit_interval(text):
    p = parse_probability(text)
    assert p is None or (isinstance(p, float) and 0.0 <= p <= 1.0)


@given(st.text(), st.text(alphabet=NASTY, max_size=12), st.text())
def test_fuzzed_content_never_raises(before, content, after):
    p = parse_probability(f"{before}<probability>{content}</probability>{after}")
    assert p is None or 0.0 <= p <= 1.0


def oracle(content: str) -> float | None:
    """The convention written a second way: str methods and Decimal instead of a regex."""
    s = content.strip(" \t\n\r\f\v")
    if not s or any(c not in "0123456789." for c in s) or s.count(".") > 1:
        return None
    whole, _, frac = s.partition(".")
    if len(whole) != 1 or ("." in s and not frac):
        return None
    value = Decimal(s)
    return float(value) if 0 <= value <= 1 else None


PLAIN = st.text(alphabet="0123456789. \t\n", max_size=10)


@given(st.text(alphabet="abc <>\n", max_size=8), PLAIN, st.text(alphabet="abc <>\n", max_size=8))
def test_agrees_with_an_independent_oracle(before, content, after):
    text = f"{before}<probability>{content}</probability>{after}"
    assert parse_probability(text) == oracle(content)


@given(st.integers(0, 10**6), st.integers(1, 6))
def test_formatted_decimals_round_trip(k, digits):
    p = (k % (10**digits + 1)) / 10**digits  # in [0, 1]
    text = f"<probability>{p:.{digits}f}</probability>"
    assert parse_probability(text) == float(f"{p:.{digits}f}")
