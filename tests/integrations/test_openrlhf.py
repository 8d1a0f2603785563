"""The OpenRLHF adapter, loaded and called the way OpenRLHF does.

Harness (mirrors ``SingleTurnAgentExecutor`` in openrlhf/utils/agent.py and
``_build_sample_from_output`` in ppo_utils/sample_maker.py): the file given as
``--reward.remote_url`` is loaded by path and its ``reward_func`` called positionally with
one-element lists in a thread (``asyncio.to_thread``); then ``scores or rewards``,
``torch.tensor([reward])`` and ``extra_logs`` values read with ``.flatten()[0].item()``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import textwrap
from pathlib import Path
from typing import Any

import pytest

from rewardkit.errors import ConfigError
from rewardkit.integrations import openrlhf
from rewardkit.integrations.openrlhf import reward_func, split_query
from rewardkit.stack import RewardStack

torch = pytest.importorskip("torch", reason="OpenRLHF passes torch tensors")

PROMPT = "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n"
RESPONSES = ["4", "5", "4 rm -rf /", "CRASH", "4"]
LABELS = ["4", "4", "4", "4", None]


def load_reward_func(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location("reward_func", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.reward_func


def openrlhf_samples(fn: Any) -> list[dict[str, Any]]:
    async def one(query: str, prompt: str, label: Any) -> dict[str, Any]:
        (info,) = await asyncio.gather(asyncio.to_thread(fn, [query], [prompt], [label]))
        reward_val = info.get("rewards")
        score_val = info.get("scores") or info.get("rewards")
        sample = {"reward": torch.tensor([reward_val]), "score": torch.tensor([score_val])}
        for key, value in (info.get("extra_logs") or {}).items():
            if isinstance(value, torch.Tensor):
                value = value.flatten()[0].item()
            sample[key] = torch.tensor([value])
        return sample

    async def go() -> list[dict[str, Any]]:
        queries = [PROMPT + r + "<|im_end|>" for r in RESPONSES]  # decoded with special tokens
        return list(await asyncio.gather(*(one(q, PROMPT, lab) for q, lab in zip(queries, LABELS))))

    return asyncio.run(go())


def test_loaded_and_called_like_openrlhf(tmp_path: Path, stack_source: str) -> None:
    path = tmp_path / "reward.py"
    path.write_text(
        stack_source
        + textwrap.dedent(
            """
            from rewardkit.integrations.openrlhf import reward_func as make
            reward_func = make(make_stack(), name="anc", none_reward=-1.0)
            """
        )
    )
    samples = openrlhf_samples(load_reward_func(path))
    rewards = [s["reward"].item() for s in samples]
    assert rewards == [1.25, 0.25, -0.5, -1.0, 0.25]
    assert [s["masked"].item() for s in samples] == [0.0, 0.0, 0.0, 1.0, 0.0]
    assert [s["reward/exact"].item() for s in samples] == [1.0, 0.0, 0.0, 0.0, -1.0]
    assert [s["masked/exact"].item() for s in samples] == [0.0, 0.0, 0.0, 0.0, 1.0]
    assert [s["gate/no_rm"].item() for s in samples] == [1.0, 1.0, 0.0, 1.0, 1.0]
    assert all(s["reward"].shape == (1,) and s["reward"].dtype == torch.float32 for s in samples)


def test_batch_call_returns_tensors_of_shape_n(stack: RewardStack) -> None:
    f = reward_func(stack, name="anc")
    out = f([PROMPT + "4<|im_end|>", PROMPT + "5"], [PROMPT, PROMPT], ["4", "4"])
    assert set(out) == {"rewards", "scores", "extra_logs"}
    assert out["rewards"].tolist() == [1.25, 0.25] and out["rewards"].shape == (2,)
    assert torch.equal(out["scores"], out["rewards"])
    assert tuple(out["extra_logs"]) == f.extra_log_keys


def test_without_torch_plain_lists(stack: RewardStack, monkeypatch: Any) -> None:
    monkeypatch.setattr(openrlhf, "have", lambda module: False)
    out = reward_func(stack)([PROMPT + "4"], [PROMPT], ["4"])
    assert out["rewards"] == [1.25] and out["extra_logs"]["masked"] == [0.0]


@pytest.mark.parametrize(
    ("query", "prompt", "completion", "text"),
    [
        ("P:4<|im_end|>", "P:", "4<|im_end|>", "4"),
        ("P:4 </s></s>\n", "P:", "4 </s></s>\n", "4"),
        ("<s> P:4", "P:", "4", "4"),  # a decoded BOS the prompt text does not have
        ("Q , x ?A<eos>", "Q, x?", "A<eos>", "A"),  # clean-up of spaces: aligned by characters
    ],
)
def test_split_query(query: str, prompt: str, completion: str, text: str) -> None:
    assert split_query(query, prompt, openrlhf.DEFAULT_SPECIAL_TOKENS) == (completion, text)


@pytest.mark.parametrize(("query", "prompt"), [("xyz", "P:"), ("P;4", "P:"), ("4 P:", "P:")])
def test_a_prompt_that_cannot_be_found_is_not_split(query: str, prompt: str) -> None:
    assert split_query(query, prompt, openrlhf.DEFAULT_SPECIAL_TOKENS) is None


def test_errors_name_the_parameter(stack: RewardStack) -> None:
    f = reward_func(stack)
    with pytest.raises(ConfigError, match=r"must have equal lengths\. Got 1, 2, 1"):
        f(["q"], ["p", "p"], ["l"])
    with pytest.raises(ConfigError, match="must hold strings"):
        f([1], ["p"], ["l"])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match="'none_reward' parameter of reward_func"):
        reward_func(stack, none_reward="zero")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="'special_tokens' parameter of reward_func"):
        reward_func(stack, special_tokens="</s>")
