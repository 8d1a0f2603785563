"""Every public result type, checked the same way (in the style of scikit-learn's common
estimator checks): it round-trips through ``to_json()`` deterministically, it cannot be mutated
(attributes, mappings, sequences, arrays), and a NaN in it is an error naming where it sits,
never a silent ``null``.

The registry is built by walking the package: every ``JsonMixin`` subclass is a result, and
every other public frozen dataclass must be listed in ``NOT_RESULTS`` with the reason — a new
result type cannot be forgotten. Instances are built from the type annotations (a mutable
``dict`` / ``list`` wherever the type allows one, so that freezing is exercised); the few types
whose constructor validates its values get a factory in ``FACTORIES``.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import enum
import importlib
import json
import math
import pickle
import pkgutil
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import rewardkit
from rewardkit._frozen import ReadOnlyDict, freeze, thaw
from rewardkit._json import JsonMixin, canonical_json
from rewardkit.levels import LevelMapping, Step
from rewardkit.sandbox.cases import StdioTest

SRC = Path(rewardkit.__file__).resolve().parent


def _import_all() -> list[str]:
    skipped = []
    for info in pkgutil.walk_packages(rewardkit.__path__, "rewardkit."):
        try:
            importlib.import_module(info.name)
        except ImportError as exc:  # an optional extra that is not installed here
            skipped.append(f"{info.name}: {exc}")
    return skipped


SKIPPED_MODULES = _import_all()


def _subclasses(cls: type) -> set[type]:
    out = set()
    for sub in cls.__subclasses__():
        out |= {sub, *_subclasses(sub)}
    return out


def _is_current(cls: type) -> bool:
    """The class its module names (``dataclass(slots=True)`` leaves a replaced class behind)."""
    obj: Any = importlib.import_module(cls.__module__)
    for part in cls.__qualname__.split("."):
        obj = getattr(obj, part, None)
    return obj is cls


RESULTS = sorted(
    (c for c in _subclasses(JsonMixin) if c.__module__.startswith("rewardkit.") and _is_current(c)),
    key=lambda c: f"{c.__module__}.{c.__qualname__}",
)

# Public frozen dataclasses that are not results, and why (configs, specs, inputs).
NOT_RESULTS = {
    "rewardkit.stack.Gate": "configuration of a stack (holds a callable)",
    "rewardkit.stack.Component": "configuration of a stack (holds a callable)",
    "rewardkit.audit.config.AuditConfig": "a parsed configuration file",
    "rewardkit.audit.protocols.LevelReward": "a reward (configuration), not its output",
    "rewardkit.bioaudit.benchmark.Benchmark": "the loaded benchmark files (inputs)",
    "rewardkit.sandbox.dataset.Problem": "a checked line of a problems file (input)",
    "rewardkit.bioaudit.defects.Mutation": "a defect operator (holds a callable)",
    "rewardkit.bioaudit.generator.GeneratorConfig": "a generator configuration",
    "rewardkit.envs.actions.ParsedAction": "an agent's parsed action, JSON-shaped by contract",
    "rewardkit.envs.fhir.verifier.Episode": "the verifier's input",
    "rewardkit.envs.fhir.phi.PhiIndex": "the verifier's lookup tables (input)",
    "rewardkit.envs.fhir.world.Scenario": "a generated world (input)",
    "rewardkit.envs.registry.EnvSpec": "a registry entry (holds a factory)",
    "rewardkit.sandbox._confine.Plan": "the sandbox's confinement plan (internal)",
    "rewardkit.selfplay.executor.TestCase": "a test to run (input)",
    "rewardkit.selfplay.testgen.Universe": "a task's test universe (input to the simulation)",
    "rewardkit.selfplay.inputgen.Spec": "a parsed input-generator spec (input)",
    "rewardkit.selfplay.bankfile.BankFile": "the bank's data file as read (input)",
    "rewardkit.selfplay.bankfile.TaskDefinition": "a bank task as written in the file (input)",
    "rewardkit.selfplay.bankfile.HandwrittenBug": "a hand-written bug of a bank task (input)",
    "rewardkit.audit.data.Item": "a user's audit item (input)",
    "rewardkit.audit.data.GoldenItem": "a user's golden item (input)",
    "rewardkit.audit.data.SpikePair": "a user's spike-in pair (input)",
    "rewardkit.audit.data.Joined": "items joined with their reward outputs (input to the gates)",
    "rewardkit.audit.level_items.LevelItemReward": "a reward (configuration), not its output",
    "rewardkit.audit.preset.BioauditInputs": "the bio-audit preset's inputs",
    "rewardkit.audit.reward_gates.Probe": "a probe item (input to a gate)",
    "rewardkit.learn.calibration.CalibrationTask": "an experiment's task (input)",
    "rewardkit.learn.gating.GatingTask": "an experiment's task (input)",
    "rewardkit.envs.sql.world.Scenario": "a generated world (input)",
    "rewardkit.envs.sql.world.World": "a generated world (input)",
    "rewardkit.envs.sql.data.Tables": "a generated database (input)",
    "rewardkit.envs.sql.phi.PhiFinder": "the verifier's lookup tables (input)",
    "rewardkit.envs.sql.verifier.SqlEpisode": "the verifier's input",
    "rewardkit.envs.stacks.VerifierParts": "a verifier's parts (configuration, holds callables)",
    "rewardkit.envs.golden.GoldenSet": "a golden set's definition (holds the episode builder)",
}

# Result types whose constructor validates its values: a valid instance by hand.
FACTORIES: dict[str, Callable[[], Any]] = {
    "rewardkit.levels.LevelMapping": lambda: LevelMapping({0: 0.0, 1: 0.5, 2: 0.85}),
    "rewardkit.levels.Step": lambda: Step(3, "final"),
    "rewardkit.sandbox.cases.StdioTest": lambda: StdioTest("1 2\n", "3\n", mode="tokens"),
}


def _name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _public_frozen_dataclasses() -> set[str]:
    """Names of every public frozen dataclass defined in the package's source."""
    found = set()
    for path in SRC.rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        if any(p.startswith("_") and p != "__init__" for p in parts):
            continue
        module = ".".join(["rewardkit", *(p for p in parts if p != "__init__")])
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if (
                isinstance(node, ast.ClassDef)
                and not node.name.startswith("_")
                and any("frozen=True" in ast.unparse(d) for d in node.decorator_list)
            ):
                found.add(f"{module}.{node.name}")
    return found


def test_registry_is_complete() -> None:
    """Don't forget any: every public frozen dataclass is a result or is listed as not one."""
    results = {_name(c) for c in RESULTS}
    unclassified = _public_frozen_dataclasses() - results - set(NOT_RESULTS)
    assert not unclassified, (
        f"make these results (inherit JsonMixin) or list them in NOT_RESULTS: {unclassified}"
    )
    assert not set(NOT_RESULTS) & results
    assert len(RESULTS) >= 70, [_name(c) for c in RESULTS]


# --- building an instance from the annotations ----------------------------------------------


def _build(tp: Any, depth: int) -> Any:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    simple = {str: "x", bool: True, int: 2, float: 0.5, bytes: b"x", type(None): None}
    if tp in simple:
        return simple[tp]
    if tp is Any or tp in (dict, Mapping):
        return {"k": [1, {"n": [2]}]}  # mutable containers, to exercise freezing
    if tp is list:
        return [1, 2]
    if tp is np.ndarray:
        return np.arange(3.0)
    if tp is Path:
        return Path("x")
    if origin in (typing.Union, types.UnionType):
        return _build(next(a for a in args if a is not type(None)), depth)
    if origin is typing.Literal:
        return args[0]
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return (_build(args[0], depth),)
        return tuple(_build(a, depth) for a in args)
    if origin in (list, Sequence):
        return [_build(args[0], depth)]
    if origin in (dict, Mapping):
        return {_build(args[0], depth): _build(args[1], depth)}
    if origin in (set, frozenset):
        return {_build(args[0], depth)}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return next(iter(tp))
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _make(tp, depth + 1)
    raise TypeError(f"no example value for {tp!r}")


def _make(cls: type, depth: int = 0) -> Any:
    if _name(cls) in FACTORIES:
        return FACTORIES[_name(cls)]()
    if depth > 5:
        raise RecursionError(f"{_name(cls)} nests too deep")
    hints = typing.get_type_hints(cls, vars(importlib.import_module(cls.__module__)))
    fields = [f for f in dataclasses.fields(cls) if f.init]
    return cls(**{f.name: _build(hints[f.name], depth) for f in fields})


def _walk(value: Any, where: str) -> typing.Iterator[tuple[str, Any]]:
    yield where, value
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from _walk(v, f"{where}[{k!r}]")
    elif isinstance(value, (tuple, frozenset)):
        for i, v in enumerate(value):
            yield from _walk(v, f"{where}[{i}]")
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _walk(getattr(value, f.name), f"{where}.{f.name}")


IDS = [_name(c).removeprefix("rewardkit.") for c in RESULTS]


@pytest.fixture(params=RESULTS, ids=IDS)
def result(request: pytest.FixtureRequest) -> Any:
    return _make(request.param)


def test_to_json_round_trips_deterministically(result: Any) -> None:
    text = result.to_json()
    assert text == result.to_json()
    assert canonical_json(json.loads(text)) == text  # canonical: a fixed point
    for clone in (pickle.loads(pickle.dumps(result)), copy.deepcopy(result), copy.copy(result)):
        assert type(clone) is type(result) and clone.to_json() == text


def test_cannot_be_mutated(result: Any) -> None:
    before = result.to_json()
    for f in dataclasses.fields(result):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(result, f.name, None)
    for where, value in _walk(result, type(result).__name__):
        assert not isinstance(value, (list, set, bytearray)), f"{where} is a {type(value)}"
        if isinstance(value, dict):
            assert isinstance(value, ReadOnlyDict), f"{where} is a plain dict"
            with pytest.raises(TypeError, match="read-only"):
                value["new key"] = 1
            for method in ("clear", "popitem"):
                with pytest.raises(TypeError, match="read-only"):
                    getattr(value, method)()
            with pytest.raises(TypeError, match="read-only"):
                value.update({"k": 0})
        if isinstance(value, np.ndarray):
            assert not value.flags.writeable, f"{where} is a writable array"
            if value.size:
                with pytest.raises(ValueError, match="read-only"):
                    value[...] = value
    assert result.to_json() == before
    for clone in (pickle.loads(pickle.dumps(result)), copy.deepcopy(result)):
        for where, value in _walk(clone, "clone"):
            if isinstance(value, np.ndarray):
                assert not value.flags.writeable, f"unpickled {where} is writable"
            assert not isinstance(value, (list, set)) and (
                not isinstance(value, dict) or isinstance(value, ReadOnlyDict)
            ), where


def test_the_inputs_it_was_built_from_cannot_change_it(result: Any) -> None:
    """Freezing copies: editing the dict or list given to the constructor changes nothing."""
    cls = type(result)
    if _name(cls) in FACTORIES:
        pytest.skip("built by a factory")
    given = {f.name: thaw(getattr(result, f.name)) for f in dataclasses.fields(cls) if f.init}
    rebuilt = cls(**given)
    before = rebuilt.to_json()
    for v in given.values():
        if isinstance(v, dict):
            v["injected"] = 1
        elif isinstance(v, list):
            v.append(1)
    assert rebuilt.to_json() == before


def _float_fields(cls: type) -> list[str]:
    hints = typing.get_type_hints(cls, vars(importlib.import_module(cls.__module__)))
    out = []
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        arms = (
            typing.get_args(tp)
            if typing.get_origin(tp) in (typing.Union, types.UnionType)
            else (tp,)
        )
        if f.init and float in arms:
            out.append(f.name)
    return out


def test_nan_is_an_error_that_names_the_field_never_null(result: Any) -> None:
    names = _float_fields(type(result))
    if not names:
        pytest.skip("no float field")
    for name in names:
        try:
            bad = dataclasses.replace(result, **{name: math.nan})
        except (ValueError, TypeError):
            continue  # the constructor refuses a NaN: also never a silent null
        with pytest.raises(ValueError, match=rf"NaN \(at \$\.{name}\b"):
            bad.to_json()


def test_freeze_is_deep_and_idempotent() -> None:
    given = {"a": [1, {"b": {2}}], "c": np.zeros(2)}
    frozen = freeze(given)
    assert frozen == {"a": (1, {"b": frozenset({2})}), "c": frozen["c"]}
    assert freeze(frozen) == frozen and not frozen["c"].flags.writeable
    assert given["c"].flags.writeable  # a read-only view: the caller's array is untouched
    assert canonical_json(frozen["a"]) == '[1,{"b":[2]}]'


def test_every_result_module_was_importable_here() -> None:
    """The registry sees only what imports; an optional extra that is missing is named."""
    assert all("integrations" in s or "_ray" in s for s in SKIPPED_MODULES), SKIPPED_MODULES
