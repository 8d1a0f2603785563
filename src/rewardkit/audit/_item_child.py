"""The determinism gate's fresh interpreter for a user's reward (``python -m``).

Reads one JSON object on stdin — ``spec`` (``module:factory``), ``cwd`` (put first on the
import path, as in the parent) and ``items`` (``[id, fields]`` pairs) — and writes the scores'
canonical JSON (:func:`rewardkit.audit.userreward.scores_json`) to stdout, nothing else:
file descriptor 1 is pointed at stderr before the user's module is imported, so whatever it
prints (Python ``print`` or a C extension writing to fd 1) cannot change the bytes compared.
"""

from __future__ import annotations

import json
import os
import sys


def main() -> int:
    from .userreward import load_reward, scores_json

    spec = json.loads(sys.stdin.read())
    sys.stdout.flush()
    result = os.fdopen(os.dup(1), "w", encoding="utf-8")  # the only channel for the scores
    os.dup2(2, 1)  # anything else written to stdout goes to stderr
    reward = load_reward(spec["spec"], cwd=spec["cwd"])
    text = scores_json(reward, [(i, item) for i, item in spec["items"]])
    sys.stdout.flush()
    result.write(text)
    result.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
