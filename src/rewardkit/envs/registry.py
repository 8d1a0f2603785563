"""Versioned environment ids: ``make("fhir/anc-threshold-v1")``, with "did you mean" on typos.

Usage::

    from rewardkit.envs import make, register, registered
    env = make("fhir/anc-threshold-v1", world_seed=3)
    registered()                                  # sorted ids
    register("mylab/k-latest-v1", "mypkg.envs:make_env", family="potassium-latest")

An id is ``namespace/name-vN``. Bump N whenever scores could change (Gymnasium's rule): a
changed verifier verdict means a new version. ``make`` imports the entry point lazily.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError

__all__ = ["EnvSpec", "load", "make", "register", "registered", "spec"]

_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]*/[a-z0-9][a-z0-9_.-]*-v[0-9]+$")
_REGISTRY: dict[str, EnvSpec] = {}


@dataclass(frozen=True)
class EnvSpec:
    """A registered id: ``entry_point`` ("module:attr", a class or factory) and its kwargs."""

    id: str
    entry_point: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    description: str = ""


def register(env_id: str, entry_point: str, *, description: str = "", **kwargs: Any) -> EnvSpec:
    """Register ``env_id``; re-registering the same id with a different entry point is an error."""
    if not isinstance(env_id, str) or not _ID.match(env_id):
        raise ConfigError(
            f"The 'env_id' parameter of register must look like "
            f"'namespace/name-v1'. Got {env_id!r}."
        )
    if not isinstance(entry_point, str) or entry_point.count(":") != 1:
        raise ConfigError(
            f"The 'entry_point' parameter of register must be 'module:attr'. Got {entry_point!r}."
        )
    new = EnvSpec(env_id, entry_point, dict(kwargs), description)
    old = _REGISTRY.get(env_id)
    if old is not None and old != new:
        raise ConfigError(
            f"The environment id {env_id!r} is already registered with "
            f"{old.entry_point}; register a new version (-v2) instead."
        )
    _REGISTRY[env_id] = new
    return new


def load(module: str) -> Any:
    """Import ``module`` (a dotted name, or a path to a ``.py`` file) so that the environments
    it registers can be made; a file is imported once, as a module named after its stem."""
    if not isinstance(module, str) or not module:
        raise ConfigError(
            f"The 'module' parameter of load must be a module or a .py path. Got {module!r}."
        )
    if not module.endswith(".py"):
        try:
            return importlib.import_module(module)
        except ImportError as exc:
            raise ConfigError(
                f"The environment module {module!r} cannot be imported: {exc}."
            ) from None
        except Exception as exc:  # the module itself fails (a syntax error, a raise at import)
            raise ConfigError(
                f"The environment module {module!r} failed to import: {type(exc).__name__}: {exc}"
            ) from exc
    path = Path(module).resolve()
    name = path.stem
    for candidate in (name, f"rewardkit_env_{_slug(name)}_{_path_tag(path)}"):
        loaded = sys.modules.get(candidate)
        if loaded is not None and Path(getattr(loaded, "__file__", "") or "").resolve() == path:
            return loaded
    if not path.is_file():
        raise ConfigError(f"The environment file {module} does not exist.")
    if not name.isidentifier() or name in sys.modules or name in sys.stdlib_module_names:
        # a file named like a loaded or standard module (random.py, json.py) must not replace
        # it in sys.modules: it gets a name of its own, which its entry points use (__name__)
        name = f"rewardkit_env_{_slug(name)}_{_path_tag(path)}"
    spec_ = importlib.util.spec_from_file_location(name, path)
    if spec_ is None or spec_.loader is None:
        raise ConfigError(f"The environment file {module} cannot be imported as a module.")
    mod = importlib.util.module_from_spec(spec_)
    sys.modules[name] = mod  # registered first: its entry points name it
    try:
        spec_.loader.exec_module(mod)
    except Exception as exc:
        del sys.modules[name]
        raise ConfigError(
            f"The environment file {module} failed to import{_where(exc, path)}: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    return mod


def _slug(stem: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in stem)


def _path_tag(path: Path) -> str:
    import hashlib

    return hashlib.sha256(str(path).encode()).hexdigest()[:10]


def _where(exc: BaseException, path: Path) -> str:
    """`` (line N)``: the last line of ``path`` the exception passed through, if any."""
    line = getattr(exc, "lineno", None) if isinstance(exc, SyntaxError) else None
    tb = exc.__traceback__
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename).resolve() == path:
            line = tb.tb_lineno
        tb = tb.tb_next
    return f" (line {line})" if line else ""


def _load_builtin() -> None:
    importlib.import_module("rewardkit.envs.fhir")  # registers the fhir/* ids
    importlib.import_module("rewardkit.envs.sql")  # registers the sql/* ids


def registered() -> tuple[str, ...]:
    """All registered ids, sorted."""
    _load_builtin()
    return tuple(sorted(_REGISTRY))


def spec(env_id: str) -> EnvSpec:
    """The spec of ``env_id``, or a ConfigError that suggests the closest registered ids."""
    _load_builtin()
    if env_id in _REGISTRY:
        return _REGISTRY[env_id]
    if not isinstance(env_id, str):
        raise ConfigError(f"The 'env_id' parameter of make must be a string. Got {env_id!r}.")
    base = re.sub(r"-v[0-9]+$", "", env_id)
    versions = sorted(i for i in _REGISTRY if re.sub(r"-v[0-9]+$", "", i) == base)
    if versions:
        hint = f" Registered versions: {', '.join(versions)}."
    else:
        close = difflib.get_close_matches(env_id, list(_REGISTRY), n=1, cutoff=0.6)
        hint = (
            f" Did you mean {' or '.join(repr(c) for c in close)}?"
            if close
            else f" Registered: {', '.join(sorted(_REGISTRY))}."
        )
    raise ConfigError(f"Unknown environment id {env_id!r}.{hint}")


def make(env_id: str, **kwargs: Any) -> Any:
    """A new environment for ``env_id`` (registered kwargs updated by ``kwargs``)."""
    s = spec(env_id)
    module, attr = s.entry_point.split(":")
    factory = getattr(importlib.import_module(module), attr)
    env = factory(env_id=env_id, **{**s.kwargs, **kwargs})
    missing = [m for m in ("reset", "step", "finalize") if not callable(getattr(env, m, None))]
    if missing:
        raise ConfigError(
            f"The factory {s.entry_point!r} registered for {env_id!r} must return an "
            f"environment (an object with reset, step and finalize; see rewardkit.envs.core). "
            f"Got a {type(env).__name__} without {', '.join(missing)}."
        )
    return env
