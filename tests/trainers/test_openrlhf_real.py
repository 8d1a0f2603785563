"""The OpenRLHF adapters through OpenRLHF 0.11.2 itself (the trainer-package environment).

OpenRLHF-side code is OpenRLHF's own: ``SingleTurnAgentExecutor`` loads our reward file by path
and calls ``reward_func`` in a thread after decoding the query with special tokens;
``MultiTurnAgentExecutor.execute`` drives our agent instance turn by turn; the agent file is
loaded by ``_load_agent_executor``, whose source is taken from the installed
``openrlhf/trainer/ray/vllm_engine.py`` (that module imports vLLM at the top, which this
CPU environment does not have). Only the model is replaced: a scripted engine returns fixed
turns as token ids of a tokenizer built locally, with TRL's Qwen2.5 chat template.
"""

from __future__ import annotations

import ast
import asyncio
import json
import string
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

openrlhf = pytest.importorskip("openrlhf", reason="needs the trainer-package environment")
torch = pytest.importorskip("torch")

from rewardkit.envs import make  # noqa: E402
from rewardkit.integrations.openrlhf_agent import task_rows  # noqa: E402

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
]
ROOT = Path(__file__).resolve().parents[2]
ENV_ID = "fhir/anc-threshold-v1"


def _tokenizer() -> Any:
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
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>", unk_token="<unk>"
    )
    fast.chat_template = qwen2_5_chat_template
    return fast


@dataclass
class SamplingParams:  # the fields OpenRLHF's executors read and write
    max_tokens: int | None = None
    logprobs: int | None = None


@dataclass
class _Out:
    token_ids: list[int]
    text: str
    finish_reason: str = "stop"
    logprobs: Any = None


@dataclass
class _Request:
    outputs: list[_Out]


@dataclass
class ScriptedEngine:
    """Stands in for the vLLM engine: returns the next scripted turn, ended by <|im_end|>."""

    tok: Any
    turns: list[str]
    seen: list[list[int]] = field(default_factory=list)

    async def generate(
        self, prompt_ids: list[int], params: Any, multi_modal_data: Any = None
    ) -> Any:
        self.seen.append(list(prompt_ids))
        text = self.turns.pop(0) + "<|im_end|>"
        ids = self.tok(text, add_special_tokens=False)["input_ids"]
        return _Request([_Out(ids, text)])


def _load_agent_executor(path: str) -> Any:
    """OpenRLHF's own loader, compiled from the installed vllm_engine.py (see the module)."""
    src = Path(openrlhf.__file__).parent / "trainer" / "ray" / "vllm_engine.py"
    tree = ast.parse(src.read_text())
    fn = next(
        n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_load_agent_executor"
    )
    from openrlhf.utils.agent import AgentExecutorBase

    namespace: dict[str, Any] = {"AgentExecutorBase": AgentExecutorBase}
    exec(compile(ast.Module([fn], []), str(src), "exec"), namespace)
    return namespace["_load_agent_executor"](path)


def _chat(tok: Any, text: str) -> str:
    return tok.apply_chat_template(
        [{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True
    )


def test_single_turn_reward_file_gives_rewardkits_scores(tmp_path: Path) -> None:
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    from rewardkit.integrations.openrlhf import reward_func

    src = (ROOT / "tests" / "integrations" / "conftest.py").read_text()
    body = src[src.index("def make_stack") : src.index("@pytest.fixture")]
    reward_file = tmp_path / "reward.py"
    reward_file.write_text(
        "from typing import Any\n"
        "from rewardkit.stack import Component, Gate, GateOutcome, RewardStack\n"
        "from rewardkit.integrations.openrlhf import reward_func as make\n\n"
        + body
        + "\nreward_func = make(make_stack())\n"
    )
    executor = SingleTurnAgentExecutor(str(reward_file))  # OpenRLHF loads the file by path
    tok = _tokenizer()
    prompt = _chat(tok, "2+2?")
    ns: dict[str, Any] = {}
    exec(
        compile("from typing import Any\nfrom rewardkit.stack import *\n" + body, "stack", "exec"),
        ns,
    )
    ours = reward_func(ns["make_stack"]())
    for answer, label in [("4", "4"), ("5", "4"), ("4 rm -rf /", "4"), ("CRASH", "4"), ("4", None)]:
        engine = ScriptedEngine(tok, [answer])
        out = asyncio.run(executor.execute(prompt, label, SamplingParams(), 512, tok, engine))
        query = prompt + answer + "<|im_end|>"
        want = ours([query], [prompt], [label])
        assert out["reward"].tolist() == want["rewards"].tolist(), answer
        assert out["extra_logs"]["masked"].tolist() == want["extra_logs"]["masked"].tolist()
    # the case: the end marker is gone, exact match scores 1.25
    assert ours([prompt + "4<|im_end|>"], [prompt], ["4"])["rewards"].tolist() == [1.25]


def test_multi_turn_agent_plays_the_environment(tmp_path: Path) -> None:
    agent_file = tmp_path / "agent.py"
    agent_file.write_text(
        textwrap.dedent(
            f"""
            from rewardkit.integrations.openrlhf import agent_executor
            AgentExecutor = agent_executor({ENV_ID!r})
            """
        )
    )
    executor = _load_agent_executor(str(agent_file))
    tok = _tokenizer()
    task = {"seed": 5, "options": {"trap": "amended", "variant": 2}}
    (row,) = task_rows(ENV_ID, [task])
    prompt = _chat(tok, row["prompt"])

    oracle = make(ENV_ID)
    oracle.reset(seed=task["seed"], options=task["options"])
    ref = oracle.reference_actions()
    # the model: one action per turn, the first turn with a wrong argument (a format penalty)
    actions = [{"tool": "search_patients", "args": {"nme": "x"}}, *ref]
    for a in actions:
        oracle.step(a)
    verdict = oracle.finalize()
    engine = ScriptedEngine(tok, [json.dumps(a) for a in actions])
    out = asyncio.run(
        executor.execute(prompt, row["label"], SamplingParams(), 100_000, tok, engine)
    )

    assert out["reward"] == pytest.approx(verdict.total, abs=1e-9)  # OpenRLHF sums step rewards
    assert out["scores"].item() == verdict.total  # the last score: the verdict itself
    assert len(out["action_ranges"]) == len(actions)
    # the observations went back to the model as tool turns of its own chat template
    second = tok.decode(engine.seen[1])
    assert "<tool_response>" in second and "no argument 'nme'" in second


def test_multi_turn_stopped_by_the_length_budget_gets_the_score_so_far(tmp_path: Path) -> None:
    from rewardkit.integrations.openrlhf import agent_executor

    executor = agent_executor(ENV_ID)()
    tok = _tokenizer()
    task = {"seed": 1, "options": {}}
    (row,) = task_rows(ENV_ID, [task])
    prompt = _chat(tok, row["prompt"])
    oracle = make(ENV_ID)
    oracle.reset(seed=1)
    first = oracle.reference_actions()[0]
    oracle.step(first)
    so_far = oracle.stack.score(oracle.episode()).total
    engine = ScriptedEngine(tok, [json.dumps(first)] * 3)
    prompt_len = len(tok(prompt, add_special_tokens=False)["input_ids"])
    budget = prompt_len + len(tok(json.dumps(first) + "<|im_end|>")["input_ids"]) + 5
    out = asyncio.run(executor.execute(prompt, row["label"], SamplingParams(), budget, tok, engine))
    assert len(out["action_ranges"]) == 1  # OpenRLHF stopped: no budget for a second turn
    assert out["reward"] == pytest.approx(so_far, abs=1e-9)


def test_a_label_that_does_not_match_the_prompt_is_an_error(tmp_path: Path) -> None:
    from rewardkit.errors import ConfigError
    from rewardkit.integrations.openrlhf import agent_executor

    executor = agent_executor(ENV_ID)()
    tok = _tokenizer()
    (row,) = task_rows(ENV_ID, [{"seed": 1, "options": {}}])
    other = json.dumps({"seed": 2, "options": {}})
    with pytest.raises(ConfigError, match="dataset and the labels disagree"):
        asyncio.run(
            executor.execute(
                _chat(tok, row["prompt"]),
                other,
                SamplingParams(),
                4096,
                tok,
                ScriptedEngine(tok, ["{}"]),
            )
        )
