"""Every declaratively validated parameter of the package, fed values that break a naive
check: ints past Python's 4,300-digit text limit (bare and inside a list), numpy arrays where
one of a few options is expected (their == is elementwise), an object whose == raises. Each
must be a ConfigError naming the parameter — never a ValueError or RuntimeError from the
check itself."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import numpy as np
import pytest

import rewardkit
from rewardkit.errors import ConfigError


class _RaisingEq:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("== raised")

    __hash__ = object.__hash__


HOSTILE = {
    "int of 5000 digits": 10**5000,
    "negative int of 5000 digits": -(10**5000),
    "list holding an int of 5000 digits": [10**5000],
    "array of two strings": np.array(["A", "B"]),
    "empty array": np.array([]),
    "object whose == raises": _RaisingEq(),
}


def _validated() -> dict[str, tuple[object, dict]]:
    """qualified name -> (the decorated callable, its constraints), for every module."""
    out = {}
    for info in pkgutil.walk_packages(rewardkit.__path__, "rewardkit."):
        if info.name.rsplit(".", 1)[-1].startswith(("_worker", "_child", "_zygote", "__main__")):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional extra that is not installed
            continue
        for obj in vars(module).values():
            members = [obj, *vars(obj).values()] if inspect.isclass(obj) else [obj]
            for m in members:
                fn = getattr(m, "__func__", m)
                cons = getattr(fn, "__rewardkit_constraints__", None)
                if cons is not None and getattr(fn, "__module__", "").startswith("rewardkit"):
                    out[f"{fn.__module__}.{fn.__qualname__}"] = (fn, cons)
    return out


def _example(allowed: list) -> object:
    """A value that satisfies one of ``allowed`` (so the check reaches the hostile one)."""
    from rewardkit._validation import Each, Interval, Options

    for c in allowed:
        if c is None:
            return None
        if isinstance(c, Interval):
            x = c.low if c.low is not None else (c.high if c.high is not None else 1)
            x = x if c.closed in ("both", "left") or c.low is None else x + 1
            return int(x) if c.kind is int else float(x)
        if isinstance(c, Options):
            return c.values[0]
        if isinstance(c, Each):
            return [_example(list(c.constraints))] * c.min_len
        if c in ("rng",):
            return 0
        if c == "str":
            return "x"
        if c == "boolean":
            return False
        if c == "callable":
            return len
    pytest.skip(f"no example value for {allowed}")


VALIDATED = _validated()
CASES = [
    (name, param, label)
    for name, (_, cons) in sorted(VALIDATED.items())
    for param in cons
    for label in HOSTILE
]


def test_the_walk_finds_the_validated_functions():
    assert len(VALIDATED) >= 40, sorted(VALIDATED)


@pytest.mark.parametrize(("name", "param", "label"), CASES)
def test_a_hostile_value_is_a_config_error_naming_the_parameter(name, param, label):
    fn, cons = VALIDATED[name]
    sig = inspect.signature(fn)
    kwargs = {}
    for p in sig.parameters.values():
        variadic = p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        if p.name == param or p.default is not p.empty or variadic:
            continue
        # "self" and the other required inputs: a valid value where constrained, else None
        kwargs[p.name] = _example(cons[p.name]) if p.name in cons else None
    try:
        fn(**kwargs, **{param: HOSTILE[label]})
    except ConfigError as exc:
        assert f"'{param}' parameter" in str(exc)
        assert len(str(exc)) < 600
        return
    except Exception as exc:
        # the check accepted the value (a constraint that allows it) and the function failed
        # on the other, dummy arguments: only acceptable when the value really is allowed
        from rewardkit._validation import _satisfies

        value = HOSTILE[label]
        allowed = any(_satisfies(value, c) for c in cons[param])
        assert allowed, f"{type(exc).__name__} from the check itself: {exc}"


EACH_PARAMS = [
    (name, param)
    for name, (_, cons) in sorted(VALIDATED.items())
    for param, allowed in cons.items()
    if any(type(c).__name__ == "Each" for c in allowed)
]


@pytest.mark.parametrize(("name", "param"), EACH_PARAMS)
@pytest.mark.parametrize("kind", ["endless iterator", "mapping"])
def test_a_sequence_parameter_refuses_an_endless_iterator_and_a_mapping(name, param, kind):
    # was: an endless iterator was read into a tuple forever; a dict was read as its keys
    import itertools
    import resource
    import signal

    fn, cons = VALIDATED[name]
    value = itertools.count() if kind == "endless iterator" else {0: "a", 1: "b"}
    kwargs = {
        p.name: (_example(cons[p.name]) if p.name in cons else None)
        for p in inspect.signature(fn).parameters.values()
        if p.name != param
        and p.default is p.empty
        and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    }

    def hung(signum, frame):
        raise TimeoutError("read the iterator for 20 s")

    # without the bound, tuple(count()) fills memory in seconds (no signal interrupts it):
    # cap this process's address space at its size now + 2 GiB, so it fails with MemoryError
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/status") as fh:
        vm = next(int(ln.split()[1]) * 1024 for ln in fh if ln.startswith("VmSize:"))
    cap = vm + (2 << 30)
    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(20)
    resource.setrlimit(
        resource.RLIMIT_AS, (cap if hard == resource.RLIM_INFINITY else min(cap, hard), hard)
    )
    try:
        with pytest.raises(ConfigError, match=f"'{param}' parameter"):
            fn(**kwargs, **{param: value})
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
