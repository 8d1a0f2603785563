"""Errors and warnings raised by rewardkit.

Every error names what was wrong (parameter, file, line, field), what is accepted and what was
received. Hierarchy::

    RewardkitError                      base of everything rewardkit raises on purpose
    ├── ConfigError (ValueError)        a bad parameter or configuration value
    │   └── MappingError                a level mapping that breaks a rule (levels.LevelMapping)
    ├── InputError (ValueError)         a bad user data file: names the file, line and field
    ├── EnvError (RuntimeError)         an environment used out of order, or a snapshot that
    │                                   does not replay (envs)
    └── MissingExtraError (ImportError) an optional dependency is missing: names the pip command

    RewardkitWarning (UserWarning)      base of the typed warnings for degenerate data
    └── ZeroVarianceWarning             no group in a batch carries any reward variance
    RenamedFieldWarning (FutureWarning) a data file or mapping uses a field's old name; it is
                                        read as the new name for one version, then refused
                                        (a FutureWarning: shown by default to whoever runs
                                        the code, since the one who must act is the user who
                                        wrote the file, not a developer)

A failed rollout, a crashing reward component or a failing gate is *not* an exception: it is
recorded on the result (see ``stack.RewardResult.errors``).
"""

from __future__ import annotations

import os
import sys
import warnings

__all__ = [
    "ConfigError",
    "EnvError",
    "InputError",
    "MappingError",
    "MissingExtraError",
    "RewardkitError",
    "RenamedFieldWarning",
    "RewardkitWarning",
    "ZeroVarianceWarning",
]


class RewardkitError(Exception):
    """Base class of every error rewardkit raises on purpose."""


class ConfigError(RewardkitError, ValueError):
    """A parameter or configuration value outside what is accepted."""


class MappingError(ConfigError):
    """A level mapping that is not monotone, exceeds its ceiling, or maps the reserved level −1."""


class InputError(RewardkitError, ValueError):
    """A malformed user data file; the message names the file, line and field."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        where = []
        if path is not None:
            shown = str(path)
            # a name the one-line message would blur (blank, spaces at an end, a line break)
            # is quoted: "' ': no such file", not ": no such file"
            blurred = not shown.strip() or shown != shown.strip() or "\n" in shown
            where.append(repr(shown) if blurred else shown)
        if line is not None:
            where.append(f"line {line}")
        if field is not None:
            where.append(f"field '{field}'")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)
        self.path = path
        self.line = line
        self.field = field


class EnvError(RewardkitError, RuntimeError):
    """An environment used out of order (``step`` after the end, before ``reset``) or a
    snapshot whose lineage no longer matches the environment it names."""


class MissingExtraError(RewardkitError, ImportError):
    """An optional dependency is not installed."""

    def __init__(self, package: str, extra: str, feature: str) -> None:
        super().__init__(
            f"{feature} needs the optional package '{package}', which is not installed. "
            f"Install it with: pip install 'rewardkit[{extra}]'"
        )
        self.package = package
        self.extra = extra


class RewardkitWarning(UserWarning):
    """Base class of rewardkit's typed warnings for degenerate data."""


class ZeroVarianceWarning(RewardkitWarning):
    """Every group of a batch has zero reward variance: the batch carries no learning signal."""


class RenamedFieldWarning(FutureWarning):
    """A data file (or a step mapping) uses a field's old name. The value is read under the
    new name for one more version; the next version refuses the old name. The message names
    the file, the first line that has it, the old and the new name.

    A FutureWarning, not a DeprecationWarning: Python hides DeprecationWarnings raised
    outside ``__main__``, and this one is raised inside rewardkit's readers, so the user whose
    file must change would never see it."""

    @classmethod
    def warn(cls, message: str) -> None:
        """Warn, attributed to the first caller outside rewardkit (the line of the user's code
        that read the file), however deep in rewardkit's readers and decorators it is raised."""
        frame = sys._getframe(0)
        level = 1
        while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
            frame = frame.f_back  # type: ignore[assignment]
            level += 1
        warnings.warn(message, cls, stacklevel=level)


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
