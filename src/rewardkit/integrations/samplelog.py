"""One JSONL record per scored sample, so that the reward a run trained with can be audited.

Usage::

    f = reward_func(stack, name="math", log_path="run/rewards.jsonl")      # TRL
    score = make_compute_score(stack, log_path="run/rewards.jsonl")       # verl
    rf = openrlhf.reward_func(stack, log_path="run/rewards.jsonl")        # OpenRLHF
    # after (or during) training:
    #   rewardkit calibrate --rewards run/rewards.jsonl --gold labels.jsonl

A record (canonical JSON, one line, keys sorted)::

    {"schema": "rewardkit.samples/1", "id": "<prompt_id>:<completion_hash>",
     "prompt_id": ..., "completion_hash": ..., "reward": total | null,
     "components": {name: value | null}, "gates": {name: true | false | null},
     "masks": {"total": bool, name: bool}, "hard_failed": bool, "errors": {name: message},
     "trainer": "trl" | "verl" | "openrlhf", "name": ..., "version": ..., "config_hash": ...,
     "step": int | null, "prompt": ..., "completion": ..., "episode": {...}}

``prompt_id`` is the episode's ``prompt_id`` or ``id`` field (a dataset column; verl: the same
keys of ``extra_info``, or its ``index``) when present, else the first 16 hex digits of the
SHA-256 of the prompt (verl passes no prompt: then of ``data_source``, ``ground_truth`` and
``extra_info``). ``completion_hash`` is the first 16 hex digits of the SHA-256 of the
completion. So one completion of one prompt has one id, and a gold file keyed by that id joins
with the log (``rewardkit.audit.data.read_rewards`` reads the records as they are; a repeated
id with the same values is read once). ``masks`` says which values are "cannot score": a None
is never logged as a number. ``episode`` is what the reward scored (every episode field but the
token ids), so ``rewardkit validate --items LOG --golden LOG`` replays the run: the golden gate
then checks that the reward still gives every logged value. ``text=False`` leaves ``prompt``,
``completion`` and ``episode`` out.

Appending is safe across threads and processes: each call writes its records in one
``os.write`` on a file opened with ``O_APPEND``, under an exclusive ``flock`` where the platform
has one, so records of concurrent writers never interleave within a line.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._json import canonical_json, to_plain
from ..errors import ConfigError
from ..stack import RewardResult, RewardStack

try:  # POSIX; elsewhere the O_APPEND single write is the only guard
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

__all__ = ["SCHEMA", "SampleLog", "open_log", "prompt_id"]

SCHEMA = "rewardkit.samples/1"
_NOT_REPLAYED = frozenset({"completion_ids"})


def _short_hash(obj: Any) -> str:
    try:
        text = canonical_json(obj)
    except (TypeError, ValueError):
        text = repr(obj)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _plain(obj: Any) -> Any:
    try:
        return to_plain(obj)
    except (TypeError, ValueError):
        return repr(obj)


def prompt_id(episode: Mapping[str, Any]) -> str:
    """The sample's prompt id: an explicit id field, else a hash of what identifies the prompt."""
    for key in ("prompt_id", "id"):
        v = episode.get(key)
        if isinstance(v, (str, int)) and not isinstance(v, bool):
            return str(v)
    info = episode.get("extra_info")
    if isinstance(info, Mapping):
        for key in ("prompt_id", "id", "index"):
            v = info.get(key)
            if isinstance(v, (str, int)) and not isinstance(v, bool):
                return str(v)
    if episode.get("prompt") is not None:
        return _short_hash(episode["prompt"])
    return _short_hash(
        [episode.get("data_source"), episode.get("ground_truth"), episode.get("extra_info")]
    )


class SampleLog:
    """Appends the records of scored samples to ``path`` (created with its folder)."""

    def __init__(
        self, path: str | os.PathLike[str], *, trainer: str, name: str, text: bool = True
    ) -> None:
        self.path = Path(path)
        self.trainer = trainer
        self.name = name
        self.text = text
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def __repr__(self) -> str:
        return f"SampleLog({str(self.path)!r}, trainer={self.trainer!r})"

    def record(
        self,
        stack: RewardStack,
        episode: Mapping[str, Any],
        result: RewardResult,
        *,
        step: int | None = None,
    ) -> dict[str, Any]:
        """The record of one scored sample (see the module docstring)."""
        pid = prompt_id(episode)
        chash = _short_hash(episode.get("completion"))
        masks = {"total": result.total is None}
        masks.update({name: v is None for name, v in result.components.items()})
        rec: dict[str, Any] = {
            "schema": SCHEMA,
            "id": f"{pid}:{chash}",
            "prompt_id": pid,
            "completion_hash": chash,
            "reward": result.total,
            "components": dict(result.components),
            "gates": dict(result.gates),
            "masks": masks,
            "hard_failed": result.hard_failed,
            "errors": dict(result.errors),
            "trainer": self.trainer,
            "name": self.name,
            "version": stack.version,
            "config_hash": result.config_hash,
            "step": step,
        }
        if self.text:
            rec["prompt"] = _plain(episode.get("prompt"))
            rec["completion"] = _plain(episode.get("completion"))
            # what the reward saw, so that validate can replay it (token ids left out)
            rec["episode"] = {k: _plain(v) for k, v in episode.items() if k not in _NOT_REPLAYED}
        return rec

    def write(
        self,
        stack: RewardStack,
        episodes: Sequence[Mapping[str, Any]],
        results: Sequence[RewardResult],
        *,
        step: int | None = None,
    ) -> None:
        """Append one line per sample, all in one write under the lock."""
        lines = "".join(
            canonical_json(self.record(stack, ep, r, step=step)) + "\n"
            for ep, r in zip(episodes, results, strict=True)
        )
        data = lines.encode("utf-8")
        if not data:
            return
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                if fcntl is not None:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                view = memoryview(data)
                while view:  # a regular file takes it in one write; loop for safety
                    n = os.write(fd, view)
                    view = view[n:]
            finally:
                os.close(fd)  # closing releases the flock


def open_log(log_path: Any, *, trainer: str, name: str, func: str) -> SampleLog | None:
    """``None`` for no log; else a :class:`SampleLog` (a clear error for a bad path)."""
    if log_path is None:
        return None
    if not isinstance(log_path, (str, os.PathLike)) or not str(log_path):
        raise ConfigError(
            f"The 'log_path' parameter of {func} must be a file path (str or os.PathLike). "
            f"Got {log_path!r}."
        )
    if Path(log_path).is_dir():
        raise ConfigError(
            f"The 'log_path' parameter of {func} must name a file, not a folder. Got "
            f"{str(log_path)!r}."
        )
    return SampleLog(log_path, trainer=trainer, name=name)
