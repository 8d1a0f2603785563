"""A real TRL GRPOTrainer run on CPU with a rewardkit reward (no downloads).

A tiny randomly initialised Qwen2-style causal LM is built from a config and a character-level
tokenizer is built locally with the ``tokenizers`` library; ``GRPOTrainer`` trains it for three
steps. The test asserts what the trainer logged: ``rewards/<name>/mean`` for the rewardkit reward
and the component metrics sent through ``log_metric`` (facts and pitfalls:
shared/notes/trl-on-cpu.md).
"""

from __future__ import annotations

import string
from typing import Any

import pytest

trl = pytest.importorskip("trl", reason="TRL run needs the [trl] extra")
torch = pytest.importorskip("torch", reason="TRL run needs the [torch] extra")

from rewardkit.integrations.levels import levels_stack  # noqa: E402
from rewardkit.integrations.trl import TRLReward, reward_func  # noqa: E402
from rewardkit.stack import Component, Gate, RewardStack  # noqa: E402

KEYS = (
    "rewards/rk/mean",
    "rewards/levels_B/mean",
    "rk/match",
    "rk/match/frac_none",
    "rk/digit",
    "rk/length",
    "rk/gate/no_shouting",
    "rk/frac_hard_failed",
    "rk/frac_unscorable",
    "rk/frac_errors",
    "levels_B/trajectory",
    "levels_B/frac_masked",
    "levels_B/has_l0",
)
CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant: {% endif %}"
)


def _tokenizer() -> Any:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = list(string.ascii_letters + string.digits + string.punctuation + " \n")
    vocab = {t: i for i, t in enumerate(["<pad>", "<eos>", "<unk>", *chars])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")  # one token per character
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<eos>", pad_token="<pad>", unk_token="<unk>"
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def _model(vocab_size: int) -> Any:
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    cfg = Qwen2Config(
        vocab_size=vocab_size,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=256,
        tie_word_embeddings=True,
        pad_token_id=0,
        eos_token_id=1,
        bos_token_id=None,
    )
    return Qwen2ForCausalLM(cfg)


def _stack() -> RewardStack:
    def has_digit(ep: dict[str, Any]) -> float:
        return float(any(ch.isdigit() for ch in ep["text"]))

    def matches(ep: dict[str, Any]) -> float | None:
        # Rows without a gold answer cannot be scored: None, not 0.
        gold = ep["ground_truth"]
        return None if gold == "" else float(gold in ep["text"])

    return RewardStack(
        gates=[Gate("no_shouting", lambda ep: not ep["text"].isupper())],
        components=[
            Component("match", matches),
            Component("digit", has_digit, weight=0.5),
            Component("length", lambda ep: float(len(ep["text"])), weight=0.0),
        ],
        version="trl-test-v1",
    )


# TRL 1.16 itself reads a property that transformers 5.24 deprecates; nothing of ours warns.
@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")
@pytest.mark.parametrize(
    "conversational",
    [False, pytest.param(True, marks=pytest.mark.slow)],
    ids=["standard", "conversational"],
)
def test_grpo_trainer_logs_rewardkit_metrics(tmp_path: Any, conversational: bool) -> None:
    from datasets import Dataset

    tokenizer = _tokenizer()
    model = _model(len(tokenizer))
    prompts = ["2+2=", "1+3=", "name a color:", "3+3="]
    if conversational:
        prompts_col: list[Any] = [[{"role": "user", "content": p}] for p in prompts]
    else:
        prompts_col = prompts
    ds = Dataset.from_dict(
        {
            "prompt": prompts_col * 2,
            "ground_truth": ["4", "4", "", "6"] * 2,
            "step_levels": [[3, 3], [3, 0], [-1, -1], [3]] * 2,
        }
    )
    calls: list[tuple[dict[str, Any], list[float | None]]] = []

    class Recording(TRLReward):  # records what TRL passed and what the reward returned
        def __call__(self, **kwargs: Any) -> list[float | None]:
            out = super().__call__(**kwargs)
            calls.append((kwargs, out))
            return out

    rk = Recording(reward_func(_stack(), name="rk").stack, "rk")
    lv = reward_func(levels_stack(column="step_levels"), name="levels_B")
    args = trl.GRPOConfig(
        output_dir=str(tmp_path),
        use_cpu=True,
        bf16=False,
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=8,
        max_steps=3,
        logging_steps=1,
        beta=0.0,
        learning_rate=1e-3,
        report_to="none",
        save_strategy="no",
        seed=0,
        activation_checkpointing=False,
        disable_tqdm=True,
    )
    trainer = trl.GRPOTrainer(
        model=model,
        reward_funcs=[rk, lv],
        args=args,
        train_dataset=ds,
        processing_class=tokenizer,
    )
    trainer.train()

    logs = [h for h in trainer.state.log_history if "rewards/rk/mean" in h]
    assert len(logs) == len(calls) == 3, trainer.state.log_history
    level_value = {(3, 3): 0.85, (3, 0): 0.85 / 2 * 0.30, (-1, -1): None, (3,): 0.85}
    for h, (kw, out) in zip(logs, calls):
        for key in KEYS:
            assert key in h, (key, sorted(h))
        # TRL's per-function mean is over the values we returned (None left out)
        ours = [r for r in out if r is not None]
        assert h["rewards/rk/mean"] == pytest.approx(sum(ours) / len(ours), abs=1e-6)
        # rows without a gold answer cannot be scored by "match": counted as None, not as 0
        n = len(kw["completions"])
        assert h["rk/match/frac_none"] == pytest.approx(kw["ground_truth"].count("") / n)
        # the levels reward against hand-computed recipe-B values of each row's judgments
        expected = [level_value[tuple(s)] for s in kw["step_levels"]]
        scored = [v for v in expected if v is not None]
        if scored:
            assert h["rewards/levels_B/mean"] == pytest.approx(sum(scored) / len(scored))
        assert h["levels_B/trajectory/frac_none"] == pytest.approx(expected.count(None) / n)
        # completions reach the reward in TRL's format for the dataset's kind
        first = kw["completions"][0]
        if conversational:
            assert isinstance(first, list) and first[0]["role"] == "assistant"
        else:
            assert isinstance(first, str)
