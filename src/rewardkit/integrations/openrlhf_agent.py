"""An environment as an OpenRLHF multi-turn agent (``--train.agent_func_path agent.py``).

Usage::

    # agent.py
    from rewardkit.integrations.openrlhf import agent_executor
    AgentExecutor = agent_executor("fhir/anc-threshold-v1")

OpenRLHF's contract (0.11, ``openrlhf/utils/agent.py`` and ``trainer/ray/vllm_engine.py``): the
file is loaded by path and must hold ``AgentExecutor``, a subclass of ``AgentExecutorBase``,
built with no argument. ``MultiTurnAgentExecutor.execute`` makes one agent instance per
sample, calls ``await reset({"observation": prompt, "label": label})`` and then, after each
generation, ``await step({"observation_text", "action_text", "label", "sampling_params"})``,
which returns ``rewards`` (a tensor; OpenRLHF *sums* them over the steps), ``scores`` (the last
one is kept), ``environment_feedback`` (text appended to the context and tokenized), ``done``
and ``extra_logs``. Generation stops at ``done`` or when ``max_length`` is used up.

Here: the label is the task (``{"seed", "options"}`` or its JSON string); ``reset`` plays it
in a fresh environment and requires the task's prompt text inside the sample's prompt (the
dataset and the label must agree; :func:`task_rows` writes such rows). A turn's text, without
its trailing end markers, is read as JSON actions (``{"tool", "args"}`` / ``{"answer"}``, one
per object or line, as :func:`rewardkit.integrations.fhir.completion_actions`) and played in
order; the observations come back as the next user turn, rendered with the tokenizer's chat
template. The reward of a step is the change of the verifier's score of the episode so far,
so the sum OpenRLHF forms is the verdict's total whenever the loop stops (an answer, the
environment's limits, or OpenRLHF's length budget). A ``None`` score is sent as
``none_reward`` with ``extra_logs["masked"] = 1``.
"""

from __future__ import annotations

import contextvars
from collections.abc import Mapping, Sequence
from typing import Any

from .._json import canonical_json
from .._validation import Interval, validate_params
from ..errors import ConfigError
from ._common import flat_record
from .fhir import completion_actions
from .openrlhf import cut_at_turn_end, end_markers, strip_end_markers, turn_ends
from .session import EnvSession

__all__ = ["agent_executor", "feedback_text", "task_rows"]

_TOKENIZER: contextvars.ContextVar[Any] = contextvars.ContextVar("rewardkit_openrlhf_tokenizer")


def _squash(text: str) -> str:
    return "".join(text.split())


def feedback_text(tokenizer: Any, observations: Sequence[str]) -> str:
    """The text after the model's end-of-turn token that hands ``observations`` back and opens
    the next assistant turn, cut out of the tokenizer's own chat template (tool messages when
    the template renders them, else one user message)."""
    if tokenizer is None or getattr(tokenizer, "chat_template", None) is None:
        return "\n" + "\n".join(observations) + "\n"
    base = [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]
    eos = str(getattr(tokenizer, "eos_token", "") or "")
    head = tokenizer.apply_chat_template(base, tokenize=False)
    cut = head.rfind(eos) + len(eos) if eos and eos in head else len(head)
    for turn in (
        [{"role": "tool", "content": o} for o in observations],
        [{"role": "user", "content": "\n".join(observations)}],
    ):
        try:
            full = tokenizer.apply_chat_template(
                base + turn, tokenize=False, add_generation_prompt=True
            )
        except Exception:  # a template without a tool role: the user-turn fallback
            continue
        if full.startswith(head[:cut]) and all(o in full for o in observations):
            return str(full[cut:])
    raise ConfigError(
        "The tokenizer's chat template does not render observations after an assistant turn "
        "as a prefix-preserving continuation; pass a chat template that does."
    )


def task_rows(
    env_id: str, tasks: Sequence[Mapping[str, Any]], **env_kwargs: Any
) -> list[dict[str, str]]:
    """Dataset rows ``{"prompt", "label"}`` for OpenRLHF (``--data.input_key prompt
    --data.label_key label``): the task's prompt text and the task as JSON."""
    session = EnvSession(env_id, env_kwargs)
    return [{"prompt": session.start(dict(t)), "label": canonical_json(dict(t))} for t in tasks]


@validate_params(
    {
        "env_id": ["str"],
        "none_reward": [Interval(float, None, None)],
        "max_actions_per_turn": [Interval(int, 1, 10_000)],
    }
)
def agent_executor(
    env_id: str,
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    none_reward: float = 0.0,
    special_tokens: Sequence[str] = (),
    max_actions_per_turn: int = 8,
) -> type:
    """The ``AgentExecutor`` class OpenRLHF loads from an agent file (see the module)."""
    from openrlhf.utils.agent import AgentInstanceBase, MultiTurnAgentExecutor

    fill = float(none_reward)
    kwargs = dict(env_kwargs or {})
    EnvSession(env_id, kwargs)  # validates the id and kwargs now, not in a rollout worker

    class RewardkitAgentInstance(AgentInstanceBase):
        def __init__(self, *args: Any, **kw: Any) -> None:
            self.session = EnvSession(env_id, kwargs)
            self.env: Any = self.session.env
            self.stack: Any = getattr(self.env, "stack", None)
            self.tokenizer = _TOKENIZER.get(None)
            self.markers = end_markers(self.tokenizer, special_tokens)
            self.ends = turn_ends(self.tokenizer)
            self.so_far = 0.0

        async def reset(self, states: dict, **kw: Any) -> dict:
            prompt = states["observation"]
            task_prompt = self.session.start(states["label"], column="label")
            if _squash(task_prompt) not in _squash(prompt):
                raise ConfigError(
                    f"The sample's prompt does not contain the prompt of its label's task in "
                    f"{env_id} ({task_prompt[:60]!r}...); the dataset and the labels disagree."
                )
            self.so_far = 0.0
            return {"observation": prompt}

        def _score(self) -> tuple[float, dict[str, float]]:
            """The verifier's score of the episode so far (the verdict's once it ended)."""
            result = None if self.stack is None else self.stack.score(self.env.episode())
            if self.session.done:
                total = self.session.verdict().total
            elif result is None:  # no stack hook: the score is known only at the end
                return self.so_far, {}
            else:
                total = result.total
            score = fill if total is None else float(total)
            return score, ({} if result is None else flat_record(self.stack, result, fill))

        async def step(self, states: dict, **kw: Any) -> dict:
            import torch

            # actions written after the turn's end marker are not the model's turn
            turn = cut_at_turn_end(states["action_text"], self.ends)
            text = strip_end_markers(turn, self.markers)
            observations = []
            for k, action in enumerate(completion_actions(text)):
                if self.session.done or k >= max_actions_per_turn:
                    break
                observations.append(self.session.act(action))
            score, logs = self._score()
            reward, self.so_far = score - self.so_far, score
            done = self.session.done
            return {
                "rewards": torch.tensor([reward], dtype=torch.float64),  # .item(): exact
                "scores": torch.tensor([score], dtype=torch.float64),
                "environment_feedback": "" if done else feedback_text(self.tokenizer, observations),
                "done": done,
                "sampling_params": states.get("sampling_params"),
                "extra_logs": {k: torch.tensor([v]) for k, v in logs.items()},
            }

    class AgentExecutor(MultiTurnAgentExecutor):
        def __init__(self) -> None:
            super().__init__(RewardkitAgentInstance)

        async def execute(
            self,
            prompt: Any,
            label: Any,
            sampling_params: Any,
            max_length: int,
            hf_tokenizer: Any,
            llm_engine: Any,
            images: Any = None,
        ) -> Any:
            token = _TOKENIZER.set(hf_tokenizer)  # the instance renders feedback with it
            try:
                return await super().execute(
                    prompt, label, sampling_params, max_length, hf_tokenizer, llm_engine, images
                )
            finally:
                _TOKENIZER.reset(token)

    AgentExecutor.instance_cls = RewardkitAgentInstance
    return AgentExecutor
