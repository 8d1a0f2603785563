"""The synthetic FHIR clinical-records environments (seed 002).

Registered ids (``rewardkit.envs.make``)::

    fhir/anc-threshold-v1        latest valid ANC (LOINC 751-8) >= 1.5 10*3/uL in a window
    fhir/platelets-threshold-v1  latest valid platelets (777-3) >= 100 10*3/uL
    fhir/creatinine-rise-v1      creatinine (2160-0) rise >= 0.3 mg/dL within 48 h
    fhir/potassium-latest-v1     latest valid potassium (2823-3) within 3.5-5.0 mmol/L

Modules: ``world`` (seeded patients and labs), ``units`` (LOINC / UCUM), ``tools`` (manifest,
searchset paging, audit ledger), ``tasks`` (TaskPackage, truth), ``verifier`` (the hidden
RewardStack), ``heldout`` (the independent verifier), ``env`` (FhirEnv), ``golden`` (the frozen
golden set of verdicts).
"""

from __future__ import annotations

from ..registry import register
from .env import FhirEnv
from .tasks import VERIFIER_VERSION, TaskPackage, Truth
from .tools import MANIFEST, LedgerEntry, ToolManifest, ToolSpec
from .verifier import DEFAULT_WEIGHTS, Episode, build_stack, naive_stack
from .world import FAMILIES, TRAPS, World, build_world

__all__ = [
    "DEFAULT_WEIGHTS",
    "ENV_IDS",
    "FAMILIES",
    "MANIFEST",
    "TRAPS",
    "VERIFIER_VERSION",
    "Episode",
    "FhirEnv",
    "LedgerEntry",
    "TaskPackage",
    "ToolManifest",
    "ToolSpec",
    "Truth",
    "World",
    "build_stack",
    "build_world",
    "naive_stack",
]

ENV_IDS = tuple(f"fhir/{family}-v1" for family in FAMILIES)


def _make(*, env_id: str, family: str, **kwargs: object) -> FhirEnv:
    return FhirEnv(family, env_id=env_id, **kwargs)  # type: ignore[arg-type]


for _family, _code in FAMILIES.items():
    register(
        f"fhir/{_family}-v1",
        "rewardkit.envs.fhir:_make",
        family=_family,
        description=f"synthetic FHIR world, {_family} (LOINC {_code})",
    )
