"""The answer text of one completion, the same for every adapter (TRL, verl, OpenRLHF, the
autorater's reward functions).

    completion_text("The answer is 4")                                   # 'The answer is 4'
    completion_text([{"role": "assistant", "content": "4"}])             # '4'
    completion_text([{"role": "assistant", "content": "", "tool_calls": [...]},
                     {"role": "tool", "content": "<probability>0.99</probability>"}])  # ''

A plain string is the answer as it is. A chat completion (a list of message dicts, as TRL passes
conversational and multi-turn completions) answers with its **final message, when that message is
the assistant's and requests no tool**; its text parts are joined (multimodal content blocks). A
completion that ends in a tool call or a tool result was cut before the model answered, so its
answer is ``""`` (no answer). Why not all assistant turns joined: an earlier turn is reasoning or a
tool-call preamble, not the answer, and joining would let a parser find in turn 1 an answer the
final turn never gave; why not simply the last message: when the trainer stops the loop after a
tool result, the last message is the *tool's* text, and a reward would score environment output
as the model's answer. A message without a ``role`` counts as the assistant's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["completion_text"]


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):  # multimodal content blocks: keep the text ones
        return "".join(
            b["text"] for b in content if isinstance(b, Mapping) and isinstance(b.get("text"), str)
        )
    return ""  # None (a pure tool call) or anything that is not text


def completion_text(completion: str | Sequence[Mapping[str, Any]]) -> str:
    """The answer text of ``completion`` (a string, or a list of chat messages); see the module."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and not isinstance(completion, (bytes, bytearray)):
        if not completion:
            return ""
        last = completion[-1]
        if not isinstance(last, Mapping):
            raise TypeError(
                "a chat completion is a list of message dicts; its last item is a "
                f"{type(last).__name__}"
            )
        if last.get("role", "assistant") != "assistant" or last.get("tool_calls"):
            return ""  # cut after a tool call or a tool result: the model has not answered
        return _content_text(last.get("content"))
    raise TypeError(
        f"a completion is a string or a list of chat messages; got {type(completion).__name__}"
    )
