"""A real TRL GRPOTrainer run on CPU with a rewardkit reward (no downloads).

A tiny randomly initialised Qwen2-style causal LM is built from a config and a character-level
tokenizer is built locally with the ``tokenizers`` library; ``GRPOTrainer`` trains it for three
steps. The test asserts what the trainer logged: ``rewards/<name>/mean`` for the rewardkit reward
and the component metrics sent through ``log_metric`` (facts and pitfalls:
shared/notes/trl-on-cpu.md).
"""

from __future__ import annotations

from typing import Any

import pytest

trl = pytest.importorskip("trl", reason="TRL run needs the [trl] extra")
torch = pytest.importorskip("torch", reason="TRL run needs the [torch] extra")

from rewardkit.integrations.levels import levels_stack  # noqa: E402
from rewardkit.integrations.trl import MixedNoneWarning, TRLReward, reward_func  # noqa: E402
from rewardkit.stack import Component, Gate, RewardStack  # noqa: E402

KEYS = (
    "rewards/rk/mean",
    "rewards/levels_B/mean",
    "rk/match",
    "rk/match/frac_none",
    "rk/digit",
    "rk/length",
    "rk/gate/no_shouting",
    "rk/frac_hard_failed",
    "rk/frac_unscorable",
    "rk/frac_errors",
    "levels_B/trajectory",
    "levels_B/frac_masked",
    "levels_B/has_l0",
)


def _stack() -> RewardStack:
    def has_digit(ep: dict[str, Any]) -> float:
        return float(any(ch.isdigit() for ch in ep["text"]))

    def matches(ep: dict[str, Any]) -> float | None:
        # Rows without a gold answer cannot be scored: None, not 0.
        gold = ep["ground_truth"]
        return None if gold == "" else float(gold in ep["text"])

    return RewardStack(
        gates=[Gate("no_shouting", lambda ep: not ep["text"].isupper())],
        components=[
            Component("match", matches),
            Component("digit", has_digit, weight=0.5),
            Component("length", lambda ep: float(len(ep["text"])), weight=0.0),
        ],
        version="trl-test-v1",
    )


# TRL 1.16 itself reads a property that transformers 5.24 deprecates; nothing of ours warns.
@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")
@pytest.mark.parametrize(
    "conversational",
    [False, pytest.param(True, marks=pytest.mark.slow)],
    ids=["standard", "conversational"],
)
def test_grpo_trainer_logs_rewardkit_metrics(
    conversational: bool, grpo_config: Any, tiny_tokenizer: Any, tiny_model: Any
) -> None:
    from datasets import Dataset

    tokenizer = tiny_tokenizer
    model = tiny_model
    prompts = ["2+2=", "1+3=", "name a color:", "3+3="]
    if conversational:
        prompts_col: list[Any] = [[{"role": "user", "content": p}] for p in prompts]
    else:
        prompts_col = prompts
    ds = Dataset.from_dict(
        {
            "prompt": prompts_col * 2,
            "ground_truth": ["4", "4", "", "6"] * 2,
            "step_levels": [[3, 3], [3, 0], [-1, -1], [3]] * 2,
        }
    )
    calls: list[tuple[dict[str, Any], list[float | None]]] = []

    class Recording(TRLReward):  # records what TRL passed and what the reward returned
        def __call__(self, **kwargs: Any) -> list[float | None]:
            out = super().__call__(**kwargs)
            calls.append((kwargs, out))
            return out

    rk = Recording(reward_func(_stack(), name="rk").stack, "rk")
    lv = reward_func(levels_stack(column="step_levels"), name="levels_B")
    args = grpo_config()
    trainer = trl.GRPOTrainer(
        model=model,
        reward_funcs=[rk, lv],
        args=args,
        train_dataset=ds,
        processing_class=tokenizer,
    )
    with pytest.warns(MixedNoneWarning, match="sum_then_normalize") as caught:
        trainer.train()
    assert {str(w.message).split("'")[1] for w in caught if w.category is MixedNoneWarning} == {
        "rk",
        "levels_B",
    }

    logs = [h for h in trainer.state.log_history if "rewards/rk/mean" in h]
    assert len(logs) == len(calls) == 3, trainer.state.log_history
    level_value = {(3, 3): 0.85, (3, 0): 0.85 / 2 * 0.30, (-1, -1): None, (3,): 0.85}
    for h, (kw, out) in zip(logs, calls):
        for key in KEYS:
            assert key in h, (key, sorted(h))
        # TRL's per-function mean is over the values we returned (None left out)
        ours = [r for r in out if r is not None]
        assert h["rewards/rk/mean"] == pytest.approx(sum(ours) / len(ours), abs=1e-6)
        # rows without a gold answer cannot be scored by "match": counted as None, not as 0
        n = len(kw["completions"])
        assert h["rk/match/frac_none"] == pytest.approx(kw["ground_truth"].count("") / n)
        # the levels reward against hand-computed recipe-B values of each row's judgments
        expected = [level_value[tuple(s)] for s in kw["step_levels"]]
        scored = [v for v in expected if v is not None]
        if scored:
            assert h["rewards/levels_B/mean"] == pytest.approx(sum(scored) / len(scored))
        # TRL's None semantics with two functions (sum_then_normalize, as the warning says): a
        # None is summed as 0 unless every function returned None for that row
        rows = [(a, b) for a, b in zip(out, expected) if not (a is None and b is None)]
        summed = [(a or 0.0) + (b or 0.0) for a, b in rows]
        assert h["reward"] == pytest.approx(sum(summed) / len(summed), abs=1e-6)
        assert h["levels_B/trajectory/frac_none"] == pytest.approx(expected.count(None) / n)
        # completions reach the reward in TRL's format for the dataset's kind
        first = kw["completions"][0]
        if conversational:
            assert isinstance(first, list) and first[0]["role"] == "assistant"
        else:
            assert isinstance(first, str)


@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")
def test_grpo_trainer_with_the_fhir_verifier_reward(
    grpo_config: Any, tiny_tokenizer: Any, tiny_model: Any
) -> None:
    """The FHIR reward in a real run: the trajectory is what the model wrote, the task a column.

    A random model writes no valid action, so each completion is malformed actions and no
    answer; the logged values are checked against a fresh environment replaying exactly what
    TRL passed (the environment is the oracle), and the gate/component keys must all be there.
    """
    from datasets import Dataset

    from rewardkit.envs import make
    from rewardkit.integrations.fhir import completion_actions
    from rewardkit.integrations.trl import fhir_reward_func

    # seed -1 cannot re-create the task: None. One such row of eight, so that no batch of
    # two prompts is all None (TRL would then have no mean to log).
    tasks = [{"seed": s, "options": {"trap": "none", "variant": s % 6}} for s in range(7)]
    tasks.append({"seed": -1, "options": {"trap": "none", "variant": 0}})
    ds = Dataset.from_dict({"prompt": [f"ANC {i}?" for i in range(8)], "task": tasks})
    calls: list[tuple[dict[str, Any], list[float | None]]] = []

    class Recording(TRLReward):
        def __call__(self, **kwargs: Any) -> list[float | None]:
            out = super().__call__(**kwargs)
            calls.append((kwargs, out))
            return out

    rk = Recording(fhir_reward_func().stack, "fhir")
    trainer = trl.GRPOTrainer(
        model=tiny_model,
        reward_funcs=[rk],
        args=grpo_config(),
        train_dataset=ds,
        processing_class=tiny_tokenizer,
    )
    trainer.train()

    logs = [h for h in trainer.state.log_history if "rewards/fhir/mean" in h]
    assert len(logs) == len(calls) == 3, trainer.state.log_history
    keys = ["rewards/fhir/mean", "fhir/frac_unscorable", "fhir/frac_hard_failed"]
    keys += [
        f"fhir/gate/{g}"
        for g in ("cross_patient_read", "unauthorized_write", "fabricated_citation", "phi_leak")
    ]
    keys += [
        f"fhir/{c}"
        for c in (
            "task",
            "citation",
            "abstention",
            "efficiency",
            "format",
            "cost",
            "soft_total",
            "answered",
            "steps",
            "format_errors",
        )
    ]
    for h, (kw, out) in zip(logs, calls):
        for key in keys:
            assert key in h, (key, sorted(h))
        oracle: list[float | None] = []
        for text, task in zip(kw["completions"], kw["task"]):
            if task["seed"] < 0:
                oracle.append(None)
                continue
            env = make("fhir/anc-threshold-v1")
            env.reset(seed=task["seed"], options=task["options"])
            for a in list(completion_actions(text)) or [""]:
                if any(env.step(a)[2:4]):
                    break
            oracle.append(env.finalize().total)
        assert out == oracle
        scored = [v for v in oracle if v is not None]
        assert h["rewards/fhir/mean"] == pytest.approx(sum(scored) / len(scored), abs=1e-6)
        assert h["fhir/frac_unscorable"] == pytest.approx(oracle.count(None) / len(oracle))
