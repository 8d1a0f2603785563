"""The tiny causal LM of ``rewardkit learn``: a character tokenizer and a small Qwen2-style model
built locally from a config (no downloads), and the supervised warm start.

The tokenizer has one token per printable ASCII character plus the given whole-word tokens (the
answer tags), so that a completion is a handful of tokens and a CPU step stays cheap. The warm
start is plain teacher forcing on (prompt, target) pairs with the loss on the target tokens only.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

__all__ = ["build_model", "build_tokenizer", "warm_start"]

PAD, EOS, UNK = "<pad>", "<eos>", "<unk>"


def build_tokenizer(words: Sequence[str] = ()) -> Any:
    """A character-level fast tokenizer (``tokenizers`` WordLevel) with ``words`` as single
    tokens; pad id 0, eos id 1."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = list(string.ascii_letters + string.digits + string.punctuation + " \n")
    vocab = {t: i for i, t in enumerate([PAD, EOS, UNK, *chars])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
    tok.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    tok.decoder = decoders.Fuse()  # characters join back without spaces
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token=EOS, pad_token=PAD, unk_token=UNK
    )
    if words:
        fast.add_tokens(list(words))
    fast.padding_side = "left"
    return fast


def build_model(vocab_size: int, *, seed: int, hidden: int = 64, layers: int = 2) -> Any:
    """A randomly initialised Qwen2 causal LM (seeded), small enough for CPU steps in ms."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    cfg = Qwen2Config(
        vocab_size=vocab_size,
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        tie_word_embeddings=True,
        pad_token_id=0,
        eos_token_id=1,
        bos_token_id=None,
    )
    return Qwen2ForCausalLM(cfg)


def warm_start(
    model: Any,
    tokenizer: Any,
    pairs: Sequence[tuple[str, str]],
    *,
    steps: int,
    batch: int,
    lr: float,
    seed: int,
) -> list[float]:
    """Teacher forcing on ``pairs`` (prompt, target + eos), loss on the target only; returns the
    loss per step. Batches are drawn with a seeded torch generator."""
    import torch

    g = torch.Generator().manual_seed(seed)
    enc = [
        (
            tokenizer(p, add_special_tokens=False)["input_ids"],
            tokenizer(t, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id],
        )
        for p, t in pairs
    ]
    width = max(len(a) + len(b) for a, b in enc)
    ids = torch.zeros((len(enc), width), dtype=torch.long)
    labels = torch.full((len(enc), width), -100, dtype=torch.long)
    mask = torch.zeros((len(enc), width), dtype=torch.long)
    for i, (a, b) in enumerate(enc):  # left padding, as generation uses
        seq = a + b
        off = width - len(seq)
        ids[i, off:] = torch.tensor(seq)
        mask[i, off:] = 1
        labels[i, off + len(a) :] = torch.tensor(b)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    model.train()
    losses = []
    for _ in range(steps):
        idx = torch.randint(0, len(enc), (batch,), generator=g)
        out = model(input_ids=ids[idx], attention_mask=mask[idx], labels=labels[idx])
        opt.zero_grad()
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(float(out.loss.detach()))
    model.eval()
    return losses
