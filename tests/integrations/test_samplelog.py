"""log_path=: one record per scored sample from every adapter, appended safely, read back by the
audit (rewardkit calibrate --rewards)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rewardkit.audit.data import read_rewards
from rewardkit.errors import ConfigError
from rewardkit.integrations import openrlhf, samplelog, verl
from rewardkit.integrations.trl import reward_func


def _records(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_trl_records_one_line_per_completion_with_masks(tmp_path, stack):
    log = tmp_path / "run" / "rewards.jsonl"
    f = reward_func(stack, name="rk", log_path=log)
    out = f(
        prompts=["p1", "p1", "p2"],
        completions=["4", "rm -rf /", "CRASH"],
        ground_truth=["4", "4", None],
        prompt_id=["a", "a", "b"],
    )
    recs = _records(log)
    assert [r["reward"] for r in recs] == out
    assert [r["prompt_id"] for r in recs] == ["a", "a", "b"]
    assert recs[0]["id"] == f"a:{recs[0]['completion_hash']}" and recs[0]["trainer"] == "trl"
    assert recs[1]["hard_failed"] is True and recs[1]["gates"] == {"no_rm": False}
    # a crash is "cannot score": a null reward with its mask and error, never a 0
    assert recs[2]["reward"] is None and recs[2]["masks"]["total"] is True
    assert "fragile" in recs[2]["errors"] and recs[2]["components"]["exact"] is None
    assert recs[0]["completion"] == "4" and recs[0]["prompt"] == "p1"
    again = reward_func(stack, name="rk", log_path=log)  # appends, never truncates
    again(prompts=["p1"], completions=["4"], ground_truth=["4"], prompt_id=["a"])
    recs2 = _records(log)
    assert len(recs2) == 4 and recs2[3]["id"] == recs[0]["id"]
    rewards, repeats = read_rewards(log)  # the audit reads the log as it is
    assert [r.id for r in rewards] == [r["id"] for r in recs] and repeats == 1


def test_verl_and_openrlhf_log_the_true_none(tmp_path, stack, stack_source, monkeypatch):
    vlog, olog = tmp_path / "v.jsonl", tmp_path / "o.jsonl"
    score = verl.make_compute_score(stack, none_score=0.0, log_path=vlog)
    d = score("src", "CRASH", "4", {"index": 7})
    assert d["score"] == 0.0 and d["masked"] == 1.0
    (rec,) = _records(vlog)
    assert rec["reward"] is None and rec["prompt_id"] == "7" and rec["trainer"] == "verl"
    # the same through verl's by-name entry point (reward_kwargs carry log_path)
    (tmp_path / "samplelog_user_reward.py").write_text(stack_source + "\nstack = make_stack()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    verl.compute_score(
        "src", "4", "4", {"index": 8}, reward="samplelog_user_reward:stack", log_path=str(vlog)
    )
    assert [r["prompt_id"] for r in _records(vlog)] == ["7", "8"]
    assert _records(vlog)[1]["reward"] == 1.25
    rf = openrlhf.reward_func(stack, log_path=olog)
    rf(["Q: 2+2? 4<|im_end|>", "Q: x? CRASH"], ["Q: 2+2? ", "Q: x? "], ["4", "4"])
    recs = _records(olog)
    assert [r["reward"] for r in recs] == [1.25, None]
    assert recs[0]["completion"] == "4<|im_end|>" and recs[0]["trainer"] == "openrlhf"


def test_bad_log_path_is_refused(tmp_path, stack):
    with pytest.raises(ConfigError, match="'log_path' parameter of reward_func must name a file"):
        reward_func(stack, name="rk", log_path=tmp_path)
    with pytest.raises(ConfigError, match="'log_path' parameter of make_compute_score"):
        verl.make_compute_score(stack, log_path=3)  # type: ignore[arg-type]


def test_threads_append_whole_lines(tmp_path, stack):
    log = tmp_path / "t.jsonl"
    rf = openrlhf.reward_func(stack, log_path=log)
    big = "4" + " " * 20000  # records far above PIPE_BUF

    def work() -> None:
        for _ in range(20):
            rf([big, big], ["", ""], ["4", "4"])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(_records(log)) == 4 * 20 * 2


WRITER = r"""
import os, sys, time
from rewardkit.integrations import samplelog
from rewardkit.stack import Component, RewardStack
real = os.write
def slow(fd, data):  # a writer that is interrupted in the middle of its write
    half = len(data) // 2 or 1
    n = real(fd, bytes(data[:half])); time.sleep(0.004)
    return n
samplelog.os.write = slow
if sys.argv[2] == "nolock":
    samplelog.fcntl = None
stack = RewardStack(components=[Component("c", lambda ep: 0.5)], version="w")
log = samplelog.SampleLog(sys.argv[1], trainer="trl", name="w")
res = stack.score({})
open(sys.argv[1] + ".ready-" + sys.argv[3], "w").close()
while not os.path.exists(sys.argv[1] + ".go"):  # all writers start together
    time.sleep(0.001)
for i in range(15):
    log.write(stack, [{"prompt": sys.argv[3] * 3000, "completion": str(i)}], [res])
"""


@pytest.mark.parametrize("mode", ["lock", "nolock"])
def test_processes_never_interleave_lines_under_the_lock(tmp_path, mode):
    log = tmp_path / "p.jsonl"
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(log), mode, tag])
        for tag in ("a", "b", "c")
    ]
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("p.jsonl.ready-*"))) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    (tmp_path / "p.jsonl.go").touch()
    for p in procs:
        assert p.wait(timeout=120) == 0
    lines = log.read_text().splitlines()
    ok = 0
    for line in lines:
        try:
            json.loads(line)
            ok += 1
        except json.JSONDecodeError:
            pass
    if mode == "lock":
        assert ok == len(lines) == 45
    else:  # the control: without the lock, interrupted writes interleave
        assert ok < 45


def test_prompt_id_fallbacks():
    assert samplelog.prompt_id({"prompt_id": 3, "prompt": "x"}) == "3"
    assert samplelog.prompt_id({"extra_info": {"index": 5}}) == "5"
    a = samplelog.prompt_id({"prompt": [{"role": "user", "content": "hi"}]})
    assert a == samplelog.prompt_id({"prompt": [{"role": "user", "content": "hi"}]})
    assert len(a) == 16 and a != samplelog.prompt_id({"prompt": "hi"})


RUN_REWARD = """
from rewardkit.stack import Component, Gate, RewardStack

def digits(ep):
    t = ep["text"]
    return sum(ch.isdigit() for ch in t) / len(t) if t else None

def make():
    return RewardStack(
        gates=[Gate("no_hash", lambda ep: "#" not in ep["text"])],
        components=[
            Component("digits", digits),
            Component("length", lambda ep: min(len(ep["text"]) / 8, 1.0), weight=0.5),
        ],
        version="log-test-v1",
    )
"""


# TRL 1.16 itself reads a property that transformers 5.24 deprecates; nothing of ours warns.
@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")
def test_a_real_grpo_run_logs_samples_that_calibrate_reads_back(
    tmp_path, grpo_config, tiny_tokenizer, tiny_model, monkeypatch, capsys
):
    trl = pytest.importorskip("trl", reason="the TRL run needs the [trl] extra")
    datasets = pytest.importorskip("datasets")
    scipy_stats = pytest.importorskip("scipy.stats")
    from rewardkit.cli import main

    (tmp_path / "run_reward.py").write_text(RUN_REWARD)  # the user's reward module
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    import run_reward

    stack = run_reward.make()
    log = tmp_path / "run" / "rewards.jsonl"
    ds = datasets.Dataset.from_dict(
        {"prompt": ["2+2=", "1+3=", "7*6=", "9-4="] * 2, "prompt_id": ["a", "b", "c", "d"] * 2}
    )
    trainer = trl.GRPOTrainer(
        model=tiny_model,
        reward_funcs=[reward_func(stack, name="digits", log_path=log)],
        args=grpo_config(),
        train_dataset=ds,
        processing_class=tiny_tokenizer,
    )
    trainer.train()

    recs = _records(log)
    assert len(recs) == 3 * 4  # three steps of four completions
    assert {r["step"] for r in recs} <= {0, 1, 2, 3} and {r["prompt_id"] for r in recs} <= set(
        "abcd"
    )
    assert all(
        r["schema"] == samplelog.SCHEMA and set(r["masks"]) == {"total", "digits", "length"}
        for r in recs
    )
    # gold, labelled afterwards from the logged completions: how many digits the answer has
    unique = {r["id"]: r for r in recs}
    gold = [
        {
            "id": i,
            "gold": float(sum(ch.isdigit() for ch in r["completion"])),
            "group": r["prompt_id"],
        }
        for i, r in unique.items()
    ]
    (tmp_path / "gold.jsonl").write_text("".join(json.dumps(g) + "\n" for g in gold))
    code = main(
        [
            "calibrate",
            "--rewards",
            str(log),
            "--gold",
            str(tmp_path / "gold.jsonl"),
            "--n-resamples",
            "200",
            "--json",
            "--out",
            str(tmp_path / "cal"),
        ]
    )
    assert code in (0, 1)  # the acceptance verdict depends on the random model's text
    cal = json.loads((tmp_path / "cal" / "calibration.json").read_text())
    assert cal["data"]["n_matched"] == len(unique)
    assert cal["data"]["n_repeated_reward_records"] == len(recs) - len(unique)
    pairs = [
        (r["reward"], g["gold"]) for g, r in zip(gold, unique.values()) if r["reward"] is not None
    ]
    assert cal["data"]["n_reward_none"] == len(unique) - len(pairs)
    expected = scipy_stats.spearmanr([p[0] for p in pairs], [p[1] for p in pairs]).statistic
    got = cal["rank_agreement"]["spearman"]["value"]
    assert (got is None and expected != expected) or got == pytest.approx(expected, abs=1e-12)
    assert set(cal["components"]) == {"digits", "length"}
    # validate replays the run: the logged episodes are the items, the logged rewards golden
    capsys.readouterr()
    code = main(
        [
            "validate",
            "--reward",
            "run_reward:make",
            "--items",
            str(log),
            "--golden",
            str(log),
            "--json",
            "--out",
            str(tmp_path / "val"),
        ]
    )
    gates = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["gates"]
    assert gates["golden"] == "pass" and gates["determinism"] == "pass", gates
    assert gates["range"] == "pass" and gates["spike_in"] == "not run"
    assert code in (1, 4)  # 4 unless ablations flags a component on these few completions
