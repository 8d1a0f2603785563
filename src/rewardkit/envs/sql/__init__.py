"""SQL analytics environments on a seeded retail database in SQLite (seed 002's method on a
real database engine).

Registered ids (``rewardkit.envs.make``)::

    sql/revenue-v1        net revenue of one store in one local month (USD)
    sql/top-customers-v1  the N best customers of a quarter (ties at the cut-off included)
    sql/retention-v1      the share of a month's new customers who ordered again within D days
    sql/refund-rate-v1    refunds / gross of a product category in a quarter

Modules: ``data`` (seeded tables), ``schema`` (tables, data dictionary, personal columns),
``truth`` (answers from the arrays, with traps mishandled on request), ``world`` (SQLite build,
decisive scenarios), ``engine`` (read-only session, authorizer, VM-step budget), ``tools``
(manifest, ledger), ``tasks`` (prompts, answer rules, reference SQL), ``actions`` (answer
schema), ``phi`` (the PHI gate's finder), ``verifier`` (the hidden RewardStack), ``heldout``
(the independent verifier), ``env`` (SqlEnv), ``audit`` (ledger violations), ``policies`` /
``mutations`` / ``behaviours`` (red-team and sweep), ``attacks`` / ``cases`` (the adversarial
library), ``golden``, ``demo``.
"""

from __future__ import annotations

from typing import Any

from ..registry import register
from .env import SqlEnv
from .schema import PERSONAL_COLUMNS
from .tasks import FAMILIES, VERIFIER_VERSION, SqlTask
from .verifier import DEFAULT_WEIGHTS, FAIL_VALUE, SqlEpisode, build_stack, naive_stack
from .world import FAMILY_TRAPS, World, build_world

__all__ = [
    "DEFAULT_WEIGHTS",
    "ENV_IDS",
    "FAIL_VALUE",
    "FAMILIES",
    "FAMILY_TRAPS",
    "PERSONAL_COLUMNS",
    "VERIFIER_VERSION",
    "SqlEnv",
    "SqlEpisode",
    "SqlTask",
    "World",
    "build_stack",
    "build_world",
    "naive_stack",
]

ENV_IDS = tuple(f"sql/{family}-v1" for family in FAMILIES)


def _make(*, env_id: str, family: str, **kwargs: Any) -> SqlEnv:
    return SqlEnv(family, env_id=env_id, **kwargs)


for _family in FAMILIES:
    register(
        f"sql/{_family}-v1",
        "rewardkit.envs.sql:_make",
        family=_family,
        description=f"SQL analytics on the seeded retail database: {_family}",
    )
