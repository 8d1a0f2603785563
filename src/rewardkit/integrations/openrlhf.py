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
fixed ``extra_logs`` keys (plus ``prompt_not_found``). The episode a stack sees: ``query``,
``prompt``, ``completion`` (the query after the prompt), ``text`` (the answer text of the
completion: up to its first turn-end marker — :data:`TURN_ENDS` and the tokenizer's end and
pad tokens; a turn the model goes on to write after it is not its answer — without the
trailing end markers: pass ``tokenizer=`` so that your model's own special tokens are
stripped, besides :data:`DEFAULT_SPECIAL_TOKENS`), ``ground_truth`` and
``label`` (the label), and any other keyword.

The prompt is located at the start of the query, exactly or up to whitespace (a tokenizer's
clean-up of spaces changes the decoded prompt). When it cannot be found there, the sample is
not scored — scoring it would grade the prompt as part of the response —: it gets
``none_reward`` with ``masked = 1`` and ``prompt_not_found = 1`` in ``extra_logs``.

The multi-turn path (an ``AgentExecutor`` over an environment) is :func:`agent_executor`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from .._completion import completion_text
from .._optional import have
from .._validation import Interval, validate_params
from ..errors import ConfigError
from ..stack import RewardStack
from ._common import (
    Target,
    flat_record,
    record_keys,
    resolve,
    warn_if_fill_outranks,
)
from .samplelog import SampleLog, open_log

__all__ = [
    "DEFAULT_SPECIAL_TOKENS",
    "OpenRLHFReward",
    "TURN_ENDS",
    "agent_executor",
    "cut_at_turn_end",
    "end_markers",
    "reward_func",
    "split_query",
    "strip_end_markers",
    "turn_ends",
]

# End-of-turn / end-of-text markers of the common chat templates: Qwen / ChatML, Llama 3,
# Llama 2 / Mistral, Gemma, Phi-3, GPT-OSS (harmony), DeepSeek (full-width bars and U+2581).
DEFAULT_SPECIAL_TOKENS = (
    "<|im_end|>",
    "<|endoftext|>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<|end_of_text|>",
    "</s>",
    "<end_of_turn>",
    "<eos>",
    "<|end|>",
    "<|return|>",
    "<\uff5cend\u2581of\u2581sentence\uff5c>",
    "<pad>",
)
PROMPT_NOT_FOUND = "prompt_not_found"
# The markers that end the model's turn: what it wrote after the first of them is not its
# answer (a chat deployment stops there), so the scored text ends there. ``</s>``, ``<eos>``
# and ``<pad>`` are not in this list (``</s>`` is also HTML); the tokenizer's own end and pad
# tokens are added when one is given (:func:`turn_ends`).
TURN_ENDS = (
    "<|im_end|>",
    "<|endoftext|>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<|end_of_text|>",
    "<end_of_turn>",
    "<|end|>",
    "<|return|>",
    "<\uff5cend\u2581of\u2581sentence\uff5c>",
)


def turn_ends(tokenizer: Any = None, extra: Sequence[str] = ()) -> tuple[str, ...]:
    """The markers the answer text is cut at: :data:`TURN_ENDS`, ``extra`` and the
    tokenizer's ``eos_token`` and ``pad_token`` (the ones generation stops or pads with)."""
    found = set(TURN_ENDS) | set(extra)
    for attr in ("eos_token", "pad_token"):
        tok = getattr(tokenizer, attr, None) if tokenizer is not None else None
        if isinstance(tok, str) and tok:
            found.add(tok)
    return tuple(sorted(found, key=lambda t: (-len(t), t)))


def cut_at_turn_end(text: str, ends: Sequence[str]) -> str:
    """``text`` up to the first turn-end marker (all of it when there is none)."""
    at = min((i for i in (text.find(t) for t in ends if t) if i >= 0), default=len(text))
    return text[:at]


def end_markers(tokenizer: Any = None, extra: Sequence[str] = ()) -> tuple[str, ...]:
    """The markers stripped from the end of a response: the tokenizer's special tokens (its
    ``all_special_tokens`` and every added token flagged special) when one is given, plus
    :data:`DEFAULT_SPECIAL_TOKENS` and ``extra``; longest first."""
    found: set[str] = set(DEFAULT_SPECIAL_TOKENS) | set(extra)
    if tokenizer is not None:
        found |= {t for t in getattr(tokenizer, "all_special_tokens", []) if isinstance(t, str)}
        added = getattr(tokenizer, "added_tokens_decoder", {}) or {}
        found |= {str(t.content) for t in added.values() if getattr(t, "special", False)}
    return tuple(sorted((t for t in found if t), key=lambda t: (-len(t), t)))


def strip_end_markers(text: str, markers: Sequence[str]) -> str:
    """``text`` without the trailing run of end markers (and the whitespace between them)."""
    text = text.rstrip()
    stripped = True
    while stripped:
        stripped = False
        for tok in markers:
            if tok and text.endswith(tok):
                text = text[: -len(tok)].rstrip()
                stripped = True
    return text


BEGIN_MARKERS = (
    "<s>",
    "<|begin_of_text|>",
    "<bos>",
    "<|startoftext|>",
    "<\uff5cbegin\u2581of\u2581sentence\uff5c>",
)


def _prompt_end(query: str, prompt: str, markers: Sequence[str] = ()) -> int | None:
    """Where the prompt ends in ``query``: an exact prefix; else, after leading begin-of-text
    or special tokens the prompt does not have, the prompt's characters in order with only
    whitespace differences (a tokenizer's clean-up of spaces); else None."""
    if query.startswith(prompt):
        return len(prompt)
    i, skipped = 0, True
    while skipped:  # leading BOS / special tokens that were decoded but are not in the prompt
        skipped = False
        while i < len(query) and query[i].isspace():
            i += 1
        for tok in (*BEGIN_MARKERS, *markers):
            if tok and query.startswith(tok, i) and not prompt.lstrip().startswith(tok):
                i += len(tok)
                skipped = True
    for ch in prompt:
        if ch.isspace():
            continue
        while i < len(query) and query[i].isspace():
            i += 1
        if i >= len(query) or query[i] != ch:
            return None
        i += 1
    if prompt[-1:].isspace():  # the prompt's trailing whitespace, however it was decoded
        while i < len(query) and query[i].isspace():
            i += 1
    return i


def split_query(
    query: str,
    prompt: str,
    special_tokens: Sequence[str],
    ends: Sequence[str] = TURN_ENDS,
) -> tuple[str, str] | None:
    """(completion, text): the query after the prompt, and the answer text of that — up to
    the first turn-end marker of ``ends`` (a turn the model wrote for the user or itself after
    it is not its answer), without the trailing end markers; None when the prompt cannot be
    found at the start of the query (the sample is then marked, never scored with the prompt
    inside the response)."""
    at = _prompt_end(query, prompt, special_tokens)
    if at is None:
        return None
    completion = query[at:]
    text = strip_end_markers(cut_at_turn_end(completion, ends), special_tokens)
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
        ends: tuple[str, ...] = TURN_ENDS,
    ) -> None:
        self.ends = ends
        self.stack = stack
        self.log = log  # one JSONL record per scored sample (log_path=)
        self.__name__ = name
        self.none_reward = none_reward
        self.special_tokens = special_tokens
        self.extra_log_keys: tuple[str, ...] = (PROMPT_NOT_FOUND, *record_keys(stack))

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
            split = split_query(query, prompt, self.special_tokens, self.ends)
            if split is None:  # the prompt is not where it must be: mark, do not score
                rewards.append(self.none_reward)
                for key in self.extra_log_keys:
                    logs[key].append(_marked_value(key, self.none_reward))
                continue
            completion, text = split
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
            logs[PROMPT_NOT_FOUND].append(0.0)
            for key, value in flat_record(self.stack, result, self.none_reward).items():
                logs[key].append(value)
        if self.log is not None:
            self.log.write(self.stack, episodes, results)
        return {
            "rewards": _as_tensor(rewards),
            "scores": _as_tensor(rewards),
            "extra_logs": {k: _as_tensor(v) for k, v in logs.items()},
        }


def _marked_value(key: str, none_reward: float) -> float:
    """The record of a sample that was not scored: masked everywhere, no gate judged."""
    if key in (PROMPT_NOT_FOUND, "masked") or key.startswith("masked/"):
        return 1.0
    if key.startswith("reward/"):
        return none_reward
    return 0.0


def _as_tensor(values: list[float]) -> Any:
    if have("torch"):
        import torch

        return torch.tensor(values, dtype=torch.float32)
    return list(values)


@validate_params({"none_reward": [Interval(float, None, None)]})
def reward_func(
    stack_or_fn: Target,
    *,
    name: str | None = None,
    none_reward: float = 0.0,
    special_tokens: Sequence[str] = (),
    tokenizer: Any = None,
    log_path: str | os.PathLike[str] | None = None,
) -> OpenRLHFReward:
    """An OpenRLHF ``reward_func(queries, prompts, labels, **kw)`` scoring with ``stack_or_fn``.

    ``none_reward``: the reward OpenRLHF receives for an unscorable sample (``masked = 1``).
    ``tokenizer``: the policy's tokenizer (``AutoTokenizer.from_pretrained`` of the model you
    train); its special tokens are stripped from the end of the response, with
    :data:`DEFAULT_SPECIAL_TOKENS` and ``special_tokens``.
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
    fill = float(none_reward)
    warn_if_fill_outranks(stack, fill, "none_reward", "reward_func")
    return OpenRLHFReward(
        stack,
        name,
        fill,
        end_markers(tokenizer, special_tokens),
        open_log(log_path, trainer="openrlhf", name=name, func="reward_func"),
        turn_ends(tokenizer),
    )


def agent_executor(
    env_id: str,
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    none_reward: float = 0.0,
    special_tokens: Sequence[str] = (),
    max_actions_per_turn: int = 8,
) -> type:
    """An ``AgentExecutor`` class for OpenRLHF's multi-turn path (``--train.agent_func_path``):
    each sample plays the task named by its label in ``env_id``; see
    :mod:`rewardkit.integrations.openrlhf_agent`."""
    from .openrlhf_agent import agent_executor as _make

    return _make(
        env_id,
        env_kwargs=env_kwargs,
        none_reward=none_reward,
        special_tokens=special_tokens,
        max_actions_per_turn=max_actions_per_turn,
    )
