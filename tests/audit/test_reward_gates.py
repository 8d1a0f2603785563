"""The five gates on a user's reward: each fails on a reward broken its way, and each is
"not run" (never run on shipped data) when its data is missing."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from rewardkit.audit.data import read_golden, read_items, read_spike_pairs
from rewardkit.audit.userreward import load_reward
from rewardkit.audit.validate_reward import validate_reward

EXAMPLE = Path(__file__).parents[2] / "examples" / "audit_math"


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A user's folder: the example reward and data, the folder as working directory."""
    for name in ("mathreward.py", "items.jsonl", "golden.jsonl", "spike_in.jsonl"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    before = set(sys.modules)
    yield tmp_path
    for m in set(sys.modules) - before:  # each test's reward modules are its own
        if m.startswith(("mathreward", "broken_")):
            del sys.modules[m]


def _reward(workdir, name, source):
    (workdir / f"{name}.py").write_text(source)
    return load_reward(f"{name}:make", cwd=workdir)


def _data(workdir):
    return {
        "items": read_items(workdir / "items.jsonl"),
        "golden": read_golden(workdir / "golden.jsonl"),
        "pairs": read_spike_pairs(workdir / "spike_in.jsonl"),
    }


def test_the_example_reward_passes_all_five(workdir):
    v = validate_reward(load_reward("mathreward:make"), **_data(workdir))
    # the range is the stack's own: fail value −0.5 up to 1.0 + 0.1 · 1.0
    assert v.gate("range").evidence["declared_range"] == (-0.5, 1.1)
    assert [(g.name, g.status) for g in v.gates] == [
        (n, "pass") for n in ("range", "determinism", "spike_in", "ablations", "golden")
    ]
    assert v.outcome == "pass" and v.passed


def test_range_fails_outside_the_declared_range_and_on_a_crash(workdir):
    r = _reward(
        workdir,
        "broken_range",
        "def make():\n"
        "    def reward(item):\n"
        "        return 1.5 if 'boxed' in item['completion'] else 0.0\n"
        "    reward.range = (0.0, 1.0)\n"
        "    return reward\n",
    )
    g = validate_reward(r, **_data(workdir)).gate("range")
    assert g.status == "fail"
    assert "items.jsonl, line" in g.summary and "reward 1.5 outside the declared range [0, 1]" in (
        g.summary
    )
    crash = _reward(
        workdir,
        "broken_crash",
        "def make():\n"
        "    def reward(item):\n"
        "        return float(item['final'] == item['answer'])\n"
        "    reward.range = (0.0, 1.0)\n"
        "    return reward\n",
    )
    g = validate_reward(crash, **_data(workdir)).gate("range")
    assert g.status == "fail"
    assert "items.jsonl, line 1 (id 'q00-0'): the reward raised KeyError: 'final'" in g.summary


def test_a_constant_reward_fails_range(workdir):
    r = _reward(
        workdir,
        "broken_const",
        "def make():\n    f = lambda item: 0.5\n    f.range = (0, 1)\n    return f\n",
    )
    g = validate_reward(r, **_data(workdir)).gate("range")
    assert g.status == "fail" and "a constant carries no signal" in g.summary


def test_determinism_fails_on_a_reward_that_depends_on_the_hash_seed(workdir):
    r = _reward(
        workdir,
        "broken_hash",
        "def make():\n    return lambda item: float(hash(item['completion']) % 7)\n",
    )
    g = validate_reward(r, items=read_items(workdir / "items.jsonl")).gate("determinism")
    assert g.status == "fail" and "PYTHONHASHSEED" in g.summary
    # the defence is the fresh processes: in-process the two runs agree byte for byte
    assert g.evidence["hash_run1"] == g.evidence["hash_run2"]


def test_determinism_fails_on_random_noise(workdir):
    r = _reward(
        workdir,
        "broken_noise",
        "import random\ndef make():\n    return lambda item: random.random()\n",
    )
    g = validate_reward(r, items=read_items(workdir / "items.jsonl")).gate("determinism")
    assert g.status == "fail" and "two in-process runs differ first on id 'q00-0'" in g.summary


def test_spike_in_fails_on_a_reward_blind_to_the_answer(workdir):
    r = _reward(
        workdir,
        "broken_spike",
        "import mathreward\ndef make():\n    return mathreward.boxed_format\n",
    )
    g = validate_reward(r, pairs=read_spike_pairs(workdir / "spike_in.jsonl")).gate("spike_in")
    assert g.status == "fail"
    assert "spike_in.jsonl, line 1 (id 'q00'): drop +0" in g.summary and "need > 0" in g.summary


def test_spike_in_with_a_user_perturbation(workdir):
    items = read_items(workdir / "items.jsonl")
    from mathreward import corrupt

    good = validate_reward(load_reward("mathreward:make"), items=items[:12], perturb=corrupt)
    blind = _reward(workdir, "broken_blind", "def make():\n    return lambda item: 0.5\n")
    bad = validate_reward(blind, items=items[:12], perturb=corrupt)
    # items whose completion is already wrong may not drop further: only the right ones count
    assert good.gate("spike_in").evidence["n_cases"] == 12
    assert bad.gate("spike_in").status == "fail"


def test_ablations_flag_a_component_without_effect(workdir):
    r = _reward(
        workdir,
        "broken_ablation",
        "import mathreward\n"
        "from rewardkit import Component, RewardStack\n"
        "def make():\n"
        "    return RewardStack(components=[\n"
        "        Component('exact', mathreward.exact),\n"
        "        Component('dead', lambda item: 0.0),\n"
        "        Component('shift', lambda item: 0.5),\n"
        "    ], version='v')\n",
    )
    g = validate_reward(r, items=read_items(workdir / "items.jsonl")).gate("ablations")
    assert g.status == "fail"
    assert g.evidence["problems"] == (
        "component 'dead' has no effect: dropping it changes no reward on the 120 items",
        "component 'shift' has no effect on any ranking: dropping it moves rewards but reorders "
        "no pair of the 120 items (a group-relative trainer sees no difference)",
    )
    # a constant shift changes every reward: only the ordering view flags it
    assert g.evidence["parts"]["shift"]["n_items_changed"] == 120
    assert g.evidence["parts"]["exact"]["n_pair_order_changes"] > 0


def test_golden_fails_when_the_reward_changes(workdir):
    src = (workdir / "mathreward.py").read_text().replace("weight=0.1", "weight=0.2")
    r = _reward(workdir, "broken_golden", src)
    g = validate_reward(r, golden=read_golden(workdir / "golden.jsonl")).gate("golden")
    assert g.status == "fail" and g.evidence["n_differences"] == 3  # the three kinds with one box
    assert "golden.jsonl, line" in g.summary and "expected 0.1, got 0.2" in str(
        g.evidence["problems"]
    )


def test_every_gate_is_not_run_without_its_data(workdir):
    r = load_reward("mathreward:make")
    v = validate_reward(r)
    assert v.outcome == "incomplete" and not v.passed
    why = {g.name: g.summary for g in v.gates}
    assert all(g.status == "not run" for g in v.gates)
    assert why["golden"] == "not run: no golden set given (--golden FILE)"
    assert why["spike_in"].startswith("not run: no spike-in pairs given (--spike-in FILE")
    for name in ("range", "determinism", "ablations"):
        assert why[name].startswith("not run: no items given (--items FILE")
    # with only a golden set, the other gates probe the golden items — still the user's data
    v = validate_reward(r, golden=read_golden(workdir / "golden.jsonl"))
    status = {g.name: g.status for g in v.gates}
    assert status == {
        "range": "pass",
        "determinism": "pass",
        "spike_in": "not run",
        "ablations": "pass",
        "golden": "pass",
    }
    assert v.inputs["probe_items"] == "golden"


def test_range_not_run_without_a_declared_range_and_ablations_not_run_for_a_callable(workdir):
    r = _reward(
        workdir, "broken_plain", "import mathreward\ndef make():\n    return mathreward.exact\n"
    )
    v = validate_reward(r, items=read_items(workdir / "items.jsonl"))
    assert v.gate("range").summary.startswith("not run: the reward declares no range")
    assert v.gate("ablations").summary.startswith("not run: the reward is a plain callable")


def test_a_stack_component_outside_its_declared_range_fails_range(workdir):
    r = _reward(
        workdir,
        "broken_stack_range",
        "import mathreward\n"
        "from rewardkit import Component, RewardStack\n"
        "def make():\n"
        "    return RewardStack(components=[\n"
        "        Component('exact', mathreward.exact),\n"
        "        Component('len', lambda item: len(item['completion']) / 10),\n"  # not in [0, 1]
        "    ], version='v')\n",
    )
    g = validate_reward(r, items=read_items(workdir / "items.jsonl")).gate("range")
    assert g.status == "fail" and "outside its declared range [0, 1]" in g.summary


def test_cli_range_option(workdir, capsys):
    from rewardkit.cli import main

    args = ["validate", "--reward", "mathreward:make", "--items", "items.jsonl", "--json"]
    assert main([*args, "--range", "0:1", "--out", "o1"]) == 1  # -0.5 and 1.1 fall outside
    gates = json.loads(capsys.readouterr().out)["gates"]
    assert gates["range"] == "fail" and gates["golden"] == "not run"
    assert main([*args, "--range", "1:0", "--out", "o2"]) == 2
    assert "field '--range': expected LOW <= HIGH" in capsys.readouterr().err
    assert main([*args, "--out", "o3"]) == 4  # no golden, no spike-in: incomplete


def test_spike_in_a_corrupted_item_that_cannot_be_scored_is_no_penalty(workdir):
    # "None for a wrong answer" would be masked by a group-relative trainer, never ranked low
    r = _reward(
        workdir,
        "broken_none",
        "import mathreward\ndef make():\n    return lambda item: mathreward.exact(item) or None\n",
    )
    g = validate_reward(r, pairs=read_spike_pairs(workdir / "spike_in.jsonl")).gate("spike_in")
    assert g.status == "fail"
    assert "the corrupted item is not scored (None): cannot score is not a penalty" in g.summary
