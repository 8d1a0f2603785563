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


class ToolCallingModel:
    """The tiny model of the real multi-turn TRL runs, built locally so that it *does* call
    tools: a one-layer Qwen2 whose attention and MLP outputs are zeroed (next-token logits
    depend on the last token only), with hand-set embeddings and output rows. After the
    generation prompt's last token ("\\n") it samples one of the whole tool-call tokens of
    ``script`` with the probabilities ``probs``; after a tool call it ends the turn. The
    tokenizer is character-level (plus, with a ``corpus``, its words as whole tokens: shorter
    sequences) plus the script's tokens; the chat template is TRL's own Qwen2.5 template, so TRL
    parses the calls with its own response template."""

    WORD = r"\w+|[^\w\s]|\s"

    @staticmethod
    def calls(actions: list[dict[str, Any]]) -> list[str]:
        """The model's text of each action: a ``<tool_call>`` (an answer calls ``answer``)."""
        import json

        return [
            "<tool_call>\n"
            + json.dumps(
                {"name": a["tool"], "arguments": a["args"]}
                if "tool" in a
                else {"name": "answer", "arguments": a["answer"]}
            )
            + "\n</tool_call>"
            for a in actions
        ]

    def tokenizer(self, script: list[str], corpus: str = "") -> Any:
        import re

        from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers
        from transformers import PreTrainedTokenizerFast
        from trl.chat_template_utils import qwen2_5_chat_template

        chars = list(string.ascii_letters + string.digits + string.punctuation + " \n")
        words = (
            sorted(set(re.findall(self.WORD, corpus + qwen2_5_chat_template)) - set(chars))
            if corpus
            else []
        )
        special = ["<|endoftext|>", "<|im_end|>", "<unk>"]
        vocab = {t: i for i, t in enumerate([*special, *chars, *words])}
        tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
        split = Regex(self.WORD) if corpus else ""
        tok.pre_tokenizer = pre_tokenizers.Split(split, behavior="isolated")
        tok.decoder = decoders.Fuse()  # decode to the exact text (TRL's parser finds its anchors)
        tok.add_special_tokens(
            [AddedToken(t, special=True) for t in ("<|endoftext|>", "<|im_end|>", "<|im_start|>")]
        )
        tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in script])
        fast = PreTrainedTokenizerFast(
            tokenizer_object=tok,
            eos_token="<|im_end|>",
            pad_token="<|endoftext|>",
            unk_token="<unk>",
        )
        fast.chat_template = qwen2_5_chat_template
        return fast

    def model(
        self, tokenizer: Any, script: list[str], probs: tuple[float, ...], *, positions: int
    ) -> Any:
        import math

        import torch
        from transformers import Qwen2Config, Qwen2ForCausalLM

        torch.manual_seed(0)
        hidden = 8
        model = Qwen2ForCausalLM(
            Qwen2Config(
                vocab_size=len(tokenizer),
                hidden_size=hidden,
                intermediate_size=16,
                num_hidden_layers=1,
                num_attention_heads=2,
                num_key_value_heads=1,
                max_position_embeddings=positions,
                tie_word_embeddings=False,
                pad_token_id=tokenizer.pad_token_id,
                eos_token_id=tokenizer.eos_token_id,
                bos_token_id=None,
            )
        )
        with torch.no_grad():
            for layer in model.model.layers:  # no contribution: logits = f(last token)
                layer.self_attn.o_proj.weight.zero_()
                layer.mlp.down_proj.weight.zero_()
            emb, head = model.model.embed_tokens.weight, model.lm_head.weight
            emb.zero_()
            head.zero_()
            emb[:, 2] = 1.0  # every token: the "anything else" state
            newline = tokenizer.convert_tokens_to_ids("\n")
            emb[newline] = 0.0
            emb[newline, 0] = 1.0  # the generation prompt ends with "assistant\n"
            ids = tokenizer.convert_tokens_to_ids(script)
            for i in ids:
                emb[i] = 0.0
                emb[i, 1] = 1.0  # after a tool call
            scale = math.sqrt(hidden)  # RMSNorm of a unit basis vector
            for i, p in zip(ids, probs, strict=True):
                head[i, 0] = (14.0 + math.log(p)) / scale
            head[tokenizer.eos_token_id, 1] = 20.0 / scale
            head[tokenizer.eos_token_id, 2] = 20.0 / scale
        return model

    @staticmethod
    def trainer(
        model: Any, tokenizer: Any, env_cls: Any, *, task: Any, rows: int, args: Any
    ) -> Any:
        """A ``GRPOTrainer(environment_factory=env_cls)`` on ``rows`` empty prompts, each with
        ``task`` in the dataset's ``task`` column, logging ``env_cls.metrics``."""
        import trl
        from datasets import Dataset

        prompts = [[{"role": "user", "content": ""}]] * rows
        return trl.GRPOTrainer(
            model=model,
            processing_class=tokenizer,
            reward_funcs=[env_cls.metrics],
            train_dataset=Dataset.from_dict({"prompt": prompts, "task": [task] * rows}),
            environment_factory=env_cls,
            args=args,
        )

    @staticmethod
    def spy_rewards(cls: type) -> list[float | None]:
        """Record every ``get_reward`` value of the environment class ``cls`` (in order)."""
        seen: list[float | None] = []
        original = cls.get_reward  # type: ignore[attr-defined]

        def spy(self: Any) -> float | None:
            r = original(self)
            seen.append(r)
            return r

        cls.get_reward = spy  # type: ignore[attr-defined]
        return seen

    @staticmethod
    def assert_logged_means(logs: list[dict[str, Any]], key: str, seen: list[Any]) -> None:
        """Per logged step, ``key`` is the mean of that step's ``get_reward`` values."""
        per_step = len(seen) // len(logs)
        for k, h in enumerate(logs):
            batch = seen[k * per_step : (k + 1) * per_step]
            assert h[key] == pytest.approx(sum(batch) / len(batch), rel=1e-5)


@pytest.fixture
def tool_calling_model() -> ToolCallingModel:
    """Builders of the tiny tool-calling model, its tokenizer and its scripted calls."""
    pytest.importorskip("trl", reason="the TRL run needs the [trl] extra")
    pytest.importorskip("torch", reason="the TRL run needs the [torch] extra")
    return ToolCallingModel()
