"""Shared fixtures: a stack with a gate, a None-able component, a crashing one and a metric;
the tiny model, tokenizer and GRPO settings of the real TRL runs."""

from __future__ import annotations

import inspect
import string
from typing import Any

import pytest

from rewardkit.stack import Component, Gate, GateOutcome, RewardStack


def make_stack() -> RewardStack:
    def no_rm(ep: dict[str, Any]) -> GateOutcome:
        return GateOutcome(
            "rm -rf" not in ep["text"], ("rm -rf",) if "rm -rf" in ep["text"] else ()
        )

    def exact(ep: dict[str, Any]) -> float | None:
        gold = ep["ground_truth"]
        return None if gold is None else float(ep["text"].strip() == str(gold))

    def fragile(ep: dict[str, Any]) -> float:
        if "CRASH" in ep["text"]:
            raise RuntimeError("verifier crashed")
        return 0.5

    return RewardStack(
        gates=[Gate("no_rm", no_rm)],
        components=[
            Component("exact", exact),
            Component("fragile", fragile, weight=0.5),
            Component("length", lambda ep: float(len(ep["text"])), weight=0.0),
        ],
        version="it-v1",
    )


@pytest.fixture
def stack() -> RewardStack:
    return make_stack()


@pytest.fixture
def stack_source() -> str:
    """A self-contained module defining ``make_stack()``, as a user's reward file would."""
    header = (
        "from typing import Any\n"
        "from rewardkit.stack import Component, Gate, GateOutcome, RewardStack\n\n"
    )
    return header + inspect.getsource(make_stack)


# --- a tiny causal LM for real trainer runs (no downloads; see shared/notes/trl-on-cpu.md) ---
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
