"""Optional dependencies: import them late, and name the pip command when one is missing."""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import MissingExtraError

__all__ = ["have", "require"]


def require(module: str, extra: str, feature: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtraError` naming ``rewardkit[extra]``."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(module.split(".")[0], extra, feature) from None


def have(module: str) -> bool:
    """Whether ``module`` can be imported (without raising)."""
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True
