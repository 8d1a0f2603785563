"""The determinism gate's fresh interpreter for a user's reward (``python -m``).

Reads one JSON object on stdin — ``spec`` (``module:factory``), ``cwd`` (put first on the
import path, as in the parent) and ``items`` (``[id, fields]`` pairs) — and writes the scores'
canonical JSON (:func:`rewardkit.audit.userreward.scores_json`) to stdout, nothing else.
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    from .userreward import load_reward, scores_json

    spec = json.loads(sys.stdin.read())
    reward = load_reward(spec["spec"], cwd=spec["cwd"])
    sys.stdout.write(scores_json(reward, [(i, item) for i, item in spec["items"]]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
