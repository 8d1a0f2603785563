"""The verl adapters through verl 0.9.1 itself (the trainer-package environment, ci/trainers.sh).

Everything verl-side is verl's own code: ``get_custom_reward_fn`` / ``load_extern_object``
load the reward (by file path, as module ``custom_module_<hash>``, and by ``pkg://``), the
registered reward-loop managers (naive, dapo, gdpo, rate_limited, remote on Ray) score
``DataProto`` samples, PRIME's process-pool scorer runs, ``initialize_tools_from_config``
builds our tools from the YAML we write, and ``ToolAgentLoop._call_tool`` drives them. Only
the model is replaced: the responses are fixed token ids of a tokenizer built locally.
Every score is compared with rewardkit's own score of the same input.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

verl = pytest.importorskip("verl", reason="needs the trainer-package environment (ci/trainers.sh)")
torch = pytest.importorskip("torch")
from omegaconf import OmegaConf  # noqa: E402

import rewardkit.integrations.verl as verl_file  # noqa: E402
from rewardkit.envs import make  # noqa: E402
from rewardkit.integrations.verl import make_compute_score  # noqa: E402

# verl and Ray warn about their own deprecations on import; nothing of ours is silenced here.
pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]
ROOT = Path(__file__).resolve().parents[2]
MANAGERS = ("naive", "dapo", "gdpo", "rate_limited", "remote")
SAMPLES = [("4", "4"), ("5", "4"), ("4 rm -rf /", "4"), ("CRASH", "4"), ("4", None)]


def _tokenizer() -> Any:
    import string

    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = list(string.ascii_letters + string.digits + string.punctuation + " \n")
    vocab = {t: i for i, t in enumerate(["<pad>", "<eos>", "<unk>", *chars])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    tok.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<eos>", pad_token="<pad>", unk_token="<unk>"
    )


def _data(tok: Any, response: str, ground_truth: Any, extra_info: dict | None = None) -> Any:
    from verl import DataProto

    prompt = tok("Q?", add_special_tokens=False)["input_ids"]
    resp = tok(response, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    width = len(resp) + 3  # right padding, as verl pads responses
    responses = resp + [tok.pad_token_id] * (width - len(resp))
    mask = [1] * len(prompt) + [1] * len(resp) + [0] * (width - len(resp))
    return DataProto.from_dict(
        tensors={
            "prompts": torch.tensor([prompt]),
            "responses": torch.tensor([responses]),
            "attention_mask": torch.tensor([mask]),
        },
        non_tensors={
            "data_source": ["rewardkit/test"],
            "reward_model": [{"style": "rule", "ground_truth": ground_truth}],
            "extra_info": [dict(extra_info or {"index": 0})],
        },
    )


@pytest.fixture(scope="module")
def stack_module(tmp_path_factory: Any) -> str:
    """A user's module holding the stack, importable by Ray workers (PYTHONPATH)."""
    src = (ROOT / "tests" / "integrations" / "conftest.py").read_text()
    start = src.index("def make_stack")
    end = src.index("@pytest.fixture")
    d = tmp_path_factory.mktemp("userpkg")
    body = "from typing import Any\n"
    body += "from rewardkit.stack import Component, Gate, GateOutcome, RewardStack\n\n"
    (d / "my_rewards.py").write_text(body + src[start:end] + "\nstack = make_stack()\n")
    sys.path.insert(0, str(d))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(d), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]
    )
    return "my_rewards:stack"


def _config(path: str, reward: str, manager: str) -> Any:
    return OmegaConf.create(
        {
            "reward": {
                "custom_reward_function": {
                    "path": path,
                    "name": "compute_score",
                    "reward_kwargs": {"reward": reward, "none_score": -1.0},
                },
                "reward_manager": {"name": manager, "source": "register"},
                "num_workers": 1,
                "reward_kwargs": {},
            },
            "trainer": {"experiment_name": "rewardkit-test"},
        }
    )


@pytest.fixture(scope="module")
def ray_cluster(stack_module: str) -> Any:
    ray = pytest.importorskip("ray")
    ray.init(
        address="local",  # a private instance, never a cluster someone else started here
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": os.environ["PYTHONPATH"]}},
    )
    yield ray
    ray.shutdown()


@pytest.mark.parametrize("loading", ["file", "pkg"])
@pytest.mark.parametrize("manager", MANAGERS)
def test_managers_give_rewardkits_scores(
    manager: str,
    loading: str,
    stack_module: str,
    ray_cluster: Any,
    fresh_loop: Callable[[], None],
) -> None:
    from verl.experimental.reward_loop.reward_manager import get_reward_manager_cls
    from verl.trainer.ppo.reward import get_custom_reward_fn

    path = verl_file.__file__ if loading == "file" else "pkg://rewardkit.integrations.verl"
    config = _config(path, stack_module, manager)
    fn = get_custom_reward_fn(config)  # verl's loader: custom_module_<hash> or an import
    tok = _tokenizer()
    fresh_loop()
    mgr = get_reward_manager_cls(manager)(config, tok, fn)
    import my_rewards

    ours = make_compute_score(my_rewards.stack, none_score=-1.0)
    for response, gold in SAMPLES:
        out = mgr.loop.run_until_complete(mgr.run_single(_data(tok, response, gold)))
        want = ours("rewardkit/test", response, gold, {})
        assert out["reward_score"] == want["score"], (manager, response)
        info = out["reward_extra_info"]
        assert {k: info[k] for k in want} == want
    # loaded by path, the function is defined elsewhere: it pickles by reference
    assert fn.args[0].__module__ == "rewardkit.integrations.verl_score"


def test_prime_needs_pkg_loading_and_the_float_form(stack_module: str) -> None:
    """PRIME pickles the function into a process pool and keeps float(result): loaded by
    ``pkg://`` the float form gives rewardkit's scores; the dict form fails there and PRIME
    turns every sample into 0.0 without a word (what docs/integrations.md warns about)."""
    from functools import partial

    import my_rewards
    from verl.utils.import_utils import load_extern_object
    from verl.workers.reward_manager.prime import run_reward_scoring

    ours = make_compute_score(my_rewards.stack, none_score=-1.0)
    resp = [r for r, _ in SAMPLES]
    gold = [g for _, g in SAMPLES]
    tasks = ["rewardkit/test"] * len(SAMPLES)
    fn = load_extern_object("pkg://rewardkit.integrations.verl", "compute_score_prime")
    scores = run_reward_scoring(
        partial(fn, reward=stack_module, none_score=-1.0), resp, gold, tasks, num_processes=2
    )
    assert scores == [ours("x", r, g)["score"] for r, g in SAMPLES]
    as_dict = load_extern_object("pkg://rewardkit.integrations.verl", "compute_score")
    with pytest.raises(KeyError):  # float(result[0]) on a dict: PRIME cannot read the dict form
        run_reward_scoring(
            partial(as_dict, reward=stack_module, none_score=-1.0),
            resp,
            gold,
            tasks,
            num_processes=2,
        )


def test_the_tool_agent_loop_plays_the_environment(
    tmp_path: Path, fresh_loop: Callable[[], None]
) -> None:
    """verl loads our tool config, its ToolAgentLoop._call_tool runs the create / execute /
    release lifecycle of each call, the rewards reach the naive manager as tool_extra_fields,
    and our compute_score gives the environment's verdict of exactly that episode."""
    from verl.experimental.agent_loop.tool_agent_loop import AgentData, ToolAgentLoop
    from verl.experimental.agent_loop.tool_parser import FunctionCall
    from verl.experimental.reward_loop.reward_manager import get_reward_manager_cls
    from verl.tools.tool_registry import initialize_tools_from_config
    from verl.utils.import_utils import load_extern_object

    from rewardkit.integrations.verl_tools import task_extra_info, tool_config

    env_id = "fhir/anc-threshold-v1"
    task = {"seed": 2, "options": {"trap": "page2", "variant": 1}}
    tool_config(env_id, tmp_path / "tools.yaml")
    tools = initialize_tools_from_config(str(tmp_path / "tools.yaml"))
    loop = object.__new__(ToolAgentLoop)  # only what _call_tool reads
    loop.tools = {t.name: t for t in tools}
    loop.max_tool_response_length = 100_000
    loop.tool_response_truncate_side = "middle"
    extra = task_extra_info(env_id, task)
    agent = AgentData([], [], [], None, None, {}, "r1", extra["tools_kwargs"])

    oracle = make(env_id)
    oracle.reset(seed=task["seed"], options=task["options"])
    ref = oracle.reference_actions()
    ref.insert(1, {"tool": "search_patients", "args": {"nme": "typo"}})  # a wrong argument
    for action in ref:
        oracle.step(action)
        name, args = (
            (action["tool"], action["args"]) if "tool" in action else ("answer", action["answer"])
        )
        call = FunctionCall(name=name, arguments=json.dumps(args))
        _, reward, _ = _run(loop._call_tool(call, agent.tools_kwargs, agent))
        agent.tool_rewards.append(reward)
    verdict = oracle.finalize()
    session = agent.__dict__["_rewardkit_sessions"][env_id]
    assert session.env.snapshot() == oracle.snapshot()  # the same episode, action for action
    assert agent.tool_rewards[-1] == verdict.total

    fn = load_extern_object("pkg://rewardkit.integrations.verl_tools", "compute_score")
    config = _config("unused", "unused", "naive")
    fresh_loop()
    mgr = get_reward_manager_cls("naive")(config, _tokenizer(), fn)
    data = _data(_tokenizer(), "done", json.dumps(task), {"index": 0})
    data.non_tensor_batch["data_source"][0] = env_id
    data.non_tensor_batch["tool_extra_fields"] = __import__("numpy").array(
        [{"tool_rewards": list(agent.tool_rewards), "turn_scores": []}], dtype=object
    )
    out = mgr.loop.run_until_complete(mgr.run_single(data))
    assert out["reward_score"] == verdict.total


def _run(coro: Any) -> Any:
    import asyncio

    return asyncio.run(coro)


@pytest.fixture
def fresh_loop() -> Iterator[Callable[[], None]]:
    """verl's managers take the current event loop when built: ``fresh_loop()`` gives them an
    open one. Every loop made is closed after the test (an unclosed loop is a ResourceWarning
    whenever the collector reaches it, which the warnings-as-errors setting turns into a failed
    run)."""
    import asyncio

    loops: list[asyncio.AbstractEventLoop] = []

    def make() -> None:
        loops.append(asyncio.new_event_loop())
        asyncio.set_event_loop(loops[-1])

    yield make
    asyncio.set_event_loop(None)
    for loop in loops:
        loop.close()


def test_file_loaded_function_pickles_for_remote_workers() -> None:
    """The PicklingError of the issue: verl's loader (no sys.modules entry), then cloudpickle."""
    import cloudpickle
    from verl.utils.import_utils import load_extern_object

    fn = load_extern_object(verl_file.__file__, "compute_score")
    blob = cloudpickle.dumps(fn)
    code = textwrap.dedent(
        """
        import pickle, sys
        fn = pickle.loads(sys.stdin.buffer.read())
        out = fn("d", "4", "4", {}, reward="rewardkit.integrations.fhir:completion_actions")
        """
    )
    import subprocess

    p = subprocess.run([sys.executable, "-c", code], input=blob, capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode()[-800:]  # it arrived and ran in a fresh process


def test_gdpo_normalises_a_masked_component_as_if_it_were_real() -> None:
    """What docs/integrations.md says of GDPO, shown with verl's own estimator: a component
    that could not score arrives as ``none_score`` (``masked/<c> = 1``), and the advantages
    depend on that stand-in value — GDPO cannot leave it out."""
    import numpy as np
    from verl.trainer.ppo.core_algos import compute_gdpo_outcome_advantage

    from rewardkit.stack import Component, RewardStack

    def exact(ep: dict) -> float | None:
        return None if ep["ground_truth"] is None else float(ep["text"] == ep["ground_truth"])

    stack = RewardStack(
        components=[
            Component("exact", exact),
            Component("short", lambda ep: float(len(ep["text"]) < 3)),
        ],
        version="gdpo-demo",
    )
    answers = [("4", "4"), ("5", "4"), ("4", None), ("long answer", "4")]

    def advantages(none_score: float) -> Any:
        f = make_compute_score(stack, none_score=none_score)
        rows = [f("d", a, g, {}) for a, g in answers]
        assert [r["masked/exact"] for r in rows] == [0.0, 0.0, 1.0, 0.0]
        n, width = len(rows), 4
        batch = {
            "prompts": torch.zeros((n, 2), dtype=torch.long),
            "attention_mask": torch.ones((n, 2 + width), dtype=torch.long),
        }
        keys = ["reward/exact", "reward/short"]
        non_tensor = {k: np.array([r[k] for r in rows], dtype=object) for k in keys}
        config = OmegaConf.create({"gdpo_reward_keys": keys})
        adv, _ = compute_gdpo_outcome_advantage(
            token_level_rewards=torch.zeros((n, width)),
            response_mask=torch.ones((n, width)),
            index=np.array(["g"] * n, dtype=object),
            config=config,
            non_tensor_batch=non_tensor,
            batch=batch,
        )
        return adv[:, -1]

    a0, a1 = advantages(0.0), advantages(1.0)
    assert not torch.allclose(a0, a1)  # the stand-in for "cannot score" moved every advantage
