"""Standard-input / standard-output tests: the comparison modes, shared by the child (which
hashes outputs too large to send) and the sandbox process (which compares).  Standard library
only: the workers import it.

Modes (as in APPS, CodeContests, TACO and LiveCodeBench):
- ``exact``: the same text, byte for byte;
- ``lines``: the same lines, trailing whitespace of each line and trailing blank lines ignored;
- ``tokens``: the same whitespace-separated tokens;
- ``float``: the same tokens, except that where the expected token is a float literal (has a
  ``.``, an exponent, or is nan / inf) the actual token must be a number within
  ``max(tol·max(|a|, |e|), tol)`` of it; an int token needs the same token.
"""

from __future__ import annotations

import math
import re

__all__ = ["MODES", "normalise", "normalised_sha", "stdout_equal"]

MODES = ("exact", "lines", "tokens", "float")
_FLOAT_TOKEN = re.compile(r"[-+]?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][-+]?\d+|nan|inf|infinity)", re.I)


def normalise(text: str, mode: str) -> str:
    """The text two outputs must share to be equal under ``mode`` (``float``: its tokens)."""
    if mode == "exact":
        return text
    if mode == "lines":
        return "\n".join(line.rstrip() for line in text.rstrip().splitlines())
    return " ".join(text.split())


def normalised_sha(text: str, mode: str) -> str:
    import hashlib  # here, not at the top: the zygote stays small (see _worker.PRELOAD)

    return hashlib.sha256(normalise(text, mode).encode("utf-8", "surrogatepass")).hexdigest()


def stdout_equal(actual: str, expected: str, mode: str, tol: float) -> bool:
    """``actual`` against ``expected`` under ``mode`` (module docstring)."""
    if mode != "float":
        return normalise(actual, mode) == normalise(expected, mode)
    got, want = actual.split(), expected.split()
    return len(got) == len(want) and all(_token_equal(a, e, tol) for a, e in zip(got, want))


def _token_equal(a: str, e: str, tol: float) -> bool:
    if a == e:
        return True
    if not _FLOAT_TOKEN.fullmatch(e):
        return False
    try:
        x, y = float(a), float(e)
    except ValueError:
        return False
    if math.isnan(y) or math.isinf(y):
        return math.isnan(x) if math.isnan(y) else x == y
    return math.isclose(x, y, rel_tol=tol, abs_tol=tol)
