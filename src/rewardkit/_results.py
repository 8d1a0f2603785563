"""The check / section result model: what a run verified, and how it is grouped.

    from rewardkit import Check, Section
    c = Check("spike-in drop ≥ 0.30", "≥ 0.300000", "0.612", passed=True)
    s = Section("levels", "Level-based step rewards", (c,), {"levels.json": {...}})

A :class:`Check` is one verified claim (what was expected, what was measured, whether they
agree). Areas return checks (``check_env``, the lab, ``calibrate``); a :class:`Section` groups
checks with the JSON artefacts and figures that back them (the parts of ``rewardkit demo``).
This module sits at the bottom of the layers, beside ``errors`` and ``_json``, so that any area
can report checks without importing the presentation (``demo``, ``cli``, ``report``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._json import JsonMixin, content_hash, to_plain

__all__ = ["Check", "Section"]


@dataclass(frozen=True)
class Check(JsonMixin):
    """One verified claim: what was expected, what was measured, and whether they agree."""

    name: str
    expected: str
    measured: str
    passed: bool


@dataclass(frozen=True)
class Section(JsonMixin):
    """A named group of checks with the JSON artefacts and figures behind them.

    ``name`` is an id (letters, digits, ``-``, ``_``); artefact file names must be unique
    across the sections of one run. ``figures`` maps a caption to PNG bytes;
    ``to_dict()`` lists their hashes, not their bytes.
    """

    name: str
    title: str
    checks: tuple[Check, ...]
    artefacts: dict[str, Any] = field(default_factory=dict)  # file name → JSON-able object
    figures: dict[str, bytes] = field(default_factory=dict)  # caption → PNG bytes
    description: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "checks": [c.to_dict() for c in self.checks],
            "artefacts": to_plain(self.artefacts),
            "figures": {k: content_hash(v) for k, v in self.figures.items()},
        }
