"""Verifiable environments: a Gymnasium-shaped contract with a hidden verifier (SPEC §6).

Usage::

    from rewardkit.envs import make, check_env
    env = make("fhir/anc-threshold-v1")
    obs, info = env.reset(seed=0)
    for action in env.reference_actions():
        obs, reward, terminated, truncated, info = env.step(action)
    env.finalize().components                 # task, citation, abstention, efficiency, ...
    check_env(env).passed                     # seeding, replay, no verifier leaks

Modules: ``core`` (Env, Verdict, snapshots), ``actions`` (strict action parser),
``registry`` (versioned ids), ``conformance`` (check_env), ``toolenv`` (ToolEnv: what the
tool-calling families share), ``manifest`` (ToolManifest, argument checks), ``stacks`` (a
family's hidden verifier from its parts), ``golden`` (golden sets), ``fhir`` (the synthetic
FHIR world), ``sql`` (the retail database),
``lab`` (``rewardkit lab rlvr``), ``library`` / ``cases`` / ``fuzz`` / ``policies`` (``rewardkit
redteam``), ``sweep`` (``rewardkit sweep``).
"""

from __future__ import annotations

from typing import Any

from .actions import ParsedAction, parse_action
from .core import Env, Verdict
from .registry import EnvSpec, make, register, registered, spec

__all__ = [
    "Env",
    "EnvSpec",
    "ParsedAction",
    "Verdict",
    "check_env",
    "make",
    "parse_action",
    "register",
    "registered",
    "spec",
]


def check_env(env: Any, **kwargs: Any) -> Any:
    """See :func:`rewardkit.envs.conformance.check_env`."""
    from .conformance import check_env as _check

    return _check(env, **kwargs)
