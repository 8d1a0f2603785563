"""Environments that misbehave, by class: check_env must fail each with a check that names what
is wrong — never crash with a bare ``ValueError`` / ``KeyError`` from inside the base class —
and the tutorial environment (which a user copies) must still pass.

Classes: hooks returning the wrong shape; environment code that raises (a tool, the verifier,
the oracle); non-determinism; the verifier's config hash leaking in another case, inside text
or base64-encoded; verifier key names in another case or spelling; tools that ignore their own
argument schema (what TRL / verl advertise to the model). Removing a defence (the shape checks
in ``Env``, the exception guard in ``check_env``, the encodings in the leak check, the schema
check) makes the matching test fail.
"""

from __future__ import annotations

import base64
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardkit.envs import check_env
from rewardkit.envs.protocol import check_tool_args
from rewardkit.envs.registry import load
from rewardkit.errors import EnvError

TUTORIAL = str(Path(__file__).resolve().parents[2] / "examples" / "stock_env.py")
RAISED = "the environment answers without raising"


@pytest.fixture(scope="module")
def stock() -> Any:
    return load(TUTORIAL)


def _failed(report: Any) -> dict[str, str]:
    return {c.name: c.measured for c in report.checks if not c.passed}


# --------------------------------------------------------------- hooks of the wrong shape
RESET_SHAPES = {
    "2-tuple": lambda out: out[:2],
    "4-tuple": lambda out: (*out, {}),
    "no seed": lambda out: (out[0], out[1], {"options": {}}),
    "resolved not a dict": lambda out: (out[0], out[1], [0, {}]),
    "a list": lambda out: list(out),
}
STEP_SHAPES = {
    "3-tuple": lambda out: out[:3],
    "5-tuple (Gymnasium's, with a reward)": lambda out: (out[0], 0.0, *out[1:]),
    "a dict": lambda out: {"obs": out[0]},
}


@pytest.mark.parametrize("shape", sorted(RESET_SHAPES))
def test_a_reset_of_the_wrong_shape_is_a_named_failure(stock, shape):
    class Env(stock.StockEnv):
        def _reset(self, seed, options):
            return RESET_SHAPES[shape](super()._reset(seed, options))

    env = Env(env_id="mine/reset-shape-v1")
    with pytest.raises(EnvError, match=r"_reset must return \(obs, info"):
        env.reset(seed=0)
    report = check_env(env)
    assert not report.passed
    assert "_reset must return" in _failed(report)[RAISED]


@pytest.mark.parametrize("shape", sorted(STEP_SHAPES))
def test_a_step_of_the_wrong_shape_is_a_named_failure(stock, shape):
    class Env(stock.StockEnv):
        def _step(self, action):
            return STEP_SHAPES[shape](super()._step(action))

    report = check_env(Env(env_id="mine/step-shape-v1"))
    assert not report.passed
    assert "_step must return (obs, terminated, truncated, info)" in _failed(report)[RAISED]


# --------------------------------------------------------------- environment code that raises
EXCEPTIONS = [KeyError("warehouse"), IndexError("list index"), ZeroDivisionError("x"), TypeError()]


@pytest.mark.parametrize("exc", EXCEPTIONS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("where", ["tool", "verifier", "oracle"])
def test_environment_code_that_raises_is_a_failed_check_naming_it(stock, exc, where):
    class Env(stock.StockEnv):
        def _step(self, action):
            if where == "tool" and "get_stock" in str(action):
                raise exc
            return super()._step(action)

        def _verdict_now(self):
            if where == "verifier":
                raise exc
            return super()._verdict_now()

        def reference_actions(self):
            if where == "oracle":
                raise exc
            return super().reference_actions()

    report = check_env(Env(env_id="mine/raises-v1"))
    measured = _failed(report)[RAISED]
    assert type(exc).__name__ in measured
    assert {"tool": "_step raised", "verifier": "_verdict_now raised", "oracle": "reference_"}[
        where
    ] in measured


def test_a_tool_that_raises_is_not_recorded_so_the_episode_stays_replayable(stock):
    class Env(stock.StockEnv):
        def _step(self, action):
            if "list_warehouses" in str(action):
                raise RuntimeError("backend down")
            return super()._step(action)

    env = Env(env_id="mine/raises-v1")
    env.reset(seed=0)
    with pytest.raises(EnvError, match="_step raised RuntimeError: backend down on the action"):
        env.step({"tool": "list_warehouses", "args": {}})
    env.step({"answer": {"status": "met"}})
    fresh = Env(env_id="mine/raises-v1")
    assert fresh.restore(env.snapshot()).finalize().to_json() == env.finalize().to_json()


# --------------------------------------------------------------- non-determinism
@pytest.mark.parametrize("where", ["info", "obs", "world"])
def test_a_non_deterministic_environment_fails_determinism(stock, where):
    rng = random.Random(0)

    class Env(stock.StockEnv):
        def _reset(self, seed, options):
            if where == "world":
                self.records = [{**r, "qty": rng.randrange(40)} for r in self.records]
            return super()._reset(seed, options)

        def _step(self, action):
            obs, done, trunc, info = super()._step(action)
            if where == "info":
                info = {**info, "latency": rng.random()}
            if where == "obs":
                obs = {**obs, "served_by": rng.choice(["a", "b", "c", "d"])}
            return obs, done, trunc, info

    failed = _failed(check_env(Env(env_id="mine/nondet-v1")))
    assert "step determinism (same seed and actions, after a reset)" in failed


# --------------------------------------------------------------- the config hash in other encodings
def _encodings(config_hash: str) -> dict[str, str]:
    digest = config_hash.split(":")[-1]
    return {
        "as is": config_hash,
        "upper case": config_hash.upper(),
        "inside text": f"built with verifier config {config_hash} (do not share)",
        "digest alone": digest,
        "digest, 16 digits": f"cfg-{digest[:16]}",
        "digest upper inside text": f"id {digest.upper()}.",
        "base64 of the text": base64.b64encode(config_hash.encode()).decode(),
        "base64 of the digest": base64.b64encode(digest.encode()).decode(),
        "base64 of the digest bytes": base64.b64encode(bytes.fromhex(digest)).decode(),
        "urlsafe base64 of the bytes": base64.urlsafe_b64encode(bytes.fromhex(digest)).decode(),
    }


@pytest.mark.parametrize("place", ["info value", "obs value", "info key", "nested list"])
@pytest.mark.parametrize("encoding", sorted(_encodings("sha256:" + "0" * 64)))
def test_the_config_hash_leaking_in_any_encoding_fails(stock, encoding, place):
    class Env(stock.StockEnv):
        def _step(self, action):
            obs, done, trunc, info = super()._step(action)
            text = _encodings(self.stack.config_hash)[encoding]
            if place == "info value":
                info = {**info, "build": text}
            elif place == "obs value":
                obs = {**obs, "server": text}
            elif place == "info key":
                info = {**info, text: 1}
            else:
                obs = {**obs, "meta": [{"tags": ["x", text]}]}
            return obs, done, trunc, info

    failed = _failed(check_env(Env(env_id="mine/leak-v1")))
    assert "no verifier keys or versions in obs / info" in failed, encoding


@pytest.mark.parametrize(
    "key", ["Truth", "TRUTH", "answer-key", "AnswerKey", "Soft Total", "gate_Failures", "Gold"]
)
def test_verifier_key_names_in_another_case_or_spelling_fail(stock, key):
    class Env(stock.StockEnv):
        def _reset(self, seed, options):
            obs, info, resolved = super()._reset(seed, options)
            return obs, {**info, key: "met"}, resolved

    failed = _failed(check_env(Env(env_id="mine/key-v1")))
    assert key in failed["no verifier keys or versions in obs / info"]


def test_ordinary_hex_and_text_are_not_leaks(stock):
    class Env(stock.StockEnv):  # other hashes, the version inside text: must still pass
        def _step(self, action):
            obs, done, trunc, info = super()._step(action)
            extra = {"etag": "sha256:" + "ab" * 32, "note": f"see {self.stack.version}.txt"}
            return obs, done, trunc, {**info, **extra}

    report = check_env(Env(env_id="mine/ordinary-v1"))
    assert report.passed, _failed(report)


# --------------------------------------------------------------- the tools' own schema
def test_tools_that_ignore_their_schema_fail_check_env(stock):
    class Lenient(stock.StockEnv):  # runs whatever the model sends (the tutorial before)
        def _step(self, action):
            from rewardkit.envs import parse_action

            parsed = parse_action(action)
            if parsed.kind == "tool" and parsed.tool == "get_stock":
                self._spent += 1.0
                self._ledger.append({"tool": "get_stock", "returned": []})
                return {"result": []}, False, False, {"spent": self._spent}
            return super()._step(action)

    failed = _failed(check_env(Lenient(env_id="mine/lenient-v1")))
    measured = failed["arguments outside a tool's schema → error observation"]
    assert "get_stock" in measured and "accepted" in measured
    assert check_env(stock.StockEnv(env_id="mine/strict-v1")).passed


SPEC = [
    {
        "name": "t",
        "args": {
            "s": {"type": "string", "required": True, "maxLength": 5},
            "i": {"type": "integer", "minimum": 1, "maximum": 7},
            "n": {"type": "number"},
            "e": {"type": "string", "enum": ["a", "b"]},
            "b": {"type": "boolean"},
            "l": {"type": "array", "maxLength": 2},
        },
    }
]
JSON_TYPES = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean"}
values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-20, 20),
    st.floats(-20, 20, allow_nan=False),
    st.text(max_size=8),
    st.sampled_from(["a", "b", "c"]),
    st.lists(st.integers(0, 3), max_size=4),
)


def _oracle_schema() -> dict[str, Any]:
    props: dict[str, Any] = {}
    for name, s in SPEC[0]["args"].items():
        p: dict[str, Any] = {"type": s["type"]}
        for k in ("enum", "minimum", "maximum"):
            if k in s:
                p[k] = s[k]
        if "maxLength" in s:
            p["maxItems" if s["type"] == "array" else "maxLength"] = s["maxLength"]
        props[name] = p
    return {"type": "object", "properties": props, "required": ["s"], "additionalProperties": False}


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(["s", "i", "n", "e", "b", "l", "zz"]), values, max_size=6))
def test_check_tool_args_agrees_with_jsonschema(args):
    jsonschema = pytest.importorskip("jsonschema")
    ok = jsonschema.Draft202012Validator(_oracle_schema()).is_valid(args)
    if isinstance(args.get("i"), float):  # JSON Schema takes 3.0 as an integer; a tool does not
        ok = False
    assert (check_tool_args(SPEC, "t", args) is None) == ok, args


def test_check_tool_args_names_the_argument_and_never_echoes_a_huge_value():
    huge = "x" * 1_000_000
    assert "unknown tool" in str(check_tool_args(SPEC, huge, {}))
    assert len(str(check_tool_args(SPEC, huge, {}))) < 300
    why = check_tool_args(SPEC, "t", {"s": "a", "e": huge})
    assert why is not None and "'e'" in why and len(why) < 300
    long = str(check_tool_args(SPEC, "t", {"s": huge}))
    assert "longer than 5 (1000000)" in long and len(long) < 300
    assert "needs the argument 's'" in str(check_tool_args(SPEC, "t", {}))
