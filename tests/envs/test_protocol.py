"""Environments any user can write: check_env on any instance, redteam on any registered id.

The tutorial environment of docs/envs.md (examples/stock_env.py) is written against the public
API only; check_env must pass on it without the registry, and ``rewardkit redteam`` must run
on it with its own policies, held-out verifier and naive control.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rewardkit.envs import check_env, make
from rewardkit.envs.fhir.env import FhirEnv
from rewardkit.envs.fuzz import fuzz
from rewardkit.envs.protocol import redteam_ready, tool_specs
from rewardkit.envs.registry import load

TUTORIAL = str(Path(__file__).resolve().parents[2] / "examples" / "stock_env.py")
TID = "tutorial/stock-check-v1"


@pytest.fixture(scope="module")
def stock() -> Any:
    return load(TUTORIAL)


def test_check_env_passes_on_the_tutorial_environment_without_the_registry(stock):
    env = stock.StockEnv(env_id="mine/not-registered-v1")  # an id make() has never heard of
    report = check_env(env)
    assert report.passed, [c for c in report.checks if not c.passed]
    assert redteam_ready(env) is None
    assert [t["name"] for t in tool_specs(env)] == ["list_warehouses", "get_stock", "adjust_stock"]


def test_check_env_uses_the_tool_manifest_when_there_is_no_reference_path(stock):
    class NoOracle(stock.StockEnv):
        reference_actions = None  # type: ignore[assignment]

    report = check_env(NoOracle(env_id="mine/no-oracle-v1"))
    assert report.passed, [c for c in report.checks if not c.passed]
    # one call per tool, all required arguments filled: 3 steps, the episode ended by finalize
    assert report.checks[2].measured == "3 steps"


def test_hidden_values_are_compared_by_value_not_substring(stock):
    class Chatty(stock.StockEnv):  # prints text that merely contains the verifier version
        def _step(self, action):
            obs, done, trunc, info = super()._step(action)
            return obs, done, trunc, {**info, "note": f"see {self.stack.version}-notes.txt"}

    class Leaky(stock.StockEnv):  # hands the verifier's config hash to the agent
        def _step(self, action):
            obs, done, trunc, info = super()._step(action)
            return obs, done, trunc, {**info, "build": self.stack.config_hash}

    assert check_env(Chatty(env_id="mine/chatty-v1")).passed
    leak = check_env(Leaky(env_id="mine/leaky-v1"))
    (measured,) = [c.measured for c in leak.checks if c.name.startswith("no verifier keys")]
    assert not leak.passed and "values [" in measured
    assert measured != "keys [], values []"


def test_check_env_catches_a_replay_that_does_not_reproduce(stock):
    class Drifting(stock.StockEnv):  # the verdict depends on how often the instance was used
        calls = 0

        def _verdict_now(self):
            type(self).calls += 1
            v = super()._verdict_now()
            return type(v)(**{**v.__dict__, "n_steps": v.n_steps + type(self).calls})

    report = check_env(Drifting(env_id="mine/drift-v1"))
    failed = {c.name for c in report.checks if not c.passed}
    assert "snapshot → replay reproduces the verdict bytes" in failed


def test_fuzz_runs_on_the_tutorial_environment_and_its_control_finds_exploits(stock):
    r = fuzz(episodes=120, rng=3, env_ids=[TID], progress=False)
    assert r.policies == ("honest", "guess", "cite_made_up", "write_then_answer")
    assert r.stacks["shipped"].n_exploits == 0 and r.stacks["shipped"].n_high > 0
    assert r.stacks["naive"].n_exploits > 0  # the negative control proves the fuzzer can see


def test_fuzz_finds_the_exploit_when_the_tutorial_gate_is_removed(stock):
    from rewardkit.stack import RewardStack

    full = stock.build_stack()
    no_gate = RewardStack(components=full.components, version="stock-no-citation-gate")
    r = fuzz(episodes=60, rng=0, env_ids=[TID], stacks={"no_gate": no_gate}, progress=False)
    assert r.stacks["no_gate"].exploits_by_policy["cite_made_up"] > 0


def test_fhir_env_offers_every_redteam_hook():
    env = make("fhir/anc-threshold-v1")
    assert isinstance(env, FhirEnv) and redteam_ready(env) is None
    assert {t["name"] for t in tool_specs(env)} >= {"search_patients", "create_order"}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rewardkit.cli", *args], capture_output=True, text=True, timeout=300
    )


def test_redteam_cli_runs_on_the_tutorial_environment(tmp_path):
    p = run(
        "redteam",
        "--load",
        TUTORIAL,
        "--env",
        TID,
        "--episodes",
        "80",
        "--json",
        "--out",
        str(tmp_path),
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["passed"] and out["library_cases"] == 0
    assert out["fuzz"]["shipped"]["n_exploits"] == 0 and out["fuzz"]["naive"]["n_exploits"] > 0


def test_redteam_cli_unknown_env_is_bad_input(tmp_path):
    p = run("redteam", "--env", "tutorial/nope-v1", "--episodes", "1", "--out", str(tmp_path))
    assert p.returncode == 2 and "Unknown environment id" in p.stderr


def test_lab_and_sweep_cli_run_on_the_tutorial_environment(tmp_path):
    p = run("lab", "rlvr", "--load", TUTORIAL, "--env", TID, "--json", "--out", str(tmp_path / "l"))
    assert p.returncode == 0, p.stderr
    lab = json.loads(p.stdout)
    assert lab["passed"] and lab["result"]["env_id"] == TID
    p = run(
        "sweep", "--load", TUTORIAL, "--env", TID, "--no-plot", "--json", "--out", str(tmp_path)
    )
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)["result"]
    assert set(res["behaviours"]) == {"concise", "never_call", "over_call"}
    # a heavy cost weight makes the stock verifier prefer guessing without tools: the sweep
    # shows it (the tutorial's single task is answered "met" by a guess)
    assert res["preferred"]["cost"][-1] == "never_call"
