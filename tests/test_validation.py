"""Declarative parameter validation: one constraints table per function, one decorator, one
message template that names the parameter, the function, what is accepted and what was got."""

from __future__ import annotations

import importlib
import inspect
import math
import pkgutil
import re
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import rewardkit
from rewardkit._json import JsonMixin
from rewardkit._validation import Each, Interval, Options, validate_params
from rewardkit.errors import ConfigError


@validate_params(
    {
        "n": [Interval(int, 1, None)],
        "p": [Interval(float, 0, 1, closed="right"), None],
        "how": [Options(("exact", "fast"))],
        "rng": ["rng"],
        "flag": ["boolean"],
    }
)
def f(n: int, *, p: float | None = 0.5, how: str = "exact", rng: Any = 0, flag: bool = False):
    return n


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 0}, "The 'n' parameter of f must be an int in [1, inf). Got 0."),
        ({"n": True}, "The 'n' parameter of f must be an int in [1, inf). Got True."),
        ({"n": 2.0}, "The 'n' parameter of f must be an int in [1, inf). Got 2.0."),
        ({"n": 1, "p": 0}, "The 'p' parameter of f must be a float in (0, 1] or None. Got 0."),
        (
            {"n": 1, "p": math.nan},
            "The 'p' parameter of f must be a float in (0, 1] or None. Got nan.",
        ),
        (
            {"n": 1, "how": "EXACT"},
            "The 'how' parameter of f must be one of 'exact', 'fast'. Got 'EXACT'.",
        ),
        (
            {"n": 1, "rng": -1},
            "The 'rng' parameter of f must be an int in [0, 2**63) or a numpy.random.Generator. "
            "Got -1.",
        ),
        ({"n": 1, "flag": 1}, "The 'flag' parameter of f must be a bool. Got 1."),
    ],
)
def test_one_message_template(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        f(**kwargs)
    assert str(exc.value) == message


def test_valid_values_pass() -> None:
    assert f(3, p=None, how="fast", rng=np.random.default_rng(0), flag=True) == 3
    assert f(10**400) == 10**400  # an int bound, not a float conversion


def test_a_constraint_on_a_missing_parameter_is_refused_at_decoration() -> None:
    with pytest.raises(TypeError, match="no parameter"):
        validate_params({"nope": [None]})(lambda x: x)


def test_public_functions_carry_their_table() -> None:
    from rewardkit.selfplay.predictions import p1_check

    table = p1_check.__rewardkit_constraints__  # type: ignore[attr-defined]
    assert set(table) == {"m", "n_per_bucket", "rng"}


# --- the registry: every public function or class that takes a number or an option ------------
#
# Walk every public module's ``__all__``; a callable whose signature takes a number (an int or
# float default or annotation) or an option (a ``Literal``) is either decorated with
# ``validate_params`` or listed in ``NOT_DECORATED`` with the reason, so a new public function
# cannot forget its table. Then every decorated function is fed bad values of each constraint
# class and must refuse each with a ConfigError (a ValueError) naming the parameter and itself.


_PRESENTATION = ("rewardkit.cli", "rewardkit.demo", "rewardkit.report")
_NUMERIC = re.compile(r"\b(int|float|Literal)\b")


def public_callables() -> Iterator[tuple[str, Any]]:
    """(qualified name, object) of every function and class in a public module's __all__."""
    seen: set[int] = set()
    for info in sorted(pkgutil.walk_packages(rewardkit.__path__, "rewardkit."), key=str):
        name = info.name
        parts = name.split(".")
        if any(p.startswith("_") for p in parts[1:]) or name.startswith(_PRESENTATION):
            continue
        if parts[-1] in ("cli", "demo", "plots"):
            continue
        mod = importlib.import_module(name)
        for attr in getattr(mod, "__all__", ()):
            obj = getattr(mod, attr, None)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)) or id(obj) in seen:
                continue
            if getattr(obj, "__module__", "").split(".")[0] != "rewardkit":
                continue
            seen.add(id(obj))
            yield f"{obj.__module__}.{obj.__qualname__}", obj


def _target(obj: Any) -> Callable[..., Any]:
    return obj.__init__ if inspect.isclass(obj) else obj


def numeric_params(obj: Any) -> list[str]:
    """Parameters taking a number or an option: an int/float default or annotation, a Literal."""
    if inspect.isclass(obj) and (issubclass(obj, (JsonMixin, BaseException))):
        return []
    try:
        sig = inspect.signature(_target(obj))
    except (TypeError, ValueError):
        return []
    out = []
    for p in sig.parameters.values():
        if p.name in ("self", "cls") or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        d = p.default
        ann = p.annotation if isinstance(p.annotation, str) else repr(p.annotation)
        if (isinstance(d, (int, float)) and not isinstance(d, bool)) or _NUMERIC.search(ann):
            out.append(p.name)
    return out


def table_of(obj: Any) -> dict[str, list[Any]] | None:
    return getattr(_target(obj), "__rewardkit_constraints__", None)


_RECORD = "a record of parsed input: its reader checks each field and names the file and line"
_COMPUTED = "built by the library from checked values, not given by a user"
_CONFIG = "a settings record: each field is checked, by name, by the function that reads it"
_ENV = "environment internals: its values come from the environment's own code and tables"
_BENCH = "benchmark harness: `rewardkit sandbox bench` checks these counts (docs/cli.md bounds)"
_FORMULA = "a closed-form formula over numbers the simulation computes"
_DATA = "data, checked element by element (the message names the index)"

# Public callables that take numbers or options but carry no table, each with the reason.
NOT_DECORATED: dict[str, str] = {
    "rewardkit._ordering.StackBounds": _COMPUTED,
    "rewardkit.audit.config.AuditConfig": "read by AuditConfig.from_toml, which checks each "
    "field against its range and names the TOML key",
    "rewardkit.audit.data.GoldenItem": _RECORD,
    "rewardkit.audit.data.Item": _RECORD,
    "rewardkit.audit.data.Joined": _COMPUTED,
    "rewardkit.audit.data.SpikePair": _RECORD,
    "rewardkit.audit.gates.gate_spike_in": "called by validate with its checked spike_in_drop",
    "rewardkit.audit.level_items.LevelItemReward": "scores through score_trajectory, whose "
    "table checks recipe and gamma on every call",
    "rewardkit.audit.preset.generator_seed_spread": "seeds go through generate(), whose table "
    "checks each; chosen is only compared",
    "rewardkit.audit.protocols.LevelReward": "scores through score_trajectory (checked there)",
    "rewardkit.audit.reward_gates.gate_range": "called by validate_reward; the CLI parses "
    "--range and refuses non-finite or reversed bounds",
    "rewardkit.audit.reward_gates.gate_spike_in": "called by validate_reward with its checked "
    "spike_in_drop",
    "rewardkit.bioaudit.defects.Mutation": _COMPUTED,
    "rewardkit.bioaudit.generator.GeneratorConfig": _CONFIG,
    "rewardkit.bioaudit.templates.pipeline": _COMPUTED,
    "rewardkit.envs.conformance.schema_violations": "a check of a tool manifest; limit only "
    "shortens the list it returns",
    "rewardkit.envs.fhir.phi.PhiIndex": _ENV,
    "rewardkit.envs.fhir.spellings.honest_notes": _ENV,
    "rewardkit.envs.fhir.tasks.make_task": _ENV,
    "rewardkit.envs.fhir.units.to_canonical": _ENV,
    "rewardkit.envs.fhir.verifier.Episode": _COMPUTED,
    "rewardkit.envs.fhir.verifier.build_stack": "builds a RewardStack, whose table checks "
    "fail_value and ordering",
    "rewardkit.envs.fhir.world.Scenario": _ENV,
    "rewardkit.envs.fhir.world.World": _ENV,
    "rewardkit.envs.manifest.check_args": "checks a tool call's arguments (data) against the "
    "manifest; max_chars is the environment's",
    "rewardkit.envs.manifest.validate_args": "as check_args",
    "rewardkit.envs.sql.attacks.spellings": _ENV,
    "rewardkit.envs.sql.data.Tables": _ENV,
    "rewardkit.envs.sql.data.day_string": _ENV,
    "rewardkit.envs.sql.data.generate": _ENV,
    "rewardkit.envs.sql.engine.ReadOnlySession": _ENV,
    "rewardkit.envs.sql.phi.PhiFinder": _ENV,
    "rewardkit.envs.sql.tasks.make_task": _ENV,
    "rewardkit.envs.sql.tools.SqlToolRunner": _ENV,
    "rewardkit.envs.sql.truth.month_string": _ENV,
    "rewardkit.envs.sql.truth.quarter_string": _ENV,
    "rewardkit.envs.sql.twins.data_independent": _ENV,
    "rewardkit.envs.sql.verifier.SqlEpisode": _COMPUTED,
    "rewardkit.envs.sql.verifier.build_stack": "builds a RewardStack, whose table checks "
    "fail_value and ordering",
    "rewardkit.envs.sql.world.Scenario": _ENV,
    "rewardkit.envs.sql.world.World": _ENV,
    "rewardkit.envs.stacks.VerifierParts": _COMPUTED,
    "rewardkit.envs.sweep.sweep_spec": "called by sweep() with its checked variants",
    "rewardkit.integrations.openrlhf.OpenRLHFReward": "built by reward_func (checked there)",
    "rewardkit.integrations.openrlhf.agent_executor": "forwards to "
    "rewardkit.integrations.openrlhf_agent.agent_executor, which carries the table",
    "rewardkit.integrations.trl.AsyncTRLReward": "built by async_reward_func (checked there)",
    "rewardkit.integrations.trl.mixed_none_warning": _COMPUTED,
    "rewardkit.integrations.verl_score.VerlScore": "built by make_compute_score (checked there)",
    "rewardkit.learn.calibration.true_probability": _FORMULA,
    "rewardkit.learn.runner.preregistration": "called by run_experiment after its table "
    "checked seeds and steps",
    "rewardkit.sandbox.bench.mixed_at_ceiling_s": _BENCH,
    "rewardkit.sandbox.bench.run_bench": _BENCH,
    "rewardkit.sandbox.bench.workload": _BENCH,
    "rewardkit.sandbox.floor.design_ceiling": _BENCH,
    "rewardkit.sandbox.floor.fork_floor": _BENCH,
    "rewardkit.sandbox.floor.run_floor_bench": _BENCH,
    "rewardkit.sandbox.floor.trivial_workload": _BENCH,
    "rewardkit.sandbox.dataset.Problem": "a checked line of a problems file: load_problems "
    "checks every field and names the file, line and field",
    "rewardkit.sandbox.table.graded_correctness": "data: a pass table's columns, checked "
    "against the table's shape",
    "rewardkit.selfplay.bankfile.TaskDefinition": _RECORD,
    "rewardkit.selfplay.inputgen.Spec": _RECORD,
    "rewardkit.selfplay.inputgen.parse_spec": "parses a bank file's generator spec (data; "
    "errors name the task and field)",
    "rewardkit.selfplay.predictions.mm_bound": _FORMULA,
    "rewardkit.selfplay.predictions.mm_peak": _FORMULA,
    "rewardkit.selfplay.pruning.prune_batch": "the array form prune() calls after its table "
    "checked k",
    "rewardkit.selfplay.testgen.Universe": _COMPUTED,
    "rewardkit.stack.Component": "a frozen dataclass: __post_init__ checks weight and range "
    "with the same message template",
    "rewardkit.stats.groups.group_ordering": _DATA,
    "rewardkit.stats.paired.paired_difference": _DATA,
    "rewardkit.stats.paired.t_quantile_975": _FORMULA,
    "rewardkit.stats.rank.gold_quality": _DATA,
}
# Parameters of decorated functions left out of their table: data, not settings.
DATA_PARAMS: dict[str, set[str]] = {
    "rewardkit.advantages.group_advantages": {"rewards", "groups"},
    "rewardkit.advantages.minimum_pass": {"rewards", "groups"},
    "rewardkit.audit.gates.gate_mapping": {"levels"},
    "rewardkit.audit.validate_reward.validate_reward": {"declared_range"},
    "rewardkit.selfplay.estimator_audit.estimator_audit": {"scenarios"},
    "rewardkit.stats.probability.reliability": {"probabilities", "outcomes"},
    "rewardkit.stats.rank.rank_agreement": {"reward", "gold"},
    "rewardkit.stats.stability.seed_stability": {"reward", "gold"},
    "rewardkit.stats.stratified.stratified_test": {"values"},
}

PUBLIC = dict(public_callables())
DECORATED = {q: o for q, o in PUBLIC.items() if table_of(o) is not None}


def test_every_public_callable_taking_numbers_or_options_is_decorated_or_listed() -> None:
    """A new public function with a number or an option fails here until it has a table."""
    forgotten = []
    for qual, obj in PUBLIC.items():
        params = numeric_params(obj)
        table = table_of(obj)
        if table is None:
            if params and qual not in NOT_DECORATED:
                forgotten.append(f"{qual}: {params}")
        else:
            left = [p for p in params if p not in table and p not in DATA_PARAMS.get(qual, ())]
            if left:
                forgotten.append(f"{qual}: {left} not in its table")
    assert not forgotten, "add a validate_params table (or a reason):\n" + "\n".join(forgotten)
    stale = [q for q in NOT_DECORATED if q not in PUBLIC or q in DECORATED]
    assert not stale, f"listed but decorated or gone: {stale}"
    assert len(DECORATED) >= 50, len(DECORATED)


def test_every_count_has_an_upper_bound() -> None:
    """An int parameter without an upper bound takes 10**400 and fails deep inside."""
    for qual, obj in DECORATED.items():
        for name, allowed in table_of(obj).items():
            for c in allowed:
                for leaf in c.constraints if isinstance(c, Each) else (c,):
                    if isinstance(leaf, Interval) and leaf.kind is int:
                        assert leaf.high is not None, (qual, name)


# Bad values, one or more per constraint class; each case uses those its table refuses.
BAD: dict[str, Any] = {
    "nan": math.nan,
    "inf": math.inf,
    "-inf": -math.inf,
    "numpy nan": np.float32("nan"),
    "True": True,
    "numpy True": np.bool_(True),
    "1.5": 1.5,
    "-1": -1,
    "-0.5": -0.5,
    "10**12": 10**12,
    "10**400": 10**400,
    "-10**400": -(10**400),
    "2**63": 2**63,
    "1e300": 1e300,
    "a wrong option": "no-such-option",
    "bytes": b"x",
    "an object": object(),
    "an empty list": [],
    "[nan]": [math.nan],
    "[-1]": [-1],
    "[True]": [True],
    "[10**400]": [10**400],
}


def _valid(allowed: list[Any]) -> Any:
    c = allowed[0]
    if c is None:
        return None
    if isinstance(c, str):
        return {"rng": 0, "boolean": False, "callable": lambda *a, **k: None, "str": "x"}[c]
    if isinstance(c, Interval):
        lo = c.low if c.low is not None else (c.high - 1 if c.high is not None else 0)
        hi = c.high if c.high is not None else lo + 2
        mid = (lo + hi) / 2
        return int(mid) if c.kind is int and int(mid) in c else (mid if mid in c else lo)
    if isinstance(c, Options):
        return c.values[0]
    if isinstance(c, Each):
        return [_valid(list(c.constraints))] * max(c.min_len, 1)
    if c is np.random.Generator:
        return np.random.default_rng(0)
    raise AssertionError(f"no valid value for {c}")


NOT_A_NUMBER = {"nan", "inf", "-inf", "numpy nan", "True", "numpy True", "10**400", "-10**400"}
NOT_A_NUMBER |= {"a wrong option", "bytes", "an object", "an empty list", "[nan]", "[-1]"}
NOT_A_NUMBER |= {"[True]", "[10**400]"}


def _refuses(c: Any, label: str) -> bool:
    """Whether constraint ``c`` must refuse ``BAD[label]`` — written out rule by rule, apart
    from the implementation (a case list computed by the code under test could not fail)."""
    value = BAD[label]
    if c is None or c == "callable":
        return True
    if c == "boolean":
        return label not in ("True", "numpy True")
    if c == "str":
        return label != "a wrong option"
    if c == "rng":
        return label not in ("10**12",)
    if isinstance(c, Options):
        return True
    if isinstance(c, Interval):
        if label in NOT_A_NUMBER or (c.kind is int and label in ("1.5", "-0.5", "1e300")):
            return True
        low_ok = c.low is None or (
            value >= c.low if c.closed in ("both", "left") else value > c.low
        )
        high_ok = c.high is None or (
            value <= c.high if c.closed in ("both", "right") else value < c.high
        )
        return not (low_ok and high_ok)
    if isinstance(c, Each):
        if not isinstance(value, list):
            return True
        if len(value) < c.min_len:
            return True
        inner = {"[nan]": "nan", "[-1]": "-1", "[True]": "True", "[10**400]": "10**400"}
        return label in inner and all(_refuses(x, inner[label]) for x in c.constraints)
    if isinstance(c, type):
        return not isinstance(value, c)
    raise AssertionError(f"no rule for {c!r}")


def _cases() -> Iterator[tuple[str, str, str]]:
    for qual, obj in sorted(DECORATED.items()):
        for name, allowed in table_of(obj).items():
            for label in BAD:
                if all(_refuses(c, label) for c in allowed):
                    yield qual, name, label


CASES = list(_cases())


def test_the_bad_values_cover_every_constraint_class() -> None:
    assert len(CASES) > 500
    kinds = {
        (type(c).__name__ if not isinstance(c, str) else c)
        for obj in DECORATED.values()
        for allowed in table_of(obj).values()
        for c in allowed
    }
    assert {"Interval", "Options", "Each", "rng", "boolean", "str"} <= kinds, kinds


@pytest.mark.parametrize(("qual", "param", "label"), CASES)
def test_a_bad_value_is_refused_naming_the_parameter_and_function(
    qual: str, param: str, label: str
) -> None:
    """Never a traceback from inside, never a silent accept: the other arguments are dummies
    the body would choke on, so only the table can answer."""
    obj = DECORATED[qual]
    table = table_of(obj)
    sig = inspect.signature(_target(obj))
    kwargs: dict[str, Any] = {}
    for p in sig.parameters.values():
        if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name == param:
            kwargs[p.name] = BAD[label]
        elif p.default is inspect.Parameter.empty:
            kwargs[p.name] = _valid(table[p.name]) if p.name in table else object()
    owner = obj.__name__
    with pytest.raises(ConfigError) as exc:
        obj(**kwargs)
    assert isinstance(exc.value, ValueError)
    message = str(exc.value)
    assert message.startswith(f"The '{param}' parameter of {owner} must be "), message
    assert len(message) < 400 and "\n" not in message


def _overflows(n: int) -> bool:
    try:
        float(n)
    except OverflowError:
        return True
    return False


@given(
    x=st.one_of(
        st.integers(min_value=-(10**30), max_value=10**30),
        st.floats(allow_nan=True, allow_infinity=True),
        st.booleans(),
        st.integers(min_value=10**308, max_value=10**320),
    ),
    low=st.one_of(st.none(), st.integers(-5, 5)),
    width=st.one_of(st.none(), st.integers(0, 10)),
    closed=st.sampled_from(["both", "left", "right", "neither"]),
    kind=st.sampled_from([int, float]),
)
def test_interval_membership_matches_exact_arithmetic(
    x: Any, low: int | None, width: int | None, closed: str, kind: type
) -> None:
    """``x in Interval`` against an oracle in exact rational arithmetic (fractions): a bool is
    never a number, a float kind needs a finite float, an int kind an integral value."""
    from fractions import Fraction

    high = None if width is None else (0 if low is None else low) + width
    interval = Interval(kind, low, high, closed)
    if (
        isinstance(x, bool)
        or (kind is int and not isinstance(x, int))
        or (kind is float and isinstance(x, int) and _overflows(x))
        or (isinstance(x, float) and not math.isfinite(x))
    ):
        expected = False
    else:
        q = Fraction(x)
        above = low is None or (q >= low if closed in ("both", "left") else q > low)
        below = high is None or (q <= high if closed in ("both", "right") else q < high)
        expected = above and below
    assert (x in interval) is expected


# --- numbers that lie, numbers that break, and the wrapper's own errors -----------------------
#
# A subclass of int / float can answer every comparison with True, and an ``__index__`` or
# ``__float__`` can raise. The range is checked on the plain value (``operator.index`` /
# ``float``) and that plain value is what the function receives, so such an object can neither
# pass an out-of-range value nor escape the validator with its own exception.


def _lying(base: type) -> type:
    def yes(self: Any, other: Any) -> bool:
        return True

    ns = {n: yes for n in ("__lt__", "__le__", "__gt__", "__ge__")}
    return type(f"Lying{base.__name__.title()}", (base,), ns)


LyingInt, LyingFloat = _lying(int), _lying(float)


class RaisingIndex(int):
    def __index__(self) -> int:
        raise RuntimeError("__index__ raised")


class RaisingFloat(float):
    def __float__(self) -> float:
        raise RuntimeError("__float__ raised")


def _outside(allowed: list[Any]) -> int | None:
    """An int outside every Interval of ``allowed`` (None when the intervals cover it)."""
    intervals = [c for c in allowed if isinstance(c, Interval)]
    for v in (-(10**15), 10**15):
        if intervals and all(
            (c.low is not None and v < c.low) or (c.high is not None and v > c.high)
            for c in intervals
        ):
            return v
    return None


def _lying_cases() -> Iterator[tuple[str, str, str]]:
    for qual, obj in sorted(DECORATED.items()):
        for name, allowed in table_of(obj).items():
            if _outside(allowed) is not None:
                kinds = {c.kind for c in allowed if isinstance(c, Interval)}
                for label in ("lying int", "lying float", "raising __index__", "raising __float__"):
                    if ("int" in label or "index" in label) or float in kinds:
                        yield qual, name, label


LYING_CASES = list(_lying_cases())


def _call_with(qual: str, param: str, value: Any) -> None:
    obj = DECORATED[qual]
    table = table_of(obj)
    kwargs: dict[str, Any] = {}
    for p in inspect.signature(_target(obj)).parameters.values():
        if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name == param:
            kwargs[p.name] = value
        elif p.default is inspect.Parameter.empty:
            kwargs[p.name] = _valid(table[p.name]) if p.name in table else object()
    obj(**kwargs)


@pytest.mark.parametrize(("qual", "param", "label"), LYING_CASES)
def test_a_number_that_lies_or_breaks_is_refused_naming_the_parameter(
    qual: str, param: str, label: str
) -> None:
    v = _outside(table_of(DECORATED[qual])[param])
    assert v is not None
    value = {
        "lying int": lambda: LyingInt(v),
        "lying float": lambda: LyingFloat(float(v)),
        "raising __index__": lambda: RaisingIndex(v),
        "raising __float__": lambda: RaisingFloat(float(v)),
    }[label]()
    assert value >= 10**20 and value <= -(10**20) if "lying" in label else True  # it lies
    with pytest.raises(ConfigError) as exc:
        _call_with(qual, param, value)
    owner = DECORATED[qual].__name__
    assert str(exc.value).startswith(f"The '{param}' parameter of {owner} must be "), exc.value


def test_lying_cases_cover_every_function_with_a_bounded_number() -> None:
    assert len({q for q, _, _ in LYING_CASES}) > 40 and len(LYING_CASES) > 250


@validate_params(
    {
        "n": [Interval(int, 1, 10)],
        "p": [Interval(float, 0, 1)],
        "flag": ["boolean"],
        "rng": ["rng"],
    }
)
def g(n: Any, *, p: Any = 0.5, flag: Any = False, rng: Any = 0) -> tuple[Any, ...]:
    return n, p, flag, rng


def test_the_function_receives_the_plain_value_that_was_checked() -> None:
    """numpy scalars, Fractions and subclasses arrive as the plain int / float / bool checked
    (numpy int arithmetic wraps around silently; ``flag is True`` fails for numpy.True_)."""
    from fractions import Fraction

    got = g(np.int64(3), p=Fraction(1, 4), flag=np.bool_(True), rng=np.uint32(7))
    assert got == (3, 0.25, True, 7)
    assert [type(x) for x in got] == [int, float, bool, int]
    got = g(RaisingIndex.__base__(4), p=np.float32(0.5), flag=False, rng=np.random.default_rng(1))
    assert [type(x) for x in got[:3]] == [int, float, bool]
    assert g(5, p=1) == (5, 1, False, 0) and type(g(5, p=1)[1]) is int  # a plain int stays


@pytest.mark.parametrize(
    "qual",
    sorted(
        q
        for q, o in DECORATED.items()  # a trainer hook taking **kwargs accepts any keyword
        if all(p.kind != p.VAR_KEYWORD for p in inspect.signature(_target(o)).parameters.values())
    ),
)
def test_a_wrong_call_names_the_function(qual: str) -> None:
    """An unknown keyword or a missing argument: Python's own TypeError names the function;
    the decorator's binding must too (it said only "got an unexpected keyword argument")."""
    obj = DECORATED[qual]
    owner = obj.__name__
    said = rf"^{owner}\(\) (missing a required argument: |got an unexpected keyword argument)"
    with pytest.raises(TypeError, match=said):
        obj(no_such_parameter=1)


def test_a_value_whose_repr_raises_is_still_refused_with_the_message() -> None:
    class BadRepr:
        def __repr__(self) -> str:
            raise RuntimeError("repr raised")

    with pytest.raises(ConfigError, match=r"^The .n. parameter of g .* Got a BadRepr that"):
        g(BadRepr())


SEEDED = sorted(
    q
    for q, o in DECORATED.items()
    if any(isinstance(c, Each) for c in (table_of(o) or {}).get("seeds", []))
)


@pytest.mark.parametrize("qual", SEEDED)
@pytest.mark.parametrize("seeds", [[7, 7], (42, 1, 42), [np.int64(3), 3]])
def test_a_repeated_seed_is_refused(qual: str, seeds: Any) -> None:
    """ "Stable across seeds" over one seed given twice cannot fail: seed_stability,
    calibrate and calibrate_rewards took seeds=[7, 7] and reported identical points."""
    with pytest.raises(ConfigError) as exc:
        _call_with(qual, "seeds", seeds)
    owner = DECORATED[qual].__name__
    assert str(exc.value).startswith(f"The 'seeds' parameter of {owner} must be "), exc.value
    assert "distinct" in str(exc.value)


def test_every_function_taking_seeds_is_attacked() -> None:
    names = {q.rsplit(".", 1)[1] for q in SEEDED}
    assert {"seed_stability", "calibrate", "calibrate_rewards", "run_experiment"} <= names


def test_a_config_with_a_repeated_seed_names_the_file_and_field(tmp_path: Any) -> None:
    from rewardkit.audit.config import AuditConfig
    from rewardkit.errors import InputError

    cfg = tmp_path / "rewardkit.toml"
    cfg.write_text("[stats]\nseeds = [7, 7]\n")
    with pytest.raises(InputError, match=r"rewardkit.toml.*field 'stats.seeds'.*distinct"):
        AuditConfig.from_toml(cfg)
