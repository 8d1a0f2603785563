"""The ordering guarantee: declared ranges, RewardStack.bounds(), a fail value strictly below
every safe total, and the property that follows (every hard-failed episode ranks, and gets a
group advantage, below every safe one)."""

from __future__ import annotations

import itertools
import math
import warnings

import hypothesis
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardkit.advantages import group_advantages
from rewardkit.errors import ConfigError, ZeroVarianceWarning
from rewardkit.stack import Component, Gate, GateOutcome, RewardStack, StackBounds


def value_of(name):
    def fn(ep):
        return ep[name]

    fn.__qualname__ = f"value_of.{name}"
    return fn


def gate_of(name):
    def check(ep):
        return GateOutcome(ep[name], ())

    check.__qualname__ = f"gate_of.{name}"
    return check


# --- declared ranges -------------------------------------------------------------------------
def test_default_ranges_are_documented_values():
    assert Component("a", value_of("a")).range == (0.0, 1.0)
    assert Component("m", value_of("m"), weight=0.0).range == (-math.inf, math.inf)
    assert Component("c", value_of("c"), range=(-2, 0)).range == (-2.0, 0.0)


@pytest.mark.parametrize(
    "bad", [(1, 0), (0,), "01", (0, float("nan")), (math.inf, math.inf), (0, "1"), (True, 1)]
)
def test_bad_range_is_named(bad):
    with pytest.raises(ConfigError, match=r"The 'range' parameter of Component 'a' must be a pair"):
        Component("a", value_of("a"), range=bad)


def test_value_outside_the_range_is_an_error_not_clipped():
    stack = RewardStack(components=[Component("a", value_of("a"), range=(-1, 1))])
    r = stack.score({"a": 1.5})
    assert r.total is None and r.components["a"] is None and "a" in r.excluded
    assert r.errors["a"] == (
        "ValueError: component 'a' returned 1.5, outside its declared range [-1, 1]; "
        "fix the component or declare range=(lo, hi)"
    )
    failing = RewardStack(components=[Component("a", value_of("a"))], on_error="fail")
    assert failing.score({"a": -0.2}).total == failing.fail_value  # below every safe total


def test_rounding_noise_on_a_bound_counts_as_the_bound():
    stack = RewardStack(components=[Component("a", value_of("a"))])
    assert stack.score({"a": 0.1 + 0.2 + 0.7}).total == 1.0  # 1.0000000000000002
    assert stack.score({"a": -1e-12}).total == 0.0
    assert stack.score({"a": 1.001}).total is None


# --- bounds ----------------------------------------------------------------------------------
def fhir_v1_like(**kw):
    # the FHIR verifier's components: abstention in [-1, 1], the rest in [0, 1]
    w = {"task": 1.0, "citation": 0.5, "abstention": 0.5, "efficiency": 0.25, "format": 0.25}
    comps = [
        Component(n, value_of(n), weight=x, range=(-1, 1) if n == "abstention" else (0, 1))
        for n, x in w.items()
    ]
    return RewardStack(gates=[Gate("safe", gate_of("safe"))], components=comps, **kw)


def test_bounds_hand_computed():
    # low = 0.5 × −1; high = 1 + 0.5 + 0.5 + 0.25 + 0.25
    assert fhir_v1_like().bounds() == StackBounds(-0.5, 2.5)
    assert fhir_v1_like().fail_value == pytest.approx(-0.5 - 0.1 * 3.0)
    # negative weight flips the range; a required component always counts
    s = RewardStack(
        components=[
            Component("t", value_of("t"), required=True, range=(0.5, 1)),
            Component("p", value_of("p"), weight=-2.0, range=(0, 3)),
        ]
    )
    assert s.bounds() == StackBounds(0.5 - 6.0, 1.0)
    # every optional component positive: at least one must be present, so low is the smallest
    s = RewardStack(
        components=[
            Component("a", value_of("a"), range=(2, 3)),
            Component("b", value_of("b"), weight=2.0, range=(0.5, 1)),
        ]
    )
    assert s.bounds() == StackBounds(1.0, 5.0)
    # renormalize: the total is W × the weighted mean of the present parts (W = 3)
    s = RewardStack(
        components=[
            Component("a", value_of("a"), range=(0, 1)),
            Component("b", value_of("b"), weight=2.0, range=(-1, 0.5)),
        ],
        renormalize=True,
    )
    assert s.bounds() == StackBounds(3 * -1.0, 3 * 1.0)  # b alone, a alone


def test_unbounded_range_gives_infinite_bounds_and_needs_an_explicit_opt_out():
    comps = [Component("a", value_of("a"), range=(-math.inf, 0))]
    with pytest.raises(ConfigError, match=r"cannot be 'below' an unbounded lowest safe total"):
        RewardStack(components=comps)
    with pytest.raises(ConfigError, match=r"strictly below the lowest safe total -inf"):
        RewardStack(components=comps, fail_value=-1e9)
    s = RewardStack(components=comps, fail_value=-1e9, ordering="unchecked")
    assert s.bounds() == StackBounds(-math.inf, 0.0)
    assert s.bounds().to_dict() == {"low": "-inf", "high": 0.0}


def test_fail_value_not_below_the_lowest_safe_total_is_a_construction_error():
    # the v1 verifier: fail value 0.0 above the safe total −0.392
    with pytest.raises(
        ConfigError,
        match=r"The 'fail_value' parameter of RewardStack must lie strictly below the lowest "
        r"safe total -0\.5 .* Got 0\.0\. Use fail_value='below', or opt out with "
        r"ordering='unchecked'\.",
    ):
        fhir_v1_like(fail_value=0.0)
    with pytest.raises(ConfigError, match=r"strictly below the lowest safe total -0\.5"):
        fhir_v1_like(fail_value=-0.5)  # a tie is not below
    s = fhir_v1_like(fail_value=0.0, ordering="unchecked")  # explicit opt-out
    assert s.fail_value == 0.0 and s.config()["ordering"] == "unchecked"
    with pytest.raises(ConfigError, match=r"The 'ordering' parameter of RewardStack must be"):
        fhir_v1_like(ordering="off")
    with pytest.raises(ConfigError, match=r"The 'fail_value' parameter of RewardStack must be"):
        fhir_v1_like(fail_value="under")


def test_below_constructs_when_the_span_is_zero_only_within_rounding():
    """Constant components whose weighted total comes out as two floats a few ulps apart (found
    by the property test below): 'below' must still construct, strictly below the total."""
    comps = [
        Component("c0", lambda e: 0.0, weight=0.0, range=(0.0, 0.0)),
        Component("c1", lambda e: 2.625, weight=-0.5, range=(2.625, 2.625)),
        Component("c2", lambda e: 2.625, weight=-2.719, range=(2.625, 2.625)),
    ]
    stack = RewardStack([Gate("g0", lambda e: e["safe"])], comps, renormalize=True)
    low, high = stack.bounds().low, stack.bounds().high
    assert 0 < high - low < 1e-12  # the span is rounding only
    assert stack.fail_value == pytest.approx(low - 0.1 * max(1.0, abs(low)))
    assert stack.score({"safe": True}).total > stack.score({"safe": False}).total


def test_ranges_enter_the_config_hash():
    a = RewardStack(components=[Component("a", value_of("a"), range=(0, 1))])
    b = RewardStack(components=[Component("a", value_of("a"), range=(0, 2))])
    assert a.config_hash != b.config_hash


# --- an independent oracle for bounds: every present set, every corner -----------------------
def oracle_bounds(specs, renormalize):
    """specs: (weight, lo, hi, required). Enumerates every present set S ⊇ required (non-empty)
    and takes each component's extreme contribution; linear in the values, so corners suffice."""
    weighted = [s for s in specs if s[0] != 0]
    mass = sum(abs(w) for w, *_ in weighted)
    lows, highs = [], []
    for mask in itertools.product([False, True], repeat=len(weighted)):
        present = [s for s, m in zip(weighted, mask, strict=True) if m]
        if not present or any(s[3] and not m for s, m in zip(weighted, mask, strict=True)):
            continue
        factor = mass / sum(abs(w) for w, *_ in present) if renormalize else 1.0
        lows.append(factor * sum(min(w * lo, w * hi) for w, lo, hi, _ in present))
        highs.append(factor * sum(max(w * lo, w * hi) for w, lo, hi, _ in present))
    return min(lows), max(highs)


WEIGHTS = st.one_of(
    st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0, -0.5, -1.0]),
    st.floats(-3, 3, allow_nan=False).map(lambda x: round(x, 3)),
)
SPEC = st.tuples(
    WEIGHTS,
    st.floats(-5, 5, allow_nan=False).map(lambda x: round(x, 3)),
    st.floats(0, 5, allow_nan=False).map(lambda x: round(x, 3)),
    st.booleans(),
).map(lambda t: (t[0], t[1], t[1] + t[2], t[3]))
SPECS = st.lists(SPEC, min_size=1, max_size=5).filter(lambda s: any(w != 0 for w, *_ in s))


@settings(max_examples=300, deadline=None)
@given(SPECS, st.booleans())
def test_bounds_match_the_enumeration_oracle(specs, renormalize):
    comps = [
        Component(f"c{i}", value_of(f"c{i}"), weight=w, range=(lo, hi), required=req)
        for i, (w, lo, hi, req) in enumerate(specs)
    ]
    b = RewardStack(components=comps, renormalize=renormalize).bounds()
    low, high = oracle_bounds(specs, renormalize)
    assert b.low == pytest.approx(low, abs=1e-9) and b.high == pytest.approx(high, abs=1e-9)


# --- the property: hard failures rank below every safe episode --------------------------------
@st.composite
def stacks_and_groups(draw):
    specs = draw(SPECS)
    renormalize = draw(st.booleans())
    n_gates = draw(st.integers(1, 2))
    fail_value = draw(st.one_of(st.just("below"), st.floats(-30, 5, allow_nan=False)))
    episodes = []
    for _ in range(draw(st.integers(2, 8))):
        ep = {f"g{j}": draw(st.booleans()) for j in range(n_gates)}
        for i, (_w, lo, hi, _req) in enumerate(specs):
            kind = draw(st.sampled_from(["in", "in", "in", "edge", "none", "out"]))
            if kind == "none":
                ep[f"c{i}"] = None
            elif kind == "edge":
                ep[f"c{i}"] = draw(st.sampled_from([lo, hi]))
            elif kind == "out":  # a buggy component: outside its declared range
                d = draw(st.floats(1e-3, 10))
                ep[f"c{i}"] = draw(st.sampled_from([lo - d, hi + d]))
            else:
                ep[f"c{i}"] = lo + draw(st.floats(0, 1)) * (hi - lo)
        episodes.append(ep)
    return specs, renormalize, n_gates, fail_value, episodes


def build(specs, renormalize, n_gates, fail_value):
    return RewardStack(
        gates=[Gate(f"g{j}", gate_of(f"g{j}")) for j in range(n_gates)],
        components=[
            Component(f"c{i}", value_of(f"c{i}"), weight=w, range=(lo, hi), required=req)
            for i, (w, lo, hi, req) in enumerate(specs)
        ],
        renormalize=renormalize,
        fail_value=fail_value,
    )


METHODS = [
    {"method": "zscore"},
    {"method": "zscore", "eps": 1e-4},
    {"method": "center"},
    {"method": "maxnorm"},
    {"method": "maxnorm", "resolution": 1e-2},
    {"method": "zscore", "resolution": 1e-2, "on_low_variance": "maxnorm"},
]


def ordering_violations(case):
    """Every way the case breaks the guarantee (empty when it holds)."""
    specs, renormalize, n_gates, fail_value, episodes = case
    try:
        stack = build(specs, renormalize, n_gates, fail_value)
    except ConfigError:
        low, _ = oracle_bounds(specs, renormalize)
        assert fail_value != "below" and fail_value >= low - 1e-9 * max(1, abs(low))
        return []
    with warnings.catch_warnings():  # groups of equal rewards are part of the search
        warnings.simplefilter("ignore", ZeroVarianceWarning)
        return _violations(stack, episodes)


def _violations(stack, episodes):
    results = stack.score_batch(episodes)
    totals = [r.total for r in results]
    failed = [i for i, r in enumerate(results) if r.hard_failed]
    safe = [i for i, r in enumerate(results) if not r.hard_failed and r.total is not None]
    bad = [
        f"rank: failed {totals[f]} ≥ safe {totals[s]}"
        for f in failed
        for s in safe
        if not totals[f] < totals[s]
    ]
    for kw in METHODS:
        adv = group_advantages(totals, [0] * len(totals), **kw).values
        bad += [
            f"advantage {kw}: failed {adv[f]} ≥ safe {adv[s]}"
            for f in failed
            for s in safe
            if not adv[f] < adv[s]
        ]
    dropped = group_advantages(
        totals, [0] * len(totals), resolution=1e-2, on_low_variance="drop"
    ).values
    bad += [
        f"drop: {dropped[f]} > {dropped[s]}"
        for f in failed
        for s in safe
        if dropped[f] > dropped[s]
    ]
    return bad


@settings(max_examples=400, deadline=None)
@given(stacks_and_groups())
def test_every_hard_failure_ranks_and_is_advantaged_below_every_safe_episode(case):
    assert ordering_violations(case) == []


@pytest.mark.parametrize("defence", ["fail_value check", "range check"])
def test_the_property_fails_when_a_defence_is_removed(defence, monkeypatch):
    """A check that cannot fail is not a check: without the construction check (or without
    the declared-range check on values) hypothesis finds an inversion."""
    import rewardkit.stack as stack_mod

    if defence == "fail_value check":
        monkeypatch.setattr(stack_mod, "is_strictly_below", lambda fail_value, bounds: True)
    else:
        monkeypatch.setattr(stack_mod.Component, "_in_range", lambda self, x: x)
    found = hypothesis.find(
        stacks_and_groups(),
        lambda case: bool(ordering_violations(case)),
        settings=settings(
            max_examples=2000, deadline=None, database=None, phases=[hypothesis.Phase.generate]
        ),
    )
    assert ordering_violations(found)
