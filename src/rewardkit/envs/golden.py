"""Golden sets of an environment family: replayable episodes with the verdicts the verifier gave.

Each family keeps its own episodes and file (``rewardkit.envs.<family>.golden``) in a
:class:`GoldenSet`, which builds, reads and replays them::

    GOLDEN = GoldenSet(Path("data/golden-v1.jsonl"), episodes, "my-verifier-1.0.0")
    GOLDEN.diff()                      # [] while the verifier is unchanged
    GOLDEN.main(["--write"])           # rewrite the file after a deliberate verifier change
 A changed verdict shows up in :func:`diff_records` first and means
a new verifier version (the lineage then changes, so old snapshots refuse to replay instead of
silently scoring differently).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._json import canonical_json, write_atomic
from ..errors import EnvError
from .core import Env

__all__ = [
    "GoldenSet",
    "compute_records",
    "diff_records",
    "golden_main",
    "load_records",
    "play_actions",
]


def compute_records(episodes: Iterable[tuple[str, Env]]) -> list[dict[str, Any]]:
    """Records {"name", "snapshot", "verdict"} of finished episodes, from the current code."""
    return [
        {"name": name, "snapshot": json.loads(env.snapshot()), "verdict": env.finalize().to_dict()}
        for name, env in episodes
    ]


def load_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def diff_records(path: Path) -> list[tuple[str, str]]:
    """Replay every golden snapshot; (name, difference) for each verdict that changed."""
    diffs = []
    for rec in load_records(path):
        try:
            now = Env.replay(canonical_json(rec["snapshot"])).to_dict()
        except EnvError as exc:
            diffs.append((rec["name"], str(exc)))
            continue
        old = rec["verdict"]
        for key in sorted(set(old) | set(now)):
            if canonical_json(old.get(key)) != canonical_json(now.get(key)):
                diffs.append((rec["name"], f"{key}: {old.get(key)!r} → {now.get(key)!r}"))
    return diffs


def golden_main(
    argv: Sequence[str] | None,
    *,
    path: Path,
    compute: Callable[[], list[dict[str, Any]]],
    version: str,
) -> int:
    """``python -m rewardkit.envs.<family>.golden [--write]``: print the diff (exit 1 if any),
    or rewrite the file after a deliberate verifier change."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--write"]:
        lines = [canonical_json(r) for r in compute()]
        write_atomic(path, "\n".join(lines) + "\n")
        print(f"wrote {len(lines)} golden verdicts ({version}) to {path}")
        return 0
    diffs = diff_records(path)
    for name, d in diffs:
        print(f"{name}: {d}")
    print(f"{len(diffs)} verdict differences against {path.name}")
    return 1 if diffs else 0


def play_actions(env: Env, actions: Iterable[Any]) -> Env:
    """Step ``env`` through ``actions`` until the episode ends; returns ``env``."""
    for action in actions:
        if env.step(action)[2]:
            break
    return env


@dataclass(frozen=True)
class GoldenSet:
    """One family's golden set: its file, the episodes it records and the verifier version."""

    path: Path
    episodes: Callable[[], list[tuple[str, Env]]]
    version: str

    def compute(self) -> list[dict[str, Any]]:
        """Records {"name", "snapshot", "verdict"} from the current code."""
        return compute_records(self.episodes())

    def load(self, path: Path | None = None) -> list[dict[str, Any]]:
        return load_records(self.path if path is None else path)

    def diff(self, path: Path | None = None) -> list[tuple[str, str]]:
        """Replay every golden snapshot; (name, difference) for each verdict that changed."""
        return diff_records(self.path if path is None else path)

    def main(self, argv: Sequence[str] | None = None) -> int:
        """``python -m rewardkit.envs.<family>.golden [--write]``."""
        return golden_main(argv, path=self.path, compute=self.compute, version=self.version)
