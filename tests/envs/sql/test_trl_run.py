"""A real TRL ``GRPOTrainer(environment_factory=...)`` run on CPU over ``sql/revenue-v1``: the
model's tool calls run as SQL in the environment (read-only session, authorizer, ledger) and
``get_reward`` reaches the logged rewards, hard gates included (no downloads).

The tiny model is built locally so that it calls tools: a one-layer Qwen2 whose attention and
MLP outputs are zeroed (next-token logits depend on the last token only), with hand-set
embeddings and output rows. After the generation prompt it samples one of five whole tool-call
tokens — the reference query, the right answer citing q1, "unknown", a DELETE, SELECT * on
customers — and after a tool call it ends the turn. The tokenizer is character-level plus those
tokens; the chat template is TRL's own Qwen2.5 template, so TRL parses the calls itself.
"""

from __future__ import annotations

import json
import math
import string
from typing import Any

import pytest

trl = pytest.importorskip("trl", reason="the TRL run needs the [trl] extra")
torch = pytest.importorskip("torch", reason="the TRL run needs the [torch] extra")

from rewardkit.envs import make  # noqa: E402
from rewardkit.integrations.trl import environment  # noqa: E402

ENV_ID = "sql/revenue-v1"
TASK = {"seed": 0, "options": {"trap": "refunds", "variant": 0}}
SCRIPT_P = (0.35, 0.25, 0.1, 0.15, 0.15)


def _call(name: str, arguments: dict[str, Any]) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


def _script() -> tuple[list[str], list[dict[str, Any]]]:
    env = make(ENV_ID)
    env.reset(**TASK)
    query, answer = env.reference_actions()
    actions = [
        query,
        {"answer": {**answer["answer"], "evidence": ["q1"]}},
        {"answer": {"status": "unknown", "evidence": ["q1"]}},
        {"tool": "query", "args": {"sql": "DELETE FROM refunds"}},
        {"tool": "query", "args": {"sql": "SELECT * FROM customers LIMIT 2"}},
    ]
    calls = [
        _call(a["tool"], a["args"]) if "tool" in a else _call("answer", a["answer"])
        for a in actions
    ]
    return calls, actions


def _tokenizer(script: list[str]) -> Any:
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    from trl.chat_template_utils import qwen2_5_chat_template

    chars = list(string.ascii_letters + string.digits + string.punctuation + " \n")
    vocab = {t: i for i, t in enumerate(["<|endoftext|>", "<|im_end|>", "<unk>", *chars])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    tok.decoder = decoders.Fuse()
    tok.add_special_tokens(
        [AddedToken(t, special=True) for t in ("<|endoftext|>", "<|im_end|>", "<|im_start|>")]
    )
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in script])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>", unk_token="<unk>"
    )
    fast.chat_template = qwen2_5_chat_template
    return fast


def _model(tokenizer: Any, script: list[str]) -> Any:
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
            max_position_embeddings=16384,
            tie_word_embeddings=False,
            pad_token_id=tokenizer.pad_token_id,
            eos_token_id=tokenizer.eos_token_id,
            bos_token_id=None,
        )
    )
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        emb, head = model.model.embed_tokens.weight, model.lm_head.weight
        emb.zero_()
        head.zero_()
        emb[:, 2] = 1.0  # any token: the "anything else" state
        newline = tokenizer.convert_tokens_to_ids("\n")
        emb[newline] = 0.0
        emb[newline, 0] = 1.0  # the generation prompt ends with "assistant\n"
        ids = tokenizer.convert_tokens_to_ids(script)
        for i in ids:
            emb[i] = 0.0
            emb[i, 1] = 1.0  # after a tool call
        scale = math.sqrt(hidden)
        for i, p in zip(ids, SCRIPT_P):
            head[i, 0] = (14.0 + math.log(p)) / scale
        head[tokenizer.eos_token_id, 1] = 20.0 / scale
        head[tokenizer.eos_token_id, 2] = 20.0 / scale
    return model


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")
@pytest.mark.filterwarnings("ignore:You are using 'environment_factory':UserWarning")
def test_grpo_runs_sql_tool_calls_and_logs_the_verifier(grpo_config):
    from datasets import Dataset

    script, actions = _script()
    tokenizer = _tokenizer(script)
    model = _model(tokenizer, script)
    Sql = environment(ENV_ID, name="SqlRevenueTRL")
    ds = Dataset.from_dict(
        {"prompt": [[{"role": "user", "content": ""}]] * 4, "task": [json.dumps(TASK)] * 4}
    )
    seen: list[float | None] = []
    original = Sql.get_reward

    def spy(self: Any) -> float | None:
        r = original(self)
        seen.append(r)
        return r

    Sql.get_reward = spy
    trainer = trl.GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        reward_funcs=[Sql.metrics],
        train_dataset=ds,
        environment_factory=Sql,
        args=grpo_config(
            max_completion_length=2048,
            max_tool_calling_iterations=3,
            max_steps=2,
            learning_rate=1e-6,
        ),
    )
    assert {t.__name__ for t in trainer.tools} == {
        "list_tables",
        "describe_table",
        "query",
        "answer",
    }
    trainer.train()

    calls = []
    for e in trainer._environment_pool[None]:
        played = e.env._actions
        assert 1 <= len(played) <= 4, played
        assert all(a in actions for a in played), played
        queries = [a["args"]["sql"] for a in played if a.get("tool") == "query"]
        # every query the model sent was run by the session and is in the ledger, in order
        assert [x.sql for x in e.env._ledger if x.tool == "query"] == queries
        calls += queries
    assert calls, "the model called no tool"
    logs = [h for h in trainer.state.log_history if "rewards/SqlRevenueTRL/mean" in h]
    assert len(logs) == 2 and seen and all(r is not None for r in seen)
    per_step = len(seen) // 2
    for k, h in enumerate(logs):
        batch = seen[k * per_step : (k + 1) * per_step]
        assert h["rewards/SqlRevenueTRL/mean"] == pytest.approx(sum(batch) / len(batch), rel=1e-5)
    assert {"SqlRevenueTRL/task", "SqlRevenueTRL/gate/write_attempt"} <= set(logs[0])
