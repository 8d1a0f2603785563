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
            "The 'rng' parameter of f must be an int >= 0 or a numpy.random.Generator. Got -1.",
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
