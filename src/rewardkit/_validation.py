"""Parameter validation at the edge, with one message template (foundations).

"The 'gamma' parameter of score_trajectory must be a float in [0, 1]. Got 1.5."
"""

from __future__ import annotations

import functools
import inspect
import math
import os
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, TypeVar

from .errors import ConfigError

__all__ = [
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


def _fail(param: str, func: str, accepted: str, value: Any) -> ConfigError:
    return ConfigError(f"The '{param}' parameter of {func} must be {accepted}. Got {value!r}.")


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
    shown = str(value) if len(str(value)) <= 30 else f"an int of {len(str(value))} digits"
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
    """Numbers of ``kind`` (int or float; bools never count) between ``low`` and ``high``."""

    kind: type
    low: float | None = None
    high: float | None = None
    closed: str = "both"  # "both", "left", "right" or "neither"

    def __contains__(self, x: Any) -> bool:
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            return False
        if self.kind is int and not isinstance(x, int):
            return False
        if isinstance(x, float) and not math.isfinite(x):
            return False
        lo_ok = self.low is None or (
            x >= self.low if self.closed in ("both", "left") else x > self.low
        )
        hi_ok = self.high is None or (
            x <= self.high if self.closed in ("both", "right") else x < self.high
        )
        return lo_ok and hi_ok

    def __str__(self) -> str:
        name = "an int" if self.kind is int else "a float"
        if self.low is None and self.high is None:
            return name
        lo = (
            "(-inf"
            if self.low is None
            else ("[" if self.closed in ("both", "left") else "(") + f"{self.low:g}"
        )
        hi = (
            "inf)"
            if self.high is None
            else f"{self.high:g}" + ("]" if self.closed in ("both", "right") else ")")
        )
        return f"{name} in {lo}, {hi}"


@dataclass(frozen=True)
class Options:
    """One of a fixed set of values."""

    values: tuple[Any, ...]

    def __contains__(self, x: Any) -> bool:
        return any(x == v and type(x) is type(v) for v in self.values)

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


def _satisfies(value: Any, constraint: Any) -> bool:
    if constraint is None:
        return value is None
    if constraint == "rng":  # an int seed >= 0 or a numpy Generator
        import numpy as np

        return isinstance(value, np.random.Generator) or (
            isinstance(value, int) and not isinstance(value, bool) and value >= 0
        )
    if constraint == "boolean":
        return isinstance(value, bool)
    return value in constraint


def _describe(constraint: Any) -> str:
    return (
        {None: "None", "rng": "an int >= 0 or a numpy.random.Generator", "boolean": "a bool"}.get(
            constraint, str(constraint)
        )
        if not isinstance(constraint, (Interval, Options))
        else str(constraint)
    )


def validate_params(constraints: dict[str, list[Any]]) -> Callable[[F], F]:
    """Check the named parameters of the decorated function against ``constraints`` (each
    value must satisfy one of its list) before it runs; a parameter not in its signature is a
    programming error raised at decoration time."""

    def decorate(fn: F) -> F:
        sig = inspect.signature(fn)
        unknown = sorted(set(constraints) - set(sig.parameters))
        if unknown:
            raise TypeError(f"validate_params on {fn.__name__}: no parameter {unknown}")

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            for name, allowed in constraints.items():
                value = bound.arguments[name]
                if not any(_satisfies(value, c) for c in allowed):
                    accepted = " or ".join(_describe(c) for c in allowed)
                    raise _fail(name, fn.__name__, accepted, value)
            return fn(*args, **kwargs)

        wrapper.__rewardkit_constraints__ = constraints  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate
