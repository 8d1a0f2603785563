"""A real TRL GRPOTrainer run (3 steps, tiny random model built locally, no downloads) with the
autorater reward functions, on the shared fixtures of tests/conftest.py. Skipped, with the
reason, where the trl extra is not installed (`make test` installs it)."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("torch", reason="torch extra not installed")
pytest.importorskip("trl", reason="trl extra not installed: pip install 'rewardkit[trl]'")

from rewardkit.autorater import brier_reward_func, log_reward_func, proper_rewards


@pytest.mark.slow
# TRL 1.16 itself calls transformers' deprecated `is_gradient_checkpointing` alias.
@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")
def test_grpo_trainer_logs_the_autorater_rewards(tiny_model, tiny_tokenizer, grpo_config):
    from datasets import Dataset
    from trl import GRPOTrainer

    calls: list[tuple[str, list, list, list[float], set[str]]] = []

    def recorded(func, rule):
        # What TRL passes in, and what the reward function returns, kept for the asserts.
        def wrapper(prompts=None, completions=None, completion_ids=None, **kwargs):
            out = func(
                prompts=prompts, completions=completions, completion_ids=completion_ids, **kwargs
            )
            calls.append((rule, list(completions), list(kwargs["label"]), out, set(kwargs)))
            return out

        wrapper.__name__ = func.__name__
        return wrapper

    ds = Dataset.from_dict(
        {"prompt": ["B B", "B 1", "0.2 B", "1 B"] * 2, "label": [1, 0, 1, 0.5] * 2}
    )
    args = grpo_config(num_generations=4, max_completion_length=10)
    trainer = GRPOTrainer(
        model=tiny_model,
        reward_funcs=[recorded(brier_reward_func, "brier"), recorded(log_reward_func, "log")],
        args=args,
        train_dataset=ds,
        processing_class=tiny_tokenizer,
    )
    trainer.train()
    logs = [h for h in trainer.state.log_history if "rewards/brier_reward_func/mean" in h]
    assert len(logs) == 3
    for h in logs:  # TRL averages in float32: allow its rounding
        assert -1e-6 <= h["rewards/brier_reward_func/mean"] <= 1.0 + 1e-6
        assert math.log(1e-3) - 1e-6 <= h["rewards/log_reward_func/mean"] <= 1e-6
        assert 0.0 <= h["autorater/brier_reward_func/parse_failure_rate"] <= 1.0
    # TRL called each function with keyword arguments, the label column and its extras; the
    # floats returned are the proper rewards of the completions it passed.
    assert {rule for rule, *_ in calls} == {"brier", "log"}
    for rule, completions, labels, out, keys in calls:
        assert {"label", "trainer_state", "log_metric"} <= keys
        assert set(labels) <= {1, 0, 0.5} and len(labels) == len(completions) == len(out)
        assert all(isinstance(c, str) for c in completions)
        assert out == list(proper_rewards(completions, labels, rule=rule))
