"""The verl adapter, loaded and called the way verl does.

Harness (mirrors verl 0.8+): ``get_custom_reward_fn`` (verl/trainer/ppo/reward.py) loads the
file named by ``custom_reward_function.path`` as module "custom_module" and merges
``reward_kwargs`` into each call; the reward-loop ``NaiveRewardManager.run_single`` calls it
per sample with keywords (in an executor thread), keeps ``result["score"]`` and puts every key
into ``reward_extra_info``; ``RewardLoopManager`` builds the columns from the first sample's
keys; the batch manager calls ``compute_score(data_sources=…, solution_strs=…, …)``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import math
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import rewardkit.integrations.verl as verl_mod
from rewardkit.errors import ConfigError
from rewardkit.integrations.verl import make_compute_score
from rewardkit.stack import RewardStack

SAMPLES = [  # (solution_str, ground_truth)
    ("4", "4"),
    ("5", "4"),
    ("4 rm -rf /", "4"),
    ("CRASH", "4"),
    ("4", None),
]


def get_custom_reward_fn(path: Path, name: str, reward_kwargs: dict[str, Any], monkeypatch: Any):
    spec = importlib.util.spec_from_file_location("custom_module", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "custom_module", module)
    spec.loader.exec_module(module)
    raw_fn = getattr(module, name)

    def wrapped_fn(*args: Any, **kwargs: Any) -> Any:
        return raw_fn(*args, **kwargs, **reward_kwargs)

    return wrapped_fn


async def run_single(compute_score: Any, solution: str, ground_truth: Any) -> dict[str, Any]:
    extra_info: dict[str, Any] = {"index": 0}
    extra_info["num_turns"] = None
    extra_info["rollout_reward_scores"] = {}
    loop = asyncio.get_running_loop()
    result = await loop.run_in_executor(
        None,
        lambda: compute_score(
            data_source="rewardkit/test",
            solution_str=solution,
            ground_truth=ground_truth,
            extra_info=extra_info,
        ),
    )
    reward_extra_info = {}
    if isinstance(result, dict):
        score = result["score"]
        for key, value in result.items():
            reward_extra_info[key] = value
    else:
        score = result
        reward_extra_info["acc"] = score
    return {"reward_score": score, "reward_extra_info": reward_extra_info}


def reward_loop(compute_score: Any) -> tuple[list[float], dict[str, list[Any]]]:
    async def go() -> list[dict[str, Any]]:
        return list(await asyncio.gather(*(run_single(compute_score, s, g) for s, g in SAMPLES)))

    outs = asyncio.run(go())
    keys = list(outs[0]["reward_extra_info"])  # verl: the first sample's keys
    for o in outs:
        assert list(o["reward_extra_info"]) == keys  # a differing key set would break verl
    columns = {k: [o["reward_extra_info"][k] for o in outs] for k in keys}
    return [o["reward_score"] for o in outs], columns


def check_scores(scores: list[float], columns: dict[str, list[Any]], none_score: float) -> None:
    # the score lands in a float tensor at the last response token: it must be a finite float
    assert all(isinstance(s, float) and math.isfinite(s) for s in scores)
    assert scores == [1.25, 0.25, -0.5, none_score, 0.25]
    assert columns["masked"] == [0.0, 0.0, 0.0, 1.0, 0.0]  # the crash: visible, not a fake 0
    assert columns["errors"] == [0.0, 0.0, 0.0, 1.0, 0.0]
    assert columns["hard_failed"] == [0.0, 0.0, 1.0, 0.0, 0.0]
    assert columns["gate/no_rm"] == [1.0, 1.0, 0.0, 1.0, 1.0]
    assert columns["reward/exact"] == [1.0, 0.0, 0.0, 0.0, none_score]
    assert columns["masked/exact"] == [0.0, 0.0, 0.0, 0.0, 1.0]
    assert columns["acc"] == scores
    for values in columns.values():
        assert all(isinstance(v, float) and math.isfinite(v) for v in values)


def test_user_file_through_the_reward_loop(
    tmp_path: Path, monkeypatch: Any, stack_source: str
) -> None:
    path = tmp_path / "my_reward.py"
    path.write_text(
        stack_source
        + textwrap.dedent(
            """
            from rewardkit.integrations.verl import make_compute_score
            compute_score = make_compute_score(make_stack(), none_score=-1.0)
            """
        )
    )
    fn = get_custom_reward_fn(path, "compute_score", {}, monkeypatch)
    scores, columns = reward_loop(fn)
    check_scores(scores, columns, none_score=-1.0)


def test_module_file_with_reward_kwargs(
    tmp_path: Path, monkeypatch: Any, stack_source: str
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "rk_it_rewards", raising=False)
    (tmp_path / "rk_it_rewards.py").write_text(stack_source + "\nstack = make_stack()\n")
    # verl loads rewardkit's own file by path (its absolute imports make that work)
    path = Path(verl_mod.__file__)
    fn = get_custom_reward_fn(path, "compute_score", {"reward": "rk_it_rewards:stack"}, monkeypatch)
    scores, columns = reward_loop(fn)
    check_scores(scores, columns, none_score=0.0)


def test_batch_manager_form(stack: RewardStack) -> None:
    f = make_compute_score(stack)
    out = f.batch(
        data_sources=["d"] * len(SAMPLES),
        solution_strs=[s for s, _ in SAMPLES],
        ground_truths=[g for _, g in SAMPLES],
        extra_infos=[{}] * len(SAMPLES),
    )
    assert [o["score"] for o in out] == [1.25, 0.25, -0.5, 0.0, 0.25]
    assert all(tuple(o) == f.keys for o in out)


def test_errors_name_the_parameter(stack: RewardStack) -> None:
    with pytest.raises(ConfigError, match="'reward' parameter of compute_score is required"):
        verl_mod.compute_score("d", "4", "4")
    with pytest.raises(ConfigError, match=r"must be 'package\.module:attribute'"):
        verl_mod.compute_score("d", "4", "4", reward="nomodule")
    with pytest.raises(ConfigError, match="cannot be imported"):
        verl_mod.compute_score("d", "4", "4", reward="rewardkit:no_such_stack")
    with pytest.raises(ConfigError, match="'none_score' parameter of make_compute_score"):
        make_compute_score(stack, none_score=float("nan"))
    with pytest.raises(ConfigError, match="'solution_str' parameter of compute_score"):
        make_compute_score(stack)(data_source="d", solution_str=None, ground_truth="4")
    f = make_compute_score(stack)
    with pytest.raises(ConfigError, match="must have equal lengths"):
        f.batch(["d"], ["a", "b"], ["g", "g"])
