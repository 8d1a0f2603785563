"""Fixtures shared by every test area: the tiny model, tokenizer and GRPO settings of the real
TRL runs (built locally from a config; no downloads; see shared/notes/trl-on-cpu.md)."""

from __future__ import annotations

import string
from typing import Any

import pytest

CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant: {% endif %}"
)


@pytest.fixture
def tiny_tokenizer() -> Any:
    """A character-level tokenizer built locally with ``tokenizers`` (one token per character)."""
    pytest.importorskip("transformers", reason="the tiny model needs the [trl] extra")
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = list(string.ascii_letters + string.digits + string.punctuation + " \n")
    vocab = {t: i for i, t in enumerate(["<pad>", "<eos>", "<unk>", *chars])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<eos>", pad_token="<pad>", unk_token="<unk>"
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


@pytest.fixture
def tiny_model(tiny_tokenizer: Any) -> Any:
    """A randomly initialised one-layer Qwen2 built from a config (seeded)."""
    torch = pytest.importorskip("torch", reason="the tiny model needs the [torch] extra")
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    cfg = Qwen2Config(
        vocab_size=len(tiny_tokenizer),
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


@pytest.fixture
def grpo_config(tmp_path: Any) -> Any:
    """``grpo_config(**overrides)``: a GRPOConfig with the settings a CPU run needs."""
    trl = pytest.importorskip("trl", reason="TRL runs need the [trl] extra")

    def make(**overrides: Any) -> Any:
        args: dict[str, Any] = {
            "output_dir": str(tmp_path),
            "use_cpu": True,
            "bf16": False,
            "per_device_train_batch_size": 4,
            "num_generations": 2,
            "max_completion_length": 8,
            "max_steps": 3,
            "logging_steps": 1,
            "beta": 0.0,  # > 0 reloads a reference model from an empty path
            "learning_rate": 1e-3,
            "report_to": "none",
            "save_strategy": "no",
            "seed": 0,
            "activation_checkpointing": False,
            "disable_tqdm": True,
        }
        return trl.GRPOConfig(**{**args, **overrides})

    return make
