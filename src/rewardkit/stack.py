"""Reward stacks: hard gates first, then weighted soft components, every part logged.

Usage::

    from rewardkit import Component, Gate, RewardStack
    stack = RewardStack(
        gates=[Gate("no_write", lambda ep: not ep["wrote"])],
        components=[Component("task", lambda ep: float(ep["correct"])),     # range (0, 1)
                    Component("cost", lambda ep: -0.1 * ep["calls"], weight=0.5,
                              range=(-1, 0)),
                    Component("length", lambda ep: len(ep["text"]), weight=0.0)],  # metric
        version="anc-v1")
    stack.bounds()                            # StackBounds(low=-0.5, high=1.0)
    r = stack.score({"wrote": True, "correct": True, "calls": 2, "text": "met"})
    r.total, r.hard_failed, r.gate_failures   # -0.65, True, {'no_write': ()}
    r.components                              # still computed: {'task': 1.0, ...}

Seed 002 ("reward stack and hard gates"): a failed gate makes the episode a hard failure
(``total = fail_value``) whatever the soft score, while the soft components are still computed
and logged, so that a safety failure is never hidden behind a total. A component may return
``None`` ("not applicable / cannot score"): it is excluded from the sum and listed in
``excluded``, never logged as 0. A raising gate or component is data, not a crash: its message
is recorded in ``errors`` under its name and the total becomes ``None`` (``on_error="none"``),
``fail_value`` (``on_error="fail"``), or the exception propagates (``on_error="raise"``).

The ordering guarantee (SPEC §11): every component declares the range of its values
(``range=(lo, hi)``; default ``(0, 1)``, or unbounded for a weight-0 metric), ``bounds()`` gives
the lowest and highest total a safe episode can get, and the fail value must lie strictly below
the lowest (``fail_value="below"``, the default, picks it), so that under group-relative
advantages every hard-failed episode ranks below every safe one. A component value outside its
declared range is an error of that component, never clipped.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from ._json import JsonMixin, content_hash
from ._ordering import (
    ROUNDING_RTOL,
    StackBounds,
    check_fail_value,
    check_range,
    fail_below,
    is_strictly_below,
    safe_bounds,
)
from ._validation import Interval, Options, check_real, validate_params
from .errors import ConfigError

__all__ = ["Component", "Gate", "GateOutcome", "RewardResult", "RewardStack", "StackBounds"]

ON_ERROR = ("none", "fail", "raise")
ORDERING = ("strict", "unchecked")
DEFAULT_RANGE = (0.0, 1.0)  # a weighted component's range unless declared
METRIC_RANGE = (-math.inf, math.inf)  # a weight-0 metric's range unless declared
_RESERVED = ("total", "hard_failed")


@dataclass(frozen=True)
class GateOutcome(JsonMixin):
    """What a gate's check returns: ``passed`` and the reasons (e.g. the violating call ids)."""

    passed: bool
    reasons: tuple[str, ...] = ()


def _qualname(fn: Callable[..., Any]) -> str:
    # Stable across processes (no id(), no repr with addresses): module plus qualified name.
    target = getattr(fn, "func", fn)  # functools.partial
    mod = getattr(target, "__module__", None) or type(target).__module__
    name = getattr(target, "__qualname__", None) or type(target).__qualname__
    return f"{mod}.{name}"


def _code_digest(code: Any) -> str:
    """Digest of a code object's bytecode and constants (nested code included), so that editing
    a gate or component changes the stack's config hash even when its name stays the same."""
    h = hashlib.sha256(code.co_code)
    for const in code.co_consts:
        h.update(_const_repr(const).encode())
    h.update(repr(code.co_names).encode())
    return h.hexdigest()[:16]


def _const_repr(const: Any) -> str:
    if hasattr(const, "co_code"):
        return _code_digest(const)
    if isinstance(const, frozenset):  # set literals: element order depends on PYTHONHASHSEED
        return "frozenset" + repr(sorted(_const_repr(c) for c in const))
    if isinstance(const, tuple):
        return "(" + ",".join(_const_repr(c) for c in const) + ")"
    return repr(const)


def _identity(fn: Callable[..., Any]) -> str:
    """A callable's name in the configuration, with a partial's bound arguments; portable across
    Python versions (the bytecode digest lives apart, in ``RewardStack.code_hash``)."""
    name = _qualname(fn)
    if getattr(fn, "func", fn) is not fn:  # functools.partial
        name += repr((getattr(fn, "args", ()), sorted(getattr(fn, "keywords", {}).items())))
    return name


def _code_of(fn: Callable[..., Any]) -> Any:
    target = getattr(fn, "func", fn)
    call = vars(type(target)).get("__call__")  # a callable instance: its class's method
    return getattr(target, "__code__", None) or getattr(call, "__code__", None)


def _bound(x: float) -> float | str:
    return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")


def _check_name(name: Any, what: str) -> str:
    if not isinstance(name, str) or not name or name != name.strip() or "/" in name:
        raise ConfigError(
            f"The 'name' of a {what} must be a non-empty string without '/' or "
            f"surrounding spaces. Got {name!r}."
        )
    return name


@dataclass(frozen=True)
class Gate:
    """A hard gate: ``check(episode)`` returns a :class:`GateOutcome` or a bare bool."""

    name: str
    check: Callable[[Any], GateOutcome | bool]

    def __post_init__(self) -> None:
        _check_name(self.name, "Gate")
        if not callable(self.check):
            raise ConfigError(
                f"The 'check' of Gate {self.name!r} must be callable. Got {self.check!r}."
            )

    def evaluate(self, episode: Any) -> GateOutcome:
        out = self.check(episode)
        if isinstance(out, GateOutcome):
            return out
        if isinstance(out, bool) or (hasattr(out, "dtype") and out.dtype == bool):
            return GateOutcome(bool(out))
        raise TypeError(
            f"gate {self.name!r} returned {type(out).__name__}; a gate returns a "
            f"GateOutcome or a bool"
        )


@dataclass(frozen=True)
class Component:
    """A soft reward component: ``fn(episode) -> float | None``. Weight 0 = logged metric.

    ``required=True``: when this component cannot score (None), the episode's total is None
    (not the sum of the others), so an unscorable task never passes as a low reward.

    ``range=(lo, hi)``: the values ``fn`` may return (``-inf`` / ``inf`` for an unbounded side).
    Default ``(0, 1)`` for a weighted component and ``(-inf, inf)`` for a weight-0 metric. A
    value outside it is recorded as an error of this component (never clipped); values within
    rounding (1e-9 relative) of a bound count as the bound.
    """

    name: str
    fn: Callable[[Any], float | None]
    weight: float = 1.0
    required: bool = False
    range: tuple[float, float] | None = None  # None → the default above; resolved on creation

    def __post_init__(self) -> None:
        _check_name(self.name, "Component")
        if self.name in _RESERVED:
            raise ConfigError(
                f"The 'name' of a Component must not be one of {_RESERVED} "
                f"(reserved record keys). Got {self.name!r}."
            )
        if not callable(self.fn):
            raise ConfigError(
                f"The 'fn' of Component {self.name!r} must be callable. Got {self.fn!r}."
            )
        object.__setattr__(
            self, "weight", check_real(self.weight, "weight", f"Component {self.name!r}")
        )
        if not isinstance(self.required, bool):
            raise ConfigError(
                f"The 'required' parameter of Component {self.name!r} must be a bool. "
                f"Got {self.required!r}."
            )
        if self.range is None:
            rng = DEFAULT_RANGE if self.weight != 0 else METRIC_RANGE
        else:
            rng = check_range(self.range, f"Component {self.name!r}")
        object.__setattr__(self, "range", rng)

    @property
    def low(self) -> float:
        assert self.range is not None  # resolved in __post_init__
        return self.range[0]

    @property
    def high(self) -> float:
        assert self.range is not None
        return self.range[1]

    def evaluate(self, episode: Any) -> float | None:
        out = self.fn(episode)
        if out is None:
            return None
        if isinstance(out, bool) or (
            not isinstance(out, (int, float)) and not hasattr(out, "__float__")
        ):
            raise TypeError(
                f"component {self.name!r} returned {type(out).__name__}; a "
                f"component returns a float or None"
            )
        x = float(out)
        if not math.isfinite(x):
            # A 0/0 or overflow is a bug, not "cannot score" (that is None): record it as an error.
            raise ValueError(
                f"component {self.name!r} returned {x}; return None when it cannot score"
            )
        return self._in_range(x)

    def _in_range(self, x: float) -> float:
        """``x`` if it lies in the declared range; a value within rounding of a bound is that
        bound; anything further out raises (recorded as this component's error)."""
        lo, hi = self.low, self.high
        if lo <= x <= hi:
            return x
        bound = lo if x < lo else hi
        if abs(x - bound) <= ROUNDING_RTOL * max(1.0, abs(bound)):
            return bound  # rounding noise of a value computed on the bound
        raise ValueError(
            f"component {self.name!r} returned {x!r}, outside its declared range "
            f"[{lo:g}, {hi:g}]; fix the component or declare range=(lo, hi)"
        )


@dataclass(frozen=True)
class RewardResult(JsonMixin):
    """The score of one episode: total, gate outcomes, every component, every error."""

    total: float | None
    hard_failed: bool
    gate_failures: Mapping[str, tuple[str, ...]]
    gates: Mapping[str, bool | None]  # True passed, False failed, None crashed
    components: Mapping[str, float | None]
    excluded: tuple[str, ...]  # components that returned None (or crashed)
    errors: Mapping[str, str]
    version: str
    config_hash: str

    def to_record(self) -> dict[str, float | int | None]:
        """Flat record for loggers: ``reward/total``, ``reward/<component>``, ``gate/<name>``.

        A gate is 1 when it passed, 0 when it failed, and None when it crashed.
        """
        rec: dict[str, float | int | None] = {
            "reward/total": self.total,
            "reward/hard_failed": int(self.hard_failed),
        }
        for name, value in self.components.items():
            rec[f"reward/{name}"] = value
        for name, passed in self.gates.items():
            rec[f"gate/{name}"] = None if passed is None else int(passed)
        return rec


class RewardStack:
    """Hard gates, then a weighted sum of soft components. See the module docstring."""

    @validate_params(
        {
            "fail_value": [Options(("below",)), Interval(float, None, None)],
            "version": ["str"],
            "on_error": [Options(ON_ERROR)],
            "renormalize": ["boolean"],
            "ordering": [Options(ORDERING)],
        }
    )
    def __init__(
        self,
        gates: Iterable[Gate] = (),
        components: Iterable[Component] = (),
        *,
        fail_value: float | Literal["below"] = "below",
        version: str = "0",
        on_error: Literal["none", "fail", "raise"] = "none",
        renormalize: bool = False,
        ordering: Literal["strict", "unchecked"] = "strict",
    ) -> None:
        fn = "RewardStack"
        self.gates: tuple[Gate, ...] = tuple(gates)
        self.components: tuple[Component, ...] = tuple(components)
        for g in self.gates:
            if not isinstance(g, Gate):
                raise ConfigError(
                    f"The 'gates' parameter of {fn} must hold Gate objects. Got {type(g).__name__}."
                )
        for c in self.components:
            if not isinstance(c, Component):
                raise ConfigError(
                    f"The 'components' parameter of {fn} must hold Component "
                    f"objects. Got {type(c).__name__}."
                )
        if not any(c.weight != 0 for c in self.components):
            raise ConfigError(
                f"The 'components' parameter of {fn} must hold at least one "
                f"component with a non-zero weight. Got "
                f"{[c.name for c in self.components]}."
            )
        seen: set[str] = set()
        for name in [g.name for g in self.gates] + [c.name for c in self.components]:
            if name in seen:
                raise ConfigError(
                    f"Names in a {fn} must be unique across gates and "
                    f"components; {name!r} appears twice."
                )
            seen.add(name)
        if not version:
            raise ConfigError(
                f"The 'version' parameter of {fn} must be a non-empty string. Got {version!r}."
            )
        self.version = version
        self.on_error = on_error
        self.renormalize = renormalize
        self.ordering = ordering
        self._bounds = safe_bounds(
            [(c.weight, (c.low, c.high), c.required) for c in self.components],
            renormalize=renormalize,
        )
        fv = check_fail_value(fail_value)
        self.fail_value: float = fail_below(self._bounds) if fv == "below" else float(fv)
        if self.ordering == "strict" and not is_strictly_below(self.fail_value, self._bounds):
            raise ConfigError(
                f"The 'fail_value' parameter of {fn} must lie strictly below the lowest safe "
                f"total {self._bounds.low:g} (from the components' ranges and weights), so that "
                f"every hard-failed episode ranks below every safe one. Got {fail_value!r}. "
                f"Use fail_value='below', or opt out with ordering='unchecked'."
            )

    def config(self) -> dict[str, Any]:
        """The configuration whose hash goes into every result."""
        return {
            "version": self.version,
            "fail_value": self.fail_value,
            "on_error": self.on_error,
            "renormalize": self.renormalize,
            "ordering": self.ordering,
            "gates": [{"name": g.name, "check": _identity(g.check)} for g in self.gates],
            "components": [
                {
                    "name": c.name,
                    "fn": _identity(c.fn),
                    "weight": c.weight,
                    "required": c.required,
                    "range": [_bound(c.low), _bound(c.high)],
                }
                for c in self.components
            ],
        }

    def bounds(self) -> StackBounds:
        """The lowest and highest total a safe episode (no failed gate, total not None) can
        get, from the components' ranges and weights, which may be missing (None) and
        ``renormalize``. ``fail_value`` lies strictly below ``bounds().low`` unless
        ``ordering="unchecked"``."""
        return self._bounds

    @cached_property
    def config_hash(self) -> str:
        """Hash of :meth:`config`: names, weights, flags, callables' names. Portable: the same on
        every machine and Python version, so golden files can record it."""
        return content_hash(self.config())

    @cached_property
    def code_hash(self) -> str:
        """Hash of the bytecode and constants of every gate and component (nested functions
        included): editing a part's code changes it even when its name stays the same. Bytecode
        differs between Python versions, so compare it only within one interpreter version."""
        parts = [(g.name, g.check) for g in self.gates] + [(c.name, c.fn) for c in self.components]
        return content_hash(
            [[name, _code_digest(code) if (code := _code_of(fn)) else None] for name, fn in parts]
        )

    def __repr__(self) -> str:
        return (
            f"RewardStack(gates={[g.name for g in self.gates]}, "
            f"components={[(c.name, c.weight) for c in self.components]}, "
            f"fail_value={self.fail_value}, version={self.version!r})"
        )

    def score(self, episode: Any) -> RewardResult:
        """Score one episode. Never raises for a crashing part unless ``on_error="raise"``."""
        errors: dict[str, str] = {}
        gates: dict[str, bool | None] = {}
        failures: dict[str, tuple[str, ...]] = {}
        for g in self.gates:
            try:
                out = g.evaluate(episode)
            except Exception as exc:  # a crashing gate is data, not a crash
                if self.on_error == "raise":
                    raise
                errors[g.name] = f"{type(exc).__name__}: {exc}"
                gates[g.name] = None
                continue
            gates[g.name] = bool(out.passed)
            if not out.passed:
                failures[g.name] = tuple(str(r) for r in out.reasons)

        values: dict[str, float | None] = {}
        for c in self.components:
            try:
                values[c.name] = c.evaluate(episode)
            except Exception as exc:
                if self.on_error == "raise":
                    raise
                errors[c.name] = f"{type(exc).__name__}: {exc}"
                values[c.name] = None
        excluded = tuple(name for name, v in values.items() if v is None)

        total: float | None
        hard_failed = bool(failures)
        if hard_failed:
            total = self.fail_value  # a definite failure dominates crashes elsewhere
        elif errors:
            total = self.fail_value if self.on_error == "fail" else None
        else:
            weighted = [(c.weight, values[c.name]) for c in self.components if c.weight != 0]
            present = [(w, v) for w, v in weighted if v is not None]
            missing_required = any(c.required and values[c.name] is None for c in self.components)
            if not present or missing_required:
                total = None  # nothing (or not the essential part) could be scored: never a fake 0
            else:
                total = math.fsum(w * v for w, v in present)
                if self.renormalize:
                    mass = math.fsum(abs(w) for w, _ in weighted)
                    present_mass = math.fsum(abs(w) for w, _ in present)
                    scaled = total * (mass / present_mass)
                    # weights far apart (1e-200 present, 1e200 absent): the ratio overflows
                    # although the weighted mean times the mass does not
                    total = scaled if math.isfinite(scaled) else mass * (total / present_mass)
        return RewardResult(
            total=total,
            hard_failed=hard_failed,
            gate_failures=failures,
            gates=gates,
            components=values,
            excluded=excluded,
            errors=errors,
            version=self.version,
            config_hash=self.config_hash,
        )

    def score_batch(self, episodes: Sequence[Any]) -> list[RewardResult]:
        """Score many episodes; one episode's crash never affects another's result."""
        return [self.score(ep) for ep in episodes]
