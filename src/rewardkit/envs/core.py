"""The environment contract: Gymnasium-shaped episodes plus the seed's verifier hooks.

Usage::

    from rewardkit.envs import make
    env = make("fhir/anc-threshold-v1")
    obs, info = env.reset(seed=7)
    obs, reward, terminated, truncated, info = env.step('{"tool": "search_patients", ...}')
    ...
    verdict = env.finalize()            # runs the hidden verifier; verdict.total, .components
    blob = env.snapshot()               # bytes: env id, constructor kwargs, seed, actions
    assert Env.replay(blob).to_json() == verdict.to_json()

Contract (SPEC §6): ``reset(*, seed=None, options=None) -> (obs, info)``;
``step(action) -> (obs, reward, terminated, truncated, info)`` with reward 0 until the episode
ends (then the verdict's total; when the verifier cannot score the episode, the total is None,
the reward is the placeholder 0.0 and the last ``info`` says so: ``info["reward_is_none"] is
True`` with ``info["reward_none_reason"]`` — drop such samples, never train on them as 0);
``finalize() -> Verdict``; max steps and budget end an episode as *truncated*. Nothing of
the hidden verifier reaches ``obs`` or ``info``.
A snapshot is the episode's inputs, not its state: replaying them through a fresh environment
re-creates the state and reproduces the verdict byte for byte (``check_env`` verifies it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._json import JsonMixin, canonical_json
from ..errors import ConfigError, EnvError
from ..stack import RewardResult

__all__ = ["SNAPSHOT_FORMAT", "UNENCODABLE", "Env", "Verdict", "recorded_action"]

SNAPSHOT_FORMAT = "rewardkit-env-snapshot/1"


@dataclass(frozen=True)
class Verdict(JsonMixin):
    """The hidden verifier's judgment of one episode, with the task's lineage hash.

    ``soft_total`` is the weighted sum of the soft components as if no gate had failed: it is
    logged so that a hard failure never hides what the soft score would have been.
    """

    env_id: str
    task_id: str
    lineage: str
    verifier_version: str
    config_hash: str
    total: float | None
    soft_total: float | None
    hard_failed: bool
    gate_failures: Mapping[str, tuple[str, ...]]
    components: Mapping[str, float | None]
    excluded: tuple[str, ...]
    errors: Mapping[str, str]
    terminated: bool
    truncated: bool
    n_steps: int
    cost_spent: float

    @classmethod
    def from_result(
        cls, result: RewardResult, weights: Mapping[str, float], **fields: Any
    ) -> Verdict:
        present = [(weights[k], v) for k, v in result.components.items() if v is not None]
        soft = sum(w * v for w, v in present) if present else None
        return cls(
            verifier_version=result.version,
            config_hash=result.config_hash,
            total=result.total,
            soft_total=soft,
            hard_failed=result.hard_failed,
            gate_failures=result.gate_failures,
            components=result.components,
            excluded=result.excluded,
            errors=result.errors,
            **fields,
        )


MAX_SEED_EXCLUSIVE = 10**300  # reset seeds: what a snapshot (JSON) can record and read back

UNENCODABLE = "invalid action: "  # the recorded form of an action that is not JSON


def recorded_action(action: Any) -> Any:
    """The form of ``action`` that the environment judges and the snapshot records.

    Text is kept as is (bytes are decoded as UTF-8). Anything else is kept only if canonical
    JSON holds it exactly (it reads back equal, with the same types): a NaN (JSON would write
    null), a tuple (a list), bytes, a set, 5,000-deep nesting, or text with a lone surrogate
    (which UTF-8, and so a snapshot, cannot hold) become the string
    ``"invalid action: <why>"``, which every environment rejects as malformed. So a replayed
    episode judges the same actions as the live one, and no action raises.
    """
    if isinstance(action, str):
        return action if _utf8_ok(action) else UNENCODABLE + _SURROGATE
    if isinstance(action, (bytes, bytearray)):
        try:
            return bytes(action).decode("utf-8")
        except UnicodeDecodeError:
            return UNENCODABLE + "bytes that are not UTF-8 text"
    try:  # the comparison recurses too: an action JSON can write may still be too deep for it
        text = canonical_json(action)
        back = json.loads(text)
        same = _same_json(back, action)
    except RecursionError:
        return UNENCODABLE + "nested too deeply"
    except (TypeError, ValueError) as exc:
        return UNENCODABLE + f"not JSON ({str(exc)[:120]})"
    if not _utf8_ok(text):
        return UNENCODABLE + _SURROGATE
    if not same:
        return UNENCODABLE + "holds values JSON cannot carry exactly (NaN, tuples, -0.0 …)"
    return back


_SURROGATE = "text with a lone surrogate (not Unicode text that UTF-8 can hold)"


def _utf8_ok(text: str) -> bool:
    """``text`` can be written as UTF-8 (no lone surrogates such as ``"\\ud800"``), as a
    snapshot must be."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _same_json(a: Any, b: Any) -> bool:
    """``a`` (read back from JSON) equals ``b`` with the same container and number types."""
    if type(a) is not type(b):
        # an int written and read back as an int; a float as a float; nothing else may differ
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_json(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return a == b and str(a) == str(b)  # -0.0 / 0.0 and NaN differ here
    return bool(a == b)


def _shape(value: Any) -> str:
    """What a hook returned, briefly: the type, and the element types of a tuple."""
    if isinstance(value, tuple):
        return f"a {len(value)}-tuple ({', '.join(type(v).__name__ for v in value)})"
    if isinstance(value, Mapping):
        return f"a {type(value).__name__} with keys {sorted(map(str, value))[:8]}"
    return f"a {type(value).__name__}"


def _short(action: Any) -> str:
    text = action if isinstance(action, str) else canonical_json(action)
    return repr(text if len(text) <= 120 else text[:120] + "…")


def _none_reason(verdict: Verdict) -> str:
    n = len(verdict.errors)
    if n:
        return (
            f"the verifier could not score this episode ({n} verifier "
            f"{'part' if n == 1 else 'parts'} raised); the reward 0.0 is a placeholder, "
            f"see finalize().errors"
        )
    return (
        "the verifier could not score this episode (a required component had no score); "
        "the reward 0.0 is a placeholder, see finalize().excluded"
    )


def _load_snapshot(data: bytes | str) -> dict[str, Any]:
    try:
        snap = json.loads(data)
        if not isinstance(snap, dict) or snap.get("format") != SNAPSHOT_FORMAT:
            raise ValueError(
                f"format is {snap.get('format') if isinstance(snap, dict) else None!r}"
            )
        for key in ("env_id", "kwargs", "seed", "options", "actions", "lineage"):
            if key not in snap:
                raise ValueError(f"no {key!r}")
    except (ValueError, TypeError) as exc:
        raise EnvError(f"Not a replayable {SNAPSHOT_FORMAT} snapshot: {exc}.") from None
    return snap


class Env:
    """Base class. Subclasses implement ``_reset``, ``_step`` and ``_verdict``; the base keeps
    the inputs (seed, options, actions) that make snapshots and replay possible."""

    env_id: str = ""

    def __init__(self, **kwargs: Any) -> None:
        self._kwargs = dict(kwargs)  # constructor kwargs (JSON-able): part of every snapshot
        self._seed: int | None = None
        self._options: dict[str, Any] = {}
        self._actions: list[Any] = []
        self._done = True
        self._started = False
        self._verdict: Verdict | None = None

    # --- the contract ---------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        if isinstance(seed, int) and abs(seed) >= MAX_SEED_EXCLUSIVE:
            # a snapshot records the seed as JSON; an int past 300 digits is refused by the
            # readers and past 4,300 cannot even be written (the error came from snapshot())
            raise ConfigError(
                f"The 'seed' parameter of {self.env_id or type(self).__name__}.reset must be "
                f"an int of at most 300 digits or None. Got an int of "
                f"{'more than 4300' if seed.bit_length() > 14_000 else len(str(abs(seed)))} "
                "digits."
            )
        out = self._reset(seed, dict(options or {}))
        if (
            not isinstance(out, tuple)
            or len(out) != 3
            or not isinstance(out[2], Mapping)
            or not {"seed", "options"} <= set(out[2])
        ):
            raise EnvError(
                f"{self.env_id or type(self).__name__}: _reset must return (obs, info, "
                f'{{"seed": resolved seed, "options": resolved options}}); got {_shape(out)}.'
            )
        obs, info, resolved = out
        self._seed, self._options = resolved["seed"], resolved["options"]
        self._actions = []
        self._done, self._started, self._verdict = False, True, None
        return obs, info

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if not self._started:
            raise EnvError(f"{self.env_id}: step() called before reset().")
        if self._done:
            raise EnvError(
                f"{self.env_id}: step() called after the episode ended; call "
                f"reset() to start a new one."
            )
        action = recorded_action(action)  # what is judged is exactly what the snapshot keeps
        self._actions.append(action)
        try:
            out = self._step(action)
        except Exception as exc:
            # The contract: every action gets an observation (a malformed one an error
            # observation). An environment that raises is broken; the action is not kept, so
            # the snapshot stays replayable, and the error says which action it was.
            self._actions.pop()
            raise EnvError(
                f"{self.env_id or type(self).__name__}: _step raised {type(exc).__name__}: "
                f"{str(exc)[:200]} on the action {_short(action)}; an environment answers every "
                f'action, a malformed one with {{"error": reason}}.'
            ) from exc
        if not isinstance(out, tuple) or len(out) != 4:
            self._actions.pop()
            raise EnvError(
                f"{self.env_id or type(self).__name__}: _step must return (obs, terminated, "
                f"truncated, info); got {_shape(out)}."
            )
        obs, terminated, truncated, info = out
        reward = 0.0
        if terminated or truncated:
            self._done = True
            verdict = self.finalize()
            if verdict.total is None:
                # Gymnasium needs a float, but an unscorable episode must not pass for a real 0:
                # the flag says so, and how many verifier parts failed (not which: no leaks).
                info = {
                    **info,
                    "reward_is_none": True,
                    "reward_none_reason": _none_reason(verdict),
                }
            else:
                reward = float(verdict.total)
        return obs, reward, terminated, truncated, info

    def finalize(self) -> Verdict:
        """Run the hidden verifier (once; later calls return the same verdict). Called before
        the episode ended, it ends the episode as truncated."""
        if not self._started:
            raise EnvError(f"{self.env_id}: finalize() called before reset().")
        if self._verdict is None:
            self._done = True
            try:
                verdict = self._verdict_now()
            except Exception as exc:
                raise EnvError(
                    f"{self.env_id or type(self).__name__}: _verdict_now raised "
                    f"{type(exc).__name__}: {str(exc)[:200]}; the hidden verifier must give a "
                    f"Verdict (a part that cannot score gives a None total, not an exception)."
                ) from exc
            if not isinstance(verdict, Verdict):
                raise EnvError(
                    f"{self.env_id or type(self).__name__}: _verdict_now must return a Verdict; "
                    f"got {type(verdict).__name__}."
                )
            self._verdict = verdict
        return self._verdict

    def snapshot(self) -> bytes:
        """The episode's inputs as canonical JSON bytes (replay with :meth:`replay`)."""
        if not self._started:
            raise EnvError(f"{self.env_id}: snapshot() called before reset().")
        return canonical_json(
            {
                "format": SNAPSHOT_FORMAT,
                "env_id": self.env_id,
                "kwargs": self._kwargs,
                "seed": self._seed,
                "options": self._options,
                "actions": self._actions,
                "finalized": self._verdict is not None,
                "lineage": self.lineage,
            }
        ).encode("utf-8")

    @classmethod
    def from_snapshot(cls, data: bytes | str) -> Env:
        """A fresh environment (built from the registry) in the snapshot's state."""
        from .registry import make

        snap = _load_snapshot(data)
        try:
            env = make(snap["env_id"], **snap["kwargs"])
        except (KeyError, TypeError) as exc:
            raise EnvError(f"Not a replayable {SNAPSHOT_FORMAT} snapshot: {exc}.") from None
        return env.restore(data)

    def restore(self, data: bytes | str) -> Env:
        """Replay a snapshot of this environment (same id and constructor kwargs) in this
        instance, which needs no registry; returns ``self`` in the snapshot's state."""
        snap = _load_snapshot(data)
        if snap["env_id"] != self.env_id or snap["kwargs"] != json.loads(
            canonical_json(self._kwargs)
        ):
            raise EnvError(
                f"The snapshot is of {snap['env_id']} with {snap['kwargs']}; this environment is "
                f"{self.env_id} with {self._kwargs}."
            )
        self.reset(seed=snap["seed"], options=snap["options"])
        if self.lineage != snap["lineage"]:
            raise EnvError(
                f"The snapshot's task lineage {snap['lineage']} differs from the environment's "
                f"{self.lineage}: the task, world, tools or verifier changed since it was taken."
            )
        for action in snap["actions"]:
            if self._done:
                break
            self.step(action)
        if snap.get("finalized"):
            self.finalize()
        return self

    @classmethod
    def replay(cls, data: bytes | str) -> Verdict:
        """The verdict of a snapshot's episode, recomputed from scratch."""
        return cls.from_snapshot(data).finalize()

    def close(self) -> None:
        """Nothing to release (the world is in memory); kept for the Gymnasium shape."""

    # --- for subclasses ---------------------------------------------------------------------
    @property
    def lineage(self) -> str:
        raise NotImplementedError

    def _reset(
        self, seed: int | None, options: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        raise NotImplementedError

    def _step(self, action: Any) -> tuple[dict[str, Any], bool, bool, dict[str, Any]]:
        raise NotImplementedError

    def _verdict_now(self) -> Verdict:
        raise NotImplementedError
