"""A user's reward for the audit: ``module:factory`` imported as pytest would, scored per item.

Usage::

    from rewardkit.audit.userreward import load_reward
    reward = load_reward("myreward:make")      # the working directory is on the import path
    s = reward.score({"id": "q1", "question": "2+2", "answer": "4"})
    s.value, s.components, s.error             # a crash is data: error set, value None

``--reward module:attr`` names either a :class:`~rewardkit.stack.RewardStack` object or a
zero-argument factory returning ``reward(item) -> float | None`` or a ``RewardStack``. The item a
reward sees is the item's fields without ``gold``. A reward declares its range with a ``range =
(low, high)`` attribute (a plain callable) or through its stack (``RewardStack.bounds()``, the
components' declared ranges); ``--range LOW:HIGH`` overrides both.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import importlib.util
import inspect
import math
import numbers
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._json import JsonMixin, canonical_json
from ..errors import InputError
from ..stack import RewardStack

__all__ = ["ItemScore", "UserReward", "load_reward", "scores_json", "user_code"]


class UserExit(Exception):
    """The user's code called ``sys.exit()`` (or raised SystemExit): an error of the reward,
    never the exit status of the audit."""


@contextlib.contextmanager
def user_code() -> Iterator[None]:
    """Run the user's code (import, factory, reward, perturbation) with ``print`` sent to
    stderr: what it prints must never mix into ``--json`` output or the determinism gate's
    byte comparison. A ``sys.exit()`` in it becomes :class:`UserExit`, so a reward that exits
    cannot end the audit with its own status (``sys.exit(0)`` would read as a pass)."""
    with contextlib.redirect_stdout(sys.stderr):
        try:
            yield
        except SystemExit as exc:
            raise UserExit(f"called sys.exit({exc.code!r})") from None


@dataclass(frozen=True)
class ItemScore(JsonMixin):
    """One item's score: the total (None = cannot score), components, gates, and the error a
    crashing reward raised (then ``value`` is None)."""

    value: float | None
    components: Mapping[str, float | None] = field(default_factory=dict)
    gates: Mapping[str, bool | None] = field(default_factory=dict)
    error: str | None = None


def _range(obj: Any) -> tuple[float, float] | None:
    """(low, high) from a ``(low, high)`` pair or an object with ``low``/``high``."""
    if obj is None:
        return None
    lo, hi = (obj.low, obj.high) if hasattr(obj, "low") else tuple(obj)
    return float(lo), float(hi)


class UserReward:
    """A reward callable or a RewardStack behind one ``score(item)``; ``spec`` is the
    ``module:attr`` it was loaded from (the determinism gate's fresh process reloads it)."""

    def __init__(
        self, target: RewardStack | Callable[[Any], Any], *, spec: str | None = None
    ) -> None:
        self.target = target
        self.spec = spec

    @property
    def stack(self) -> RewardStack | None:
        return self.target if isinstance(self.target, RewardStack) else None

    @property
    def name(self) -> str:
        return self.spec or str(getattr(self.target, "__name__", type(self.target).__name__))

    def declared_range(self) -> tuple[float, float] | None:
        """The reward's declared (lowest, highest) total, or None when it declares none."""
        if self.stack is not None:
            bounds = getattr(self.stack, "bounds", None)
            if not callable(bounds):
                return None
            try:
                lo, hi = _range(bounds()) or (None, None)
            except Exception:  # bounds undeclared on some component
                return None
            if lo is None or hi is None:
                return None
            # a hard-failed episode gets the fail value, below every safe total
            return (min(lo, self.stack.fail_value) if self.stack.gates else lo), hi
        return _range(getattr(self.target, "range", None))

    def score(self, item: Mapping[str, Any]) -> ItemScore:
        """Score one item. The reward gets a deep copy: whatever it changes in place (a nested
        list it sorts or appends to) never reaches the next call or another gate's items."""
        if not isinstance(item, Mapping):
            return ItemScore(
                None, error=f"the item is a {type(item).__name__}; expected an object (a dict)"
            )
        item = copy.deepcopy(dict(item))
        if self.stack is not None:
            try:
                with user_code():
                    r = self.stack.score(item)
            except Exception as exc:  # what the stack itself lets through (sys.exit)
                return ItemScore(None, error=f"{type(exc).__name__}: {exc}")
            err = "; ".join(f"{k}: {v}" for k, v in sorted(r.errors.items())) or None
            return ItemScore(r.total, dict(r.components), dict(r.gates), err)
        fn: Any = self.target
        try:
            with user_code():
                out = fn(item)
        except Exception as exc:  # a crashing reward is data
            return ItemScore(None, error=f"{type(exc).__name__}: {exc}")
        if out is None:
            return ItemScore(None)
        # any real number (numpy and torch scalars included), never a bool or a numpy bool
        if isinstance(out, bool) or not isinstance(out, numbers.Real):
            return ItemScore(
                None, error=f"returned {type(out).__name__} {out!r:.40}; a float or None expected"
            )
        x = float(out)
        if not math.isfinite(x):
            return ItemScore(None, error=f"returned {x}; return None when it cannot score")
        return ItemScore(x)

    def parts(self) -> tuple[tuple[str, str], ...]:
        """(kind, name) of every part that can be dropped: components, then gates."""
        if self.stack is None:
            return ()
        return tuple(("component", c.name) for c in self.stack.components) + tuple(
            ("gate", g.name) for g in self.stack.gates
        )

    def without(self, name: str) -> UserReward:
        """The same stack with the component or gate ``name`` dropped (ConfigError when the
        rest is not a valid stack, e.g. no weighted component left)."""
        s = self.stack
        assert s is not None
        extra: dict[str, Any] = {}
        if hasattr(s, "ordering"):  # an ablation is a diagnostic: keep the same fail value
            extra["ordering"] = "unchecked"
        return UserReward(
            RewardStack(
                gates=[g for g in s.gates if g.name != name],
                components=[c for c in s.components if c.name != name],
                fail_value=s.fail_value,
                version=f"{s.version}-without-{name}",
                on_error=s.on_error,
                renormalize=s.renormalize,
                **extra,
            )
        )


def scores_json(reward: UserReward, inputs: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """Canonical JSON of every item's score: what the determinism gate compares byte for byte."""
    return canonical_json([{"id": iid, **reward.score(item).to_dict()} for iid, item in inputs])


def _add_cwd(cwd: str | Path | None) -> str:
    """Put the working directory first on sys.path, as pytest's rootdir and ``python -m`` do."""
    d = os.path.abspath(cwd if cwd is not None else os.getcwd())
    if d not in sys.path:
        sys.path.insert(0, d)
    return d


def _kind(obj: Any) -> str:
    if isinstance(obj, type):
        return f"the class {obj.__name__} (not an instance: return the reward, not its type)"
    return f"an object of type {type(obj).__name__}"


def _refuse_path(module: str, spec: str, param: str) -> None:
    """``myreward.py:make`` or ``./rewards/my:make``: a file path where a module name goes."""
    if not (module.endswith(".py") or "/" in module or "\\" in module):
        return
    name = module.removesuffix(".py").replace("\\", "/").removeprefix("./").strip("/")
    dotted = name.replace("/", ".")
    raise InputError(
        f"expected a module name, not a file path; got {module!r} from {spec!r}: for "
        f"{name}.py use '{dotted}:{spec.rpartition(':')[2]}' from the folder that holds it "
        f"(or put that folder on PYTHONPATH)",
        field=param,
    )


def _refuse_stdlib_name(module: str, where: str, spec: str, param: str) -> None:
    """A user file named like a standard-library module: Python imports one or the other
    depending on what ran before (and the user file shadows the library for every import
    after it). Refuse it by name instead of failing somewhere later."""
    top = module.split(".")[0]
    if top not in sys.stdlib_module_names:
        return
    mine = [p for p in (Path(where) / f"{top}.py", Path(where) / top) if p.exists()]
    if mine:
        raise InputError(
            f"{mine[0].name} in {where} has the name of the standard-library module '{top}', "
            f"which Python may import instead of it (and it would shadow the library for "
            f"everything else); rename your file (e.g. my_{top}.py) and use my_{top}:"
            f"{spec.partition(':')[2]}",
            path=str(mine[0]),
            field=param,
        )


def load_reward(spec: str, *, cwd: str | Path | None = None, param: str = "--reward") -> UserReward:
    """Import ``module:attr`` with ``cwd`` (default: the working directory) on the path."""
    module, sep, attr = spec.partition(":") if isinstance(spec, str) else ("", "", "")
    if not sep or not module or not attr:
        raise InputError(
            f"expected 'module:factory' (e.g. myreward:make, for myreward.py in the working "
            f"directory); got {spec!r}",
            field=param,
        )
    _refuse_path(module, spec, param)
    where = _add_cwd(cwd)
    _refuse_stdlib_name(module, where, spec, param)
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        found = None
    if found is None:
        raise InputError(
            f"cannot import module '{module}' from {spec!r}: no {module.replace('.', '/')}.py "
            f"(or package) in the working directory {where} or on PYTHONPATH",
            field=param,
        )
    origin = found.origin or module
    try:
        with user_code():
            obj: Any = importlib.import_module(module)
    except Exception as exc:
        raise InputError(
            f"importing {origin} raised {type(exc).__name__}: {exc}", path=origin, field=param
        ) from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            names = sorted(n for n in dir(obj) if not n.startswith("_"))[:12]
            raise InputError(
                f"{origin} has no attribute '{part}' (from {spec!r}); it defines {names}",
                path=origin,
                field=param,
            )
        obj = getattr(obj, part)
    if isinstance(obj, RewardStack):
        return UserReward(obj, spec=spec)
    if not callable(obj):
        raise InputError(
            f"{spec!r} is a {type(obj).__name__}; expected a RewardStack or a zero-argument "
            f"factory returning reward(item) -> float | None or a RewardStack",
            path=origin,
            field=param,
        )
    try:
        inspect.signature(obj).bind()
        needs_args = False
    except TypeError:
        needs_args = True
    except ValueError:  # no signature (a builtin): try the call
        needs_args = False
    if needs_args:
        raise InputError(
            f"{spec!r} needs arguments, so it looks like the reward itself; name a "
            f"zero-argument factory that returns it (def make(): return reward) or a "
            f"RewardStack object",
            path=origin,
            field=param,
        )
    try:
        with user_code():
            made = obj()
    except Exception as exc:
        raise InputError(
            f"calling {spec!r} raised {type(exc).__name__}: {exc}", path=origin, field=param
        ) from None
    if isinstance(made, RewardStack) or (callable(made) and not isinstance(made, type)):
        return UserReward(made, spec=spec)
    raise InputError(
        f"{spec!r} returned {_kind(made)}; expected reward(item) -> float | None or a RewardStack",
        path=origin,
        field=param,
    )


def load_function(spec: str, *, param: str, cwd: str | Path | None = None) -> Callable[..., Any]:
    """Import a plain function ``module:attr`` (e.g. a perturbation), with the same messages."""
    module, sep, attr = spec.partition(":")
    if not sep or not module or not attr:
        raise InputError(f"expected 'module:function'; got {spec!r}", field=param)
    _refuse_path(module, spec, param)
    where = _add_cwd(cwd)
    _refuse_stdlib_name(module, where, spec, param)
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        found = None
    if found is None:
        raise InputError(
            f"cannot import module '{module}' from {spec!r}: not in the working directory "
            f"{where} or on PYTHONPATH",
            field=param,
        )
    try:
        with user_code():
            obj: Any = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except Exception as exc:
        raise InputError(
            f"cannot load {spec!r}: {type(exc).__name__}: {exc}", path=found.origin, field=param
        ) from None
    if not callable(obj):
        raise InputError(f"{spec!r} is not callable", path=found.origin, field=param)
    return obj
