"""Declarative parameter validation: one constraints table per function, one decorator, one
message template that names the parameter, the function, what is accepted and what was got."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from rewardkit._validation import Interval, Options, validate_params
from rewardkit.errors import ConfigError


@validate_params(
    {
        "n": [Interval(int, 1, None)],
        "p": [Interval(float, 0, 1, closed="right"), None],
        "how": [Options(("exact", "fast"))],
        "rng": ["rng"],
        "flag": ["boolean"],
    }
)
def f(n: int, *, p: float | None = 0.5, how: str = "exact", rng: Any = 0, flag: bool = False):
    return n


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 0}, "The 'n' parameter of f must be an int in [1, inf). Got 0."),
        ({"n": True}, "The 'n' parameter of f must be an int in [1, inf). Got True."),
        ({"n": 2.0}, "The 'n' parameter of f must be an int in [1, inf). Got 2.0."),
        ({"n": 1, "p": 0}, "The 'p' parameter of f must be a float in (0, 1] or None. Got 0."),
        (
            {"n": 1, "p": math.nan},
            "The 'p' parameter of f must be a float in (0, 1] or None. Got nan.",
        ),
        (
            {"n": 1, "how": "EXACT"},
            "The 'how' parameter of f must be one of 'exact', 'fast'. Got 'EXACT'.",
        ),
        (
            {"n": 1, "rng": -1},
            "The 'rng' parameter of f must be an int in [0, 2**63) or a numpy.random.Generator. "
            "Got -1.",
        ),
        ({"n": 1, "flag": 1}, "The 'flag' parameter of f must be a bool. Got 1."),
    ],
)
def test_one_message_template(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        f(**kwargs)
    assert str(exc.value) == message


def test_valid_values_pass() -> None:
    assert f(3, p=None, how="fast", rng=np.random.default_rng(0), flag=True) == 3
    assert f(10**400) == 10**400  # an int bound, not a float conversion


def test_a_constraint_on_a_missing_parameter_is_refused_at_decoration() -> None:
    with pytest.raises(TypeError, match="no parameter"):
        validate_params({"nope": [None]})(lambda x: x)


def test_public_functions_carry_their_table() -> None:
    from rewardkit.selfplay.predictions import p1_check

    table = p1_check.__rewardkit_constraints__  # type: ignore[attr-defined]
    assert set(table) == {"m", "n_per_bucket", "rng"}


# --- the registry: every public function or class that takes a number or an option ------------
#
# Walk every public module's ``__all__``; a callable whose signature takes a number (an int or
# float default or annotation) or an option (a ``Literal``) is either decorated with
# ``validate_params`` or listed in ``NOT_DECORATED`` with the reason, so a new public function
# cannot forget its table. Then every decorated function is fed bad values of each constraint
# class and must refuse each with a ConfigError (a ValueError) naming the parameter and itself.

import importlib  # noqa: E402
import inspect  # noqa: E402
import pkgutil  # noqa: E402
import re  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402

import rewardkit  # noqa: E402
from rewardkit._json import JsonMixin  # noqa: E402
from rewardkit._validation import Each  # noqa: E402

_PRESENTATION = ("rewardkit.cli", "rewardkit.demo", "rewardkit.report")
_NUMERIC = re.compile(r"\b(int|float|Literal)\b")


def public_callables() -> Iterator[tuple[str, Any]]:
    """(qualified name, object) of every function and class in a public module's __all__."""
    seen: set[int] = set()
    for info in sorted(pkgutil.walk_packages(rewardkit.__path__, "rewardkit."), key=str):
        name = info.name
        parts = name.split(".")
        if any(p.startswith("_") for p in parts[1:]) or name.startswith(_PRESENTATION):
            continue
        if parts[-1] in ("cli", "demo", "plots"):
            continue
        mod = importlib.import_module(name)
        for attr in getattr(mod, "__all__", ()):
            obj = getattr(mod, attr, None)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)) or id(obj) in seen:
                continue
            if getattr(obj, "__module__", "").split(".")[0] != "rewardkit":
                continue
            seen.add(id(obj))
            yield f"{obj.__module__}.{obj.__qualname__}", obj


def _target(obj: Any) -> Callable[..., Any]:
    return obj.__init__ if inspect.isclass(obj) else obj


def numeric_params(obj: Any) -> list[str]:
    """Parameters taking a number or an option: an int/float default or annotation, a Literal."""
    if inspect.isclass(obj) and (issubclass(obj, (JsonMixin, BaseException))):
        return []
    try:
        sig = inspect.signature(_target(obj))
    except (TypeError, ValueError):
        return []
    out = []
    for p in sig.parameters.values():
        if p.name in ("self", "cls") or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        d = p.default
        ann = p.annotation if isinstance(p.annotation, str) else repr(p.annotation)
        if (isinstance(d, (int, float)) and not isinstance(d, bool)) or _NUMERIC.search(ann):
            out.append(p.name)
    return out


def table_of(obj: Any) -> dict[str, list[Any]] | None:
    return getattr(_target(obj), "__rewardkit_constraints__", None)
