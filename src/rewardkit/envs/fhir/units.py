"""LOINC codes of the synthetic world and their UCUM units, with the equivalent variants.

Usage::

    from rewardkit.envs.fhir.units import to_canonical
    to_canonical(1200.0, "/uL", "751-8")     # 1.2   (10*3/uL)
    to_canonical(97.3, "umol/L", "2160-0")   # 1.1004 (mg/dL)
    to_canonical(1.2, "kg", "751-8")         # None: not a unit of this code

Every code has one canonical UCUM unit; every other accepted unit is a factor to it. A unit
that is not listed for the code converts to ``None`` (the value cannot be compared).
"""

from __future__ import annotations

__all__ = [
    "CANONICAL_UNIT",
    "CODES",
    "DISPLAY",
    "POTASSIUM_MG_DL_PER_MMOL_L",
    "UNIT_FACTORS",
    "to_canonical",
]

# LOINC code → display name (SPEC §6).
DISPLAY: dict[str, str] = {
    "751-8": "Neutrophils [#/volume] in Blood by Automated count",
    "6690-2": "Leukocytes [#/volume] in Blood by Automated count",
    "777-3": "Platelets [#/volume] in Blood by Automated count",
    "718-7": "Hemoglobin [Mass/volume] in Blood",
    "2160-0": "Creatinine [Mass/volume] in Serum or Plasma",
    "2823-3": "Potassium [Moles/volume] in Serum or Plasma",
}
CODES: tuple[str, ...] = tuple(DISPLAY)

_COUNT = {"10*3/uL": 1.0, "10*9/L": 1.0, "/uL": 1e-3, "cells/uL": 1e-3}
# 1 mg/dL creatinine = 88.42 umol/L (molar mass 113.12 g/mol).
CREATININE_UMOL_PER_MG_DL = 88.42
POTASSIUM_MG_DL_PER_MMOL_L = 3.91

UNIT_FACTORS: dict[str, dict[str, float]] = {
    "751-8": _COUNT,
    "6690-2": _COUNT,
    "777-3": _COUNT,
    "718-7": {"g/dL": 1.0, "g/L": 0.1},
    "2160-0": {"mg/dL": 1.0, "umol/L": 1.0 / CREATININE_UMOL_PER_MG_DL},
    # monovalent ion: 1 mEq/L = 1 mmol/L; by mass 1 mmol/L = 3.91 mg/dL (39.10 g/mol)
    "2823-3": {"mmol/L": 1.0, "meq/L": 1.0, "mg/dL": 1.0 / POTASSIUM_MG_DL_PER_MMOL_L},
}
CANONICAL_UNIT: dict[str, str] = {
    code: next(u for u, f in factors.items() if f == 1.0) for code, factors in UNIT_FACTORS.items()
}


def to_canonical(value: float, unit: str | None, code: str) -> float | None:
    """``value`` in ``unit`` expressed in the code's canonical unit, or None if not convertible.

    UCUM units are case-sensitive except the conventional ``mEq/L`` spelling, which is matched
    case-insensitively (``meq/L``).
    """
    if unit is None:
        return None
    factors = UNIT_FACTORS.get(code)
    if factors is None:
        return None
    f = factors.get(unit)
    if f is None and unit.lower() == "meq/l":
        f = factors.get("meq/L")
    return None if f is None else value * f
