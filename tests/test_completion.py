"""One answer text for every adapter: the final assistant message of a chat completion.

Attack class: text the model did not give as its answer — a tool result, an earlier turn, a
user message — must never be scored as the answer. Generated chats of every shape check the
rule; the TRL adapter, the autorater's reward functions, verl and OpenRLHF are checked to read
the same text through the one function.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rewardkit._completion import completion_text
from rewardkit.autorater import brier_reward_func

ROLES = ("assistant", "tool", "user", "system")
MARK = "<probability>0.99</probability>"  # a well-formed answer planted where it must not count

text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
content = st.one_of(
    st.none(),
    text,
    st.lists(
        st.one_of(
            st.fixed_dictionaries({"type": st.just("text"), "text": text}),
            st.fixed_dictionaries({"type": st.just("image"), "image": st.just("img")}),
        ),
        max_size=3,
    ),
)
message = st.fixed_dictionaries(
    {"role": st.sampled_from(ROLES), "content": content},
    optional={"tool_calls": st.sampled_from([[], [{"type": "function"}]])},
)


def _expected(chat: list[dict[str, Any]]) -> str:
    if not chat:
        return ""
    last = chat[-1]
    if last["role"] != "assistant" or last.get("tool_calls"):
        return ""
    c = last["content"]
    if c is None:
        return ""
    if isinstance(c, str):
        return c
    return "".join(b["text"] for b in c if b.get("type") == "text")


@given(st.lists(message, max_size=6))
def test_the_answer_is_the_final_assistant_message(chat: list[dict[str, Any]]) -> None:
    assert completion_text(chat) == _expected(chat)


@given(st.lists(message, max_size=5), st.sampled_from(("tool", "user", "system")))
def test_text_of_another_role_is_never_the_answer(chat: list[dict[str, Any]], role: str) -> None:
    """Whatever came before, a completion that ends on a non-assistant message has no answer."""
    assert completion_text([*chat, {"role": role, "content": MARK}]) == ""


@given(st.lists(message, min_size=1, max_size=5), text)
def test_an_earlier_turn_never_answers_for_the_final_one(
    chat: list[dict[str, Any]], final: str
) -> None:
    turns = [{"role": "assistant", "content": MARK}, *chat, {"role": "assistant", "content": final}]
    assert completion_text(turns) == final


def test_plain_strings_and_empty_chats() -> None:
    assert completion_text("x") == "x"
    assert completion_text([]) == ""
    assert completion_text([{"content": "no role is the assistant's"}]) == (
        "no role is the assistant's"
    )
    assert completion_text([{"role": "assistant", "content": None}]) == ""


NOT_COMPLETIONS = [None, 3, b"bytes", {"role": "assistant"}, ["a string, not a dict"]]


@pytest.mark.parametrize("bad", NOT_COMPLETIONS)
def test_what_is_not_a_completion_is_a_type_error(bad: Any) -> None:
    with pytest.raises(TypeError, match=r"a (chat )?completion is a (string|list)"):
        completion_text(bad)


# What a multi-turn TRL completion looks like when the loop stops after a tool result.
CUT_AFTER_TOOL = [
    {"role": "assistant", "content": "", "tool_calls": [{"type": "function"}]},
    {"role": "tool", "name": "lookup", "content": MARK},
]
ANSWERED = [*CUT_AFTER_TOOL, {"role": "assistant", "content": "<probability>0.7</probability>"}]


def test_the_autorater_reward_function_does_not_score_tool_output() -> None:
    kw: dict[str, Any] = {"prompts": ["p", "p"], "completion_ids": [[1], [1]]}
    out = brier_reward_func(completions=[CUT_AFTER_TOOL, ANSWERED], label=[1, 1], **kw)
    assert out[0] == 0.0  # no answer: a parse failure, not 1 − (1 − 0.99)²
    assert out[1] == pytest.approx(1 - 0.3**2)


def test_every_adapter_reads_the_same_text() -> None:
    from rewardkit.autorater import reward_funcs
    from rewardkit.integrations import _common, openrlhf, trl
    from rewardkit.integrations import verl_score as verl  # the module verl.py re-exports

    for module in (trl, verl, openrlhf, reward_funcs):
        assert module.completion_text is completion_text, module.__name__
    assert not hasattr(_common, "completion_text")
    from rewardkit.stack import Component, RewardStack

    seen: list[str] = []
    stack = RewardStack(components=[Component("t", lambda ep: seen.append(ep["text"]) or 1.0)])
    f = trl.reward_func(stack, name="t")
    f(prompts=["p", "p"], completions=[CUT_AFTER_TOOL, ANSWERED], completion_ids=[[1], [1]])
    assert seen == ["", "<probability>0.7</probability>"]
