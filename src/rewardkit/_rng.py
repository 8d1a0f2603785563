"""Keyword-only ``rng`` arguments: an int seed or a numpy Generator, never global state."""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import ConfigError

__all__ = ["RngLike", "as_generator"]

RngLike = int | np.random.Generator


def as_generator(rng: Any, func: str, param: str = "rng") -> np.random.Generator:
    """``default_rng(int)`` for an int seed; a Generator is used as is (and advanced)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng >= 0:
        return np.random.default_rng(int(rng))
    raise ConfigError(
        f"The '{param}' parameter of {func} must be a non-negative int seed or a "
        f"numpy.random.Generator. Got {rng!r}."
    )
