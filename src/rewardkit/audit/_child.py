"""The determinism gate's second run, in a fresh interpreter (``python -m``).

Reads one JSON object on stdin — ``judge`` and ``reward`` as ``[“module:callable”, kwargs]``,
``recipes`` and ``tasks`` (task_id, decisions, reviews) — and writes the reward JSON that
:func:`rewardkit.audit.gates.reward_json` computes to stdout, nothing else.
"""

from __future__ import annotations

import importlib
import json
import sys
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class _Task:
    task_id: str
    decisions: tuple[dict[str, Any], ...]
    reviews: tuple[str | None, ...] | None
    n_gold_correct: int = 0
    n_gold_error: int = 0
    n_gold_edge: int = 0


def build(spec: Any) -> Any:
    """Call ``module:callable`` (a dotted attribute path is allowed) with its kwargs."""
    target, kwargs = spec
    module, _, attr = target.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj(**kwargs)


def main() -> int:
    from .gates import reward_json

    spec = json.loads(sys.stdin.read())
    tasks = [
        _Task(
            t["task_id"],
            tuple(t["decisions"]),
            None if t["reviews"] is None else tuple(t["reviews"]),
        )
        for t in spec["tasks"]
    ]
    text = reward_json(
        tasks, judge=build(spec["judge"]), reward=build(spec["reward"]), recipes=spec["recipes"]
    )
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
