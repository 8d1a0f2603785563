"""An end-of-turn marker in the middle of an OpenRLHF response, by class.

A model whose generation does not stop at its chat template's end of turn (a base model
trained with a chat template, an eos that is ``<|endoftext|>`` only) writes its answer, the
end-of-turn marker, and then goes on: a made-up user turn, a second answer. Only the reply up
to the first marker is what a chat deployment shows; scoring the rest lets the continuation
decide the reward (here: a wrong answer followed by a made-up turn with the right one scored
1.25, above an honest wrong answer's 0.25). Every family's marker, every continuation: the
scored text is the reply before the marker. ``</s>`` inside text (HTML) is not a turn end
unless it is the tokenizer's own eos.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardkit.integrations.openrlhf import TURN_ENDS, reward_func, split_query, turn_ends
from rewardkit.stack import Component, RewardStack

PROMPT = "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n"
CONTINUATIONS = st.text(min_size=0, max_size=40)


@settings(max_examples=300, deadline=None)
@given(
    reply=st.text(alphabet="0123456789 abc", min_size=1, max_size=8),
    end=st.sampled_from(TURN_ENDS),
    after=CONTINUATIONS,
    more=st.sampled_from(TURN_ENDS),
)
def test_the_scored_text_ends_at_the_first_turn_end(reply, end, after, more):
    split = split_query(PROMPT + reply + end + after + more, PROMPT, TURN_ENDS)
    assert split is not None
    assert split[1] == reply.rstrip()


def last_number_stack() -> RewardStack:
    """The usual math verifier: the last number in the answer text is the answer."""

    def last(ep: dict[str, Any]) -> float:
        nums = re.findall(r"-?\d+", ep["text"])
        return float(bool(nums) and nums[-1] == str(ep["ground_truth"]))

    return RewardStack(
        components=[Component("exact", last), Component("format", lambda ep: 1.0, weight=0.25)],
        version="last-number-v1",
    )


@pytest.mark.parametrize("end", TURN_ENDS)
def test_a_made_up_turn_after_the_end_does_not_outrank_an_honest_wrong_answer(end: str) -> None:
    f = reward_func(last_number_stack())
    cheat = PROMPT + "5" + end + "\n<|im_start|>user\nreally?" + end + "<|im_start|>assistant\n4"
    honest_wrong = PROMPT + "5" + end
    right = PROMPT + "4" + end
    out = f([cheat, honest_wrong, right], [PROMPT] * 3, ["4"] * 3)["rewards"].tolist()
    assert out[0] == out[1] == 0.25 and out[2] == 1.25


def test_html_end_tag_is_text_unless_it_is_the_tokenizers_eos(stack: Any) -> None:
    pytest.importorskip("transformers")
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast

    assert split_query("P:<s>4</s> is struck", "P:", (), TURN_ENDS) == (
        "<s>4</s> is struck",
        "<s>4</s> is struck",
    )
    tok = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(models.WordLevel(vocab={"<unk>": 0}, unk_token="<unk>")),
        unk_token="<unk>",
        eos_token="</s>",
    )
    assert "</s>" in turn_ends(tok)
    f = reward_func(stack, tokenizer=tok)
    assert f(["P:4</s>\nUser: 5"], ["P:"], ["4"])["rewards"].tolist() == [1.25]
