"""The strict probability parser: an autorater's text → p(B ≻ A) or None.

Usage::

    from rewardkit.autorater import parse_probability
    parse_probability("B is more concise. <probability>0.73</probability>")   # 0.73
    parse_probability("<probability>73%</probability>")                       # None

The seed (001, "本地严格tag parser是明确的本地约定") leaves the parser to us; this is the local
convention, and everything outside it is *invalid* (None), which the proper rewards penalise:

- exactly one ``<probability>`` and one ``</probability>``, opening before closing; any other
  tag-like mention of the name (``<Probability>``, ``</ probability>``, ``<probability/>``, a
  second element, a nested or unclosed one) makes the text invalid, because a grader cannot know
  which one the rater meant;
- text before and after the element is allowed (reasoning usually comes first);
- the content, trimmed of surrounding ASCII whitespace (space, \\t, \\n, \\r, \\f, \\v), is a
  plain decimal literal ``0``, ``1``, ``0.d…`` or ``1.0…`` in ASCII digits: no sign, exponent,
  percent, underscore, NaN, infinity, fraction, leading ``.`` or trailing ``.``, extra leading
  zero, or second number. ``float()`` and regex ``\\d`` accept much more (``'٠.٥'``, ``'0_5'``,
  ``'5e-1'``, ``' nan'``), which is why neither is used on the raw content.

The parser never raises on any string and never returns a value outside [0, 1]; a non-string
(None for a failed generation, NaN from a data frame) is invalid too.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ..errors import ConfigError

__all__ = ["DEFAULT_TAG", "parse_probability"]

DEFAULT_TAG = "probability"
_ASCII_WS = " \t\n\r\f\v"
# 0 or 1, optionally followed by a point and at least one ASCII digit. [0-9] is ASCII only
# (unlike \d, which matches every Unicode decimal digit).
_LITERAL = re.compile(r"[01](?:\.[0-9]+)?")
_TAG_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


def _check_tag(tag: Any) -> str:
    if not isinstance(tag, str) or not _TAG_NAME.fullmatch(tag):
        raise ConfigError(
            "The 'tag' parameter of parse_probability must be an XML-style name "
            f"(letters, digits, '_', '.', '-'; not starting with a digit). Got {tag!r}."
        )
    return tag


@lru_cache(maxsize=64)
def _tag_parts(tag: str) -> tuple[str, str, re.Pattern[str]]:
    """(opening, closing, mentions) for a validated tag. ``mentions`` finds anything that looks
    like an opening, closing or self-closing tag of this name, in any case and with any
    whitespace after "<" or "</": every such mention counts."""
    _check_tag(tag)
    mentions = re.compile(rf"<\s*/?\s*{re.escape(tag)}(?![A-Za-z0-9_.:-])", re.IGNORECASE)
    return f"<{tag}>", f"</{tag}>", mentions


def parse_probability(text: Any, *, tag: str = DEFAULT_TAG) -> float | None:
    """The probability stated in ``text`` by exactly one ``<tag>…</tag>`` element, or None."""
    if not isinstance(tag, str):
        _check_tag(tag)  # raises
    opening, closing, mentions = _tag_parts(tag)
    if not isinstance(text, str):
        return None
    start = text.find(opening)
    end = text.find(closing)
    if start < 0 or end < start:
        return None  # no element, or the closing tag comes first
    content = text[start + len(opening) : end].strip(_ASCII_WS)
    if not _LITERAL.fullmatch(content):
        return None
    if content[0] == "1" and content.strip("0").strip(".") != "1":
        return None  # "1.5", and "1.0000000000000000001", which float() would round to 1.0
    if len(mentions.findall(text)) != 2:
        return None  # a second element, a nested or unclosed one, or a variant spelling
    return float(content)  # safe: content is ASCII [01](.[0-9]+)?
