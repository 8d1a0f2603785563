"""A real TRL GRPOTrainer run (3 steps, tiny random model built locally, no downloads) with the
autorater reward functions. Skipped, with the reason, where the trl extra is not installed
(`make test` does not install it: pip install 'rewardkit[trl]')."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("torch", reason="torch extra not installed")
pytest.importorskip("trl", reason="trl extra not installed: pip install 'rewardkit[trl]'")

from rewardkit.autorater import brier_reward_func, log_reward_func, proper_rewards

VOCAB = ["<pad>", "<eos>", "<unk>", "<probability>", "</probability>", "0.2", "0.7", "1", "B"]


def tiny_model_and_tokenizer():
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    tok = Tokenizer(models.WordLevel({t: i for i, t in enumerate(VOCAB)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<eos>", pad_token="<pad>", unk_token="<unk>"
    )
    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=len(VOCAB),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=64,
        eos_token_id=1,
        pad_token_id=0,
        bos_token_id=None,
    )
    return Qwen2ForCausalLM(config), tokenizer


@pytest.mark.slow
# TRL 1.16 itself calls transformers' deprecated `is_gradient_checkpointing` alias.
@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")
def test_grpo_trainer_logs_the_autorater_rewards(tmp_path):
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    calls: list[tuple[str, list, list, list[float], set[str]]] = []

    def recorded(func, rule):
        # What TRL passes in, and what the reward function returns, kept for the asserts.
        def wrapper(prompts=None, completions=None, completion_ids=None, **kwargs):
            out = func(
                prompts=prompts, completions=completions, completion_ids=completion_ids, **kwargs
            )
            calls.append((rule, list(completions), list(kwargs["label"]), out, set(kwargs)))
            return out

        wrapper.__name__ = func.__name__
        return wrapper

    model, tokenizer = tiny_model_and_tokenizer()
    ds = Dataset.from_dict(
        {"prompt": ["B B", "B 1", "0.2 B", "1 B"] * 2, "label": [1, 0, 1, 0.5] * 2}
    )
    args = GRPOConfig(
        output_dir=str(tmp_path),
        use_cpu=True,
        bf16=False,
        beta=0.0,
        max_steps=3,
        logging_steps=1,
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=10,
        report_to="none",
        seed=0,
        activation_checkpointing=False,
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[recorded(brier_reward_func, "brier"), recorded(log_reward_func, "log")],
        args=args,
        train_dataset=ds,
        processing_class=tokenizer,
    )
    trainer.train()
    logs = [h for h in trainer.state.log_history if "rewards/brier_reward_func/mean" in h]
    assert len(logs) == 3
    for h in logs:  # TRL averages in float32: allow its rounding
        assert -1e-6 <= h["rewards/brier_reward_func/mean"] <= 1.0 + 1e-6
        assert math.log(1e-3) - 1e-6 <= h["rewards/log_reward_func/mean"] <= 1e-6
        assert 0.0 <= h["autorater/brier_reward_func/parse_failure_rate"] <= 1.0
    # TRL called each function with keyword arguments, the label column and its extras; the
    # floats returned are the proper rewards of the completions it passed.
    assert {rule for rule, *_ in calls} == {"brier", "log"}
    for rule, completions, labels, out, keys in calls:
        assert {"label", "trainer_state", "log_metric"} <= keys
        assert set(labels) <= {1, 0, 0.5} and len(labels) == len(completions) == len(out)
        assert all(isinstance(c, str) for c in completions)
        assert out == list(proper_rewards(completions, labels, rule=rule))
