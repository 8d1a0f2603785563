"""log_path= through verl 0.9.1's own reward loop (the trainer-package environment,
ci/trainers.sh): verl loads rewardkit's compute_score by path with ``log_path`` in its
``reward_kwargs``, its naive manager scores DataProto samples, and ``rewardkit calibrate``
reads the records back against gold labels."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

verl = pytest.importorskip("verl", reason="needs the trainer-package environment (ci/trainers.sh)")
torch = pytest.importorskip("torch")
from omegaconf import OmegaConf  # noqa: E402

import rewardkit.integrations.verl as verl_file  # noqa: E402

from .test_verl_real import SAMPLES, _data, _tokenizer, stack_module  # noqa: E402, F401

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]


def test_verl_naive_manager_writes_the_sample_log(
    stack_module: str,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    from verl.experimental.reward_loop.reward_manager import get_reward_manager_cls
    from verl.trainer.ppo.reward import get_custom_reward_fn

    from rewardkit.cli import main

    log = tmp_path / "rewards.jsonl"
    config = OmegaConf.create(
        {
            "reward": {
                "custom_reward_function": {
                    "path": verl_file.__file__,
                    "name": "compute_score",
                    "reward_kwargs": {
                        "reward": stack_module,
                        "none_score": -1.0,
                        "log_path": str(log),
                    },
                },
                "reward_manager": {"name": "naive", "source": "register"},
                "num_workers": 1,
                "reward_kwargs": {},
            },
            "trainer": {"experiment_name": "rewardkit-test"},
        }
    )
    tok = _tokenizer()
    mgr = get_reward_manager_cls("naive")(config, tok, get_custom_reward_fn(config))
    scores = []
    for k, (response, gold) in enumerate(SAMPLES):
        data = _data(tok, response, gold, {"index": k})
        scores.append(mgr.loop.run_until_complete(mgr.run_single(data))["reward_score"])
    mgr.loop.close()
    recs = [json.loads(x) for x in log.read_text().splitlines()]
    assert [r["prompt_id"] for r in recs] == [str(k) for k in range(len(SAMPLES))]
    assert all(r["trainer"] == "verl" for r in recs)
    # verl received the stand-in -1.0 for the unscorable ones; the log keeps the real None
    for r, s in zip(recs, scores):
        assert (r["reward"] is None and s == -1.0) or r["reward"] == s
    assert any(r["reward"] is None for r in recs)
    gold = [{"id": r["id"], "gold": k % 2 == 0} for k, r in enumerate(recs)]
    (tmp_path / "gold.jsonl").write_text("".join(json.dumps(g) + "\n" for g in gold))
    code = main(
        [
            "calibrate",
            "--rewards",
            str(log),
            "--gold",
            str(tmp_path / "gold.jsonl"),
            "--n-resamples",
            "50",
            "--json",
            "--out",
            str(tmp_path / "cal"),
        ]
    )
    assert code in (0, 1)
    cal = json.loads((tmp_path / "cal" / "calibration.json").read_text())
    assert cal["data"]["n_matched"] == len(SAMPLES)
    assert cal["data"]["n_reward_none"] == sum(r["reward"] is None for r in recs)


def test_openrlhf_single_turn_executor_writes_the_sample_log(
    stack_module: str,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    """OpenRLHF 0.9's SingleTurnAgentExecutor loads our reward file and calls reward_func in
    worker threads, many samples at once; only the generation engine is replaced."""
    import asyncio
    from types import SimpleNamespace

    from openrlhf.utils.agent import SingleTurnAgentExecutor

    log = tmp_path / "rewards.jsonl"
    module, _, attr = stack_module.partition(":")
    (tmp_path / "reward.py").write_text(
        f"from {module} import {attr}\n"
        "from rewardkit.integrations.openrlhf import reward_func as make\n"
        f"reward_func = make({attr}, log_path={str(log)!r})\n"
    )
    executor = SingleTurnAgentExecutor(str(tmp_path / "reward.py"))
    tok = _tokenizer()
    responses = [r for r, _ in SAMPLES] * 4

    class Engine:
        def __init__(self, text: str) -> None:
            self.ids = tok(text, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]

        async def generate(self, prompt_ids: Any, params: Any, multi_modal_data: Any = None):
            out = SimpleNamespace(token_ids=self.ids, finish_reason="stop", logprobs=None)
            return SimpleNamespace(outputs=[out])

    params = SimpleNamespace(max_tokens=32, logprobs=None)

    async def run() -> list[dict[str, Any]]:
        return await asyncio.gather(
            *(
                executor.execute(f"Q{k}?", "4", params, 64, tok, Engine(text))
                for k, text in enumerate(responses)
            )
        )

    outputs = asyncio.run(run())
    recs = [json.loads(x) for x in log.read_text().splitlines()]  # every line whole
    assert len(recs) == len(responses) and {r["trainer"] for r in recs} == {"openrlhf"}
    by_prompt = {r["prompt"]: r for r in recs}
    for k, out in enumerate(outputs):
        rec = by_prompt[f"Q{k}?"]
        sent = float(out["reward"][0])
        assert (rec["reward"] is None and sent == 0.0) or rec["reward"] == pytest.approx(sent)
