"""A rewardkit reward as an OpenRLHF remote reward function.

Usage — a file passed as ``--reward.remote_url /path/reward.py`` (``--remote_rm_url`` before
OpenRLHF 0.11)::

    # reward.py
    from mypkg.rewards import stack
    from rewardkit.integrations.openrlhf import reward_func as make
    reward_func = make(stack, name="anc")

OpenRLHF's contract (``SingleTurnAgentExecutor`` in ``openrlhf/utils/agent.py``): it loads
``reward_func`` from the file and calls ``reward_func(queries, prompts, labels)`` positionally,
one sample at a time in a thread; ``queries`` is prompt + response decoded *with* special
tokens, ``labels`` the ``--data.label_key`` field. It expects ``{"rewards", "scores",
"extra_logs"}``: ``rewards`` feeds the advantage, ``scores`` dynamic filtering (OpenRLHF takes
``scores or rewards``), and each ``extra_logs`` value is read with ``.flatten()[0].item()`` and
averaged into the actor's metrics. Values are float32 torch tensors of shape (n,) when torch is
importable, plain lists of floats otherwise.

OpenRLHF has no "cannot score" (a ``None`` reward makes it look for a reward model and fail),
so a ``None`` total is sent as ``none_reward`` (default 0.0, a parameter) with
``extra_logs["masked"] = 1``; see :func:`~rewardkit.integrations._common.flat_record` for the
fixed ``extra_logs`` keys. The episode a stack sees: ``query``, ``prompt``, ``completion``
(the query after the prompt), ``text`` (the completion without trailing special tokens),
``ground_truth`` and ``label`` (the label), and any other keyword.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from .._completion import completion_text
from .._optional import have
from ..errors import ConfigError
from ..stack import RewardStack
from ._common import Target, check_fill, flat_record, record_keys, resolve
from .samplelog import SampleLog, open_log

__all__ = ["DEFAULT_SPECIAL_TOKENS", "OpenRLHFReward", "reward_func", "split_query"]

# End-of-turn / end-of-text markers of the common chat templates (Qwen, Llama 3, Llama 2 / Mistral).
DEFAULT_SPECIAL_TOKENS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end_of_text|>", "</s>")


def split_query(query: str, prompt: str, special_tokens: Sequence[str]) -> tuple[str, str]:
    """(completion, text): the query after the prompt, and that without trailing special tokens.

    The prompt is found by prefix (it is decoded from the same tokens); when it is not a prefix
    (a tokenizer that does not round-trip), the first occurrence is used, else the whole query.
    """
    if query.startswith(prompt):
        completion = query[len(prompt) :]
    else:
        at = query.find(prompt) if prompt else -1
        completion = query[at + len(prompt) :] if at >= 0 else query
    text = completion.rstrip()
    stripped = True
    while stripped:
        stripped = False
        for tok in special_tokens:
            if tok and text.endswith(tok):
                text = text[: -len(tok)].rstrip()
                stripped = True
    return completion, completion_text(text)


class OpenRLHFReward:
    """The callable :func:`reward_func` returns; ``extra_log_keys`` is its fixed key set."""

    def __init__(
        self,
        stack: RewardStack,
        name: str,
        none_reward: float,
        special_tokens: tuple[str, ...],
        log: SampleLog | None = None,
    ) -> None:
        self.stack = stack
        self.log = log  # one JSONL record per scored sample (log_path=)
        self.__name__ = name
        self.none_reward = none_reward
        self.special_tokens = special_tokens
        self.extra_log_keys: tuple[str, ...] = record_keys(stack)

    def __repr__(self) -> str:
        return f"OpenRLHFReward(name={self.__name__!r}, none_reward={self.none_reward})"

    def __call__(
        self, queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any], **kwargs: Any
    ) -> dict[str, Any]:
        n = len(queries)
        if len(prompts) != n or len(labels) != n:
            raise ConfigError(
                "The 'queries', 'prompts' and 'labels' parameters of an OpenRLHF reward_func "
                f"must have equal lengths. Got {n}, {len(prompts)}, {len(labels)}."
            )
        rewards: list[float] = []
        logs: dict[str, list[float]] = {k: [] for k in self.extra_log_keys}
        episodes: list[dict[str, Any]] = []
        results = []
        for query, prompt, label in zip(queries, prompts, labels):
            if not isinstance(query, str) or not isinstance(prompt, str):
                raise ConfigError(
                    "The 'queries' and 'prompts' parameters of an OpenRLHF reward_func must hold "
                    f"strings. Got {type(query).__name__} and {type(prompt).__name__}."
                )
            completion, text = split_query(query, prompt, self.special_tokens)
            episode = {
                **kwargs,
                "query": query,
                "prompt": prompt,
                "completion": completion,
                "text": text,
                "ground_truth": label,
                "label": label,
            }
            result = self.stack.score(episode)
            episodes.append(episode)
            results.append(result)
            rewards.append(self.none_reward if result.total is None else float(result.total))
            for key, value in flat_record(self.stack, result, self.none_reward).items():
                logs[key].append(value)
        if self.log is not None:
            self.log.write(self.stack, episodes, results)
        return {
            "rewards": _as_tensor(rewards),
            "scores": _as_tensor(rewards),
            "extra_logs": {k: _as_tensor(v) for k, v in logs.items()},
        }


def _as_tensor(values: list[float]) -> Any:
    if have("torch"):
        import torch

        return torch.tensor(values, dtype=torch.float32)
    return list(values)


def reward_func(
    stack_or_fn: Target,
    *,
    name: str | None = None,
    none_reward: float = 0.0,
    special_tokens: Sequence[str] = DEFAULT_SPECIAL_TOKENS,
    log_path: str | os.PathLike[str] | None = None,
) -> OpenRLHFReward:
    """An OpenRLHF ``reward_func(queries, prompts, labels, **kw)`` scoring with ``stack_or_fn``.

    ``none_reward``: the reward OpenRLHF receives for an unscorable sample (``masked = 1``).
    ``special_tokens``: markers stripped from the end of the response for ``episode["text"]``.
    ``log_path``: a JSONL file that gets one record per scored sample, with the real ``None``
    (:mod:`rewardkit.integrations.samplelog`), which ``rewardkit calibrate --rewards`` reads;
    OpenRLHF calls the function from several threads, and the appends are serialised.
    """
    stack, name = resolve(stack_or_fn, name, "reward_func")
    if isinstance(special_tokens, str) or not all(isinstance(t, str) for t in special_tokens):
        raise ConfigError(
            "The 'special_tokens' parameter of reward_func must be a sequence of strings. "
            f"Got {special_tokens!r}."
        )
    return OpenRLHFReward(
        stack,
        name,
        check_fill(none_reward, "none_reward", "reward_func"),
        tuple(special_tokens),
        open_log(log_path, trainer="openrlhf", name=name, func="reward_func"),
    )
