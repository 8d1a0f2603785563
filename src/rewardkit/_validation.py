"""Parameter validation at the edge, with one message template (foundations).

"The 'gamma' parameter of score_trajectory must be a float in [0, 1]. Got 1.5."
"""

from __future__ import annotations

import functools
import inspect
import itertools
import math
import numbers
import operator
import os
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from .errors import ConfigError

__all__ = [
    "MAX_RESAMPLES",
    "MAX_SEED",
    "SEED",
    "Each",
    "Interval",
    "Options",
    "available_memory_bytes",
    "check_choice",
    "check_memory",
    "check_optional_real",
    "check_positive_int",
    "check_real",
    "validate_params",
]

F = TypeVar("F", bound=Callable[..., Any])

# Resample counts: beyond 10**8 a run takes hours at any size (percentile intervals are already
# good to ~0.001 at 10**6); the arrays they size are checked against memory as well.
MAX_RESAMPLES = 10**8
# Seeds: numpy's legacy seeding and torch's generators take seeds below 2**32 (the CLI's bound).
MAX_SEED = 2**32 - 1
# An iterator given for a sequence parameter is read into a tuple: at most this many values.
MAX_ITERATED = 1_000_000


def _digits(value: int) -> str:
    """How many decimal digits ``value`` has; beyond Python's 4300-digit limit on converting
    an int to text (which raises), estimated from its bits."""
    if value.bit_length() <= 14_000:
        return str(len(str(abs(value))))
    return f"about {int(value.bit_length() * 0.30102999566398120) + 1}"


def _shown(value: Any) -> str:
    """``repr(value)``, shortened for a huge int or a long value so the message stays a line;
    a value that cannot be written (an int of 5,000 digits in a list, a broken ``__repr__``) is
    named by its type."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        return f"an int of {_digits(value)} digits"
    try:
        text = repr(value)
    except Exception:
        return f"a {type(value).__name__} that cannot be written out"
    return text if len(text) <= 80 else text[:77] + "..."


def _fail(param: str, func: str, accepted: str, value: Any) -> ConfigError:
    return ConfigError(
        f"The '{param}' parameter of {func} must be {accepted}. Got {_shown(value)}."
    )


def check_real(
    value: Any,
    param: str,
    func: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """A finite real number in the given (closed unless ``*_open``) range; returns a float."""
    x = _real(value, param, func, low, high, low_open, high_open, allow_none=False)
    assert x is not None  # allow_none=False never returns None
    return x


def check_optional_real(
    value: Any,
    param: str,
    func: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float | None:
    """Like :func:`check_real`, but ``None`` is accepted and returned as is."""
    return _real(value, param, func, low, high, low_open, high_open, allow_none=True)


def _real(
    value: Any,
    param: str,
    func: str,
    low: float | None,
    high: float | None,
    low_open: bool,
    high_open: bool,
    *,
    allow_none: bool,
) -> float | None:
    if value is None and allow_none:
        return None
    lo = f"{'(' if low_open else '['}{'-inf' if low is None else f'{low:g}'}"
    hi = f"{'inf' if high is None else f'{high:g}'}{')' if high_open else ']'}"
    bounded = low is not None or high is not None
    accepted = "a float" + (f" in {lo}, {hi}" if bounded else " (finite)")
    if allow_none:
        accepted += " or None"
    if isinstance(value, bool) or not (
        isinstance(value, (int, float)) or hasattr(value, "__float__")
    ):
        raise _fail(param, func, accepted, value)
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise _fail(param, func, accepted, value) from None
    if not math.isfinite(x):
        raise _fail(param, func, accepted, value)
    if low is not None and (x < low or (low_open and x == low)):
        raise _fail(param, func, accepted, value)
    if high is not None and (x > high or (high_open and x == high)):
        raise _fail(param, func, accepted, value)
    return x


def check_positive_int(value: Any, param: str, func: str, *, minimum: int = 1) -> int:
    """An int (not bool) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise _fail(param, func, f"an int >= {minimum}", value)
    return value


def check_choice(value: Any, param: str, func: str, choices: Collection[Any]) -> Any:
    """One of ``choices``."""
    if value not in choices:
        accepted = "one of " + ", ".join(repr(c) for c in choices)
        raise _fail(param, func, accepted, value)
    return value


def available_memory_bytes() -> int:
    """Memory the machine can still give (``MemAvailable``; physical memory if unknown)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (OSError, ValueError):
        return 1 << 34  # 16 GiB when the platform cannot tell


def check_memory(value: int, param: str, func: str, *, nbytes: int, formula: str) -> None:
    """Refuse ``value`` when the arrays it sizes (``nbytes``, from ``formula``) would take more
    than half the memory available — checked before anything is allocated or written."""
    budget = available_memory_bytes() // 2
    if nbytes <= budget:
        return
    per_unit = max(nbytes // max(value, 1), 1)
    gib = nbytes >> 30
    need = f"about {gib} GiB" if gib < 10**9 else "more than 1e9 GiB"
    shown = _shown(value)
    raise ConfigError(
        f"The '{param}' parameter of {func} must fit in memory: {formula} needs {need} and "
        f"{budget >> 30} GiB (half of what is available) can be used, so at most "
        f"{budget // per_unit} is accepted. Got {shown}."
    )


# --- declarative constraints (the idea of scikit-learn's _param_validation) --------------------
#
#     @validate_params({"m": [Interval(int, 4, 64)], "rng": ["rng"]})
#     def p1_check(*, m=16, rng=0): ...
#
# One table per public function, one decorator, one message template:
# "The 'm' parameter of p1_check must be an int in [4, 64]. Got 3."


@dataclass(frozen=True)
class Interval:
    """Numbers of ``kind`` between ``low`` and ``high`` (``None``: unbounded on that side).

    ``int``: any integral number (numpy ints too), never a bool or a float. ``float``: any real
    number (ints and numpy numbers too) whose float is finite — NaN, ±inf and an int too large
    for a float (``10**400``) are refused."""

    kind: type
    low: float | None = None
    high: float | None = None
    closed: str = "both"  # "both", "left", "right" or "neither"

    def __contains__(self, x: Any) -> bool:
        v = self.normalise(x)
        if v is None:
            return False
        lo_ok = self.low is None or (
            v >= self.low if self.closed in ("both", "left") else v > self.low
        )
        hi_ok = self.high is None or (
            v <= self.high if self.closed in ("both", "right") else v < self.high
        )
        return lo_ok and hi_ok

    def normalise(self, x: Any) -> int | float | None:
        """``x`` as a plain ``int`` (an integral number) or ``float`` (the float kind), or
        None when it is not a number of this kind. The range is checked on this value and the
        function receives it: a subclass whose comparisons lie, or whose ``__index__`` /
        ``__float__`` raises, can neither pass the check nor reach the function's body."""
        if isinstance(x, (bool, np_bool())) or not isinstance(x, numbers.Real):
            return None
        try:
            if isinstance(x, numbers.Integral):
                v: int | float = int(operator.index(x))
                if self.kind is not int:
                    float(v)  # an int too large for a float is not a float
                return v
            if self.kind is int:
                return None
            v = float(x)
        except Exception:  # a lying or broken number: not one of ours
            return None
        return v if math.isfinite(v) else None

    def __str__(self) -> str:
        name = "an int" if self.kind is int else "a float"
        if self.low is None and self.high is None:
            return name if self.kind is int else "a finite float"
        lo = (
            "(-inf"
            if self.low is None
            else ("[" if self.closed in ("both", "left") else "(") + _num(self.low)
        )
        hi = (
            "inf)"
            if self.high is None
            else _num(self.high) + ("]" if self.closed in ("both", "right") else ")")
        )
        return f"{name} in {lo}, {hi}"


def _num(x: float) -> str:
    """A bound as written: 100000000 (not 1e+08), 0.5, 1e+300."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e16 else f"{x:g}"


def np_bool() -> type:
    """numpy's bool scalar type (not a ``numbers.Integral``, but refused explicitly)."""
    import numpy as np

    return np.bool_


@dataclass(frozen=True)
class Each:
    """A sequence (list, tuple, range, array; not a string) of at least ``min_len`` values,
    each satisfying one of ``constraints``. An iterator is read once into a tuple, which the
    function then receives."""

    constraints: tuple[Any, ...]
    min_len: int = 0
    distinct: bool = False  # seeds: a repeated seed makes "stable across seeds" unable to fail

    def __str__(self) -> str:
        what = " or ".join(_describe(c) for c in self.constraints)
        size = f"{self.min_len} or more" if self.min_len else "any number of"
        return f"a sequence of {size} {'distinct ' if self.distinct else ''}values, each {what}"


SEED = Interval(int, 0, MAX_SEED)


@dataclass(frozen=True)
class Options:
    """One of a fixed set of values."""

    values: tuple[Any, ...]

    def __contains__(self, x: Any) -> bool:
        # the type first: an array's == is elementwise, another object's may raise
        return any(type(x) is type(v) and x == v for v in self.values)

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


_NAMED = {
    "rng": "an int in [0, 2**63) or a numpy.random.Generator",
    "boolean": "a bool",
    "callable": "a callable",
    "str": "a str",
}


def _satisfies(value: Any, constraint: Any) -> bool:
    if constraint is None:
        return value is None
    if isinstance(constraint, str):
        if constraint == "rng":  # an int seed >= 0 or a numpy Generator
            import numpy as np

            if isinstance(value, np.random.Generator):
                return True
            seed = _SEED_INTERVAL.normalise(value)
            return isinstance(seed, int) and 0 <= seed < 2**63
        if constraint == "boolean":
            return isinstance(value, (bool, np_bool()))
        if constraint == "callable":
            return callable(value)
        if constraint == "str":
            return isinstance(value, str)
        raise TypeError(f"unknown constraint {constraint!r}")
    if isinstance(constraint, Each):  # a mapping is not a sequence (it would give its keys)
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
            return False
        items = list(value)
        if constraint.distinct:
            try:
                if len(set(items)) != len(items):
                    return False
            except TypeError:  # unhashable values: not one of ours
                return False
        return len(items) >= constraint.min_len and all(
            any(_satisfies(x, c) for c in constraint.constraints) for x in items
        )
    if isinstance(constraint, type):
        return isinstance(value, constraint)
    return value in constraint


_SEED_INTERVAL = Interval(int, 0, None)


def _plain(value: Any, constraint: Any) -> Any:
    """The value a satisfied constraint passes on: an Interval's plain int / float, a plain
    bool for "boolean", a plain int seed for "rng"; anything else as given."""
    if isinstance(constraint, Interval):
        return constraint.normalise(value)
    if constraint == "boolean":
        return bool(value)
    if constraint == "rng" and isinstance(value, numbers.Integral):
        return _SEED_INTERVAL.normalise(value)
    return value


def _describe(constraint: Any) -> str:
    if constraint is None:
        return "None"
    if isinstance(constraint, str):
        return _NAMED[constraint]
    if isinstance(constraint, type):
        return f"a {constraint.__name__}"
    return str(constraint)


_NO_MATCH = object()


def validate_params(constraints: dict[str, list[Any]]) -> Callable[[F], F]:
    """Check the named parameters of the decorated function against ``constraints`` (each
    value must satisfy one of its list) before it runs; a parameter not in its signature is a
    programming error raised at decoration time."""

    def decorate(fn: F) -> F:
        sig = inspect.signature(fn)
        unknown = sorted(set(constraints) - set(sig.parameters))
        if unknown:
            raise TypeError(f"validate_params on {fn.__name__}: no parameter {unknown}")
        for allowed in constraints.values():
            for c in allowed:
                if isinstance(c, str):
                    _describe(c)  # an unknown name is a programming error, found here
        # A method's message names its class ("Sandbox", not "__init__").
        owner = fn.__qualname__.split(".")[-2] if fn.__name__ == "__init__" else fn.__name__
        iterated = [n for n, a in constraints.items() if any(isinstance(c, Each) for c in a)]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as exc:  # name the function, as Python's own message does
                raise TypeError(f"{owner}() {exc}") from None
            bound.apply_defaults()
            changed = bool(iterated)
            for name in iterated:  # an iterator is read once, checked, and passed on as a tuple
                value = bound.arguments[name]
                if (
                    isinstance(value, Iterable)
                    and not isinstance(value, (str, bytes, Collection))
                    and not hasattr(value, "__array__")
                ):
                    items = tuple(itertools.islice(value, MAX_ITERATED + 1))
                    if len(items) > MAX_ITERATED:  # an endless iterator would never end
                        raise ConfigError(
                            f"The '{name}' parameter of {owner} must be a sequence of at most "
                            f"{MAX_ITERATED:,} values. Got an iterator of more."
                        )
                    bound.arguments[name] = items
            for name, allowed in constraints.items():
                value = bound.arguments[name]
                match = next((c for c in allowed if _satisfies(value, c)), _NO_MATCH)
                if match is _NO_MATCH:
                    accepted = " or ".join(_describe(c) for c in allowed)
                    raise _fail(name, owner, accepted, value)
                plain = _plain(value, match)  # what was checked: a plain int, float, bool
                if type(plain) is not type(value):
                    bound.arguments[name] = plain
                    changed = True
            if changed:
                return fn(*bound.args, **bound.kwargs)
            return fn(*args, **kwargs)

        wrapper.__rewardkit_constraints__ = constraints  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate
