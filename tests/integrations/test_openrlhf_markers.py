"""OpenRLHF: end markers and lost prompts, attacked by class (generated instances).

OpenRLHF decodes the query *with* special tokens, so a response ends in its model family's end
marker(s). A marker left on the answer turns an exact match into a miss (1.25 → 0.25 with the
shared test stack). And when the decoded query does not start with the prompt (a tokenizer's
clean-up of spaces), a naive split scores the prompt as the response. Defences: markers from the
tokenizer's own special tokens plus every family's, stripped as a trailing run; the prompt
located exactly or up to whitespace, else the sample is marked, not scored.
Removing either defence fails these tests: with ``special_tokens`` empty and no tokenizer,
``end_markers`` returns only the defaults and the custom-marker case fails; with the old
"first occurrence, else the whole query" split the prompt-absent cases score the prompt.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardkit.integrations.openrlhf import (
    DEFAULT_SPECIAL_TOKENS,
    end_markers,
    reward_func,
    split_query,
    strip_end_markers,
)

torch = pytest.importorskip("torch", reason="OpenRLHF passes torch tensors")

FAMILIES = (
    "<end_of_turn>",  # Gemma
    "<eos>",  # Gemma
    "<|end|>",  # Phi-3
    "<|return|>",  # GPT-OSS
    "<\uff5cend\u2581of\u2581sentence\uff5c>",  # DeepSeek
    "<|im_end|>",  # Qwen / ChatML
    "<|eot_id|>",  # Llama 3
    "</s>",  # Llama 2 / Mistral
)
ANSWERS = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="<>|"), min_size=1, max_size=12
).filter(lambda s: s.strip() != "")


@settings(max_examples=200, deadline=None)
@given(
    answer=ANSWERS,
    tail=st.lists(st.sampled_from(FAMILIES), min_size=1, max_size=3),
    gap=st.sampled_from(["", " ", "\n", "\n\n"]),
)
def test_every_family_marker_run_is_stripped(answer: str, tail: list[str], gap: str) -> None:
    response = answer + gap.join(tail) + gap
    assert strip_end_markers(response, end_markers()) == answer.rstrip()


def test_the_tokenizers_own_special_tokens_are_stripped() -> None:
    pytest.importorskip("transformers")
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(models.WordLevel(vocab={"<unk>": 0}, unk_token="<unk>")),
        unk_token="<unk>",
        eos_token="<|custom_stop|>",
        additional_special_tokens=["<|turn_over|>"],
    )
    markers = end_markers(tok)
    assert {"<|custom_stop|>", "<|turn_over|>"} <= set(markers)
    assert strip_end_markers("4<|turn_over|><|custom_stop|>", markers) == "4"
    # without the tokenizer these markers are unknown: the defence is the tokenizer
    assert strip_end_markers("4<|turn_over|>", end_markers()) == "4<|turn_over|>"


@pytest.mark.parametrize("marker", FAMILIES)
def test_the_issue_case_scores_1_25_not_0_25(stack: Any, marker: str) -> None:
    f = reward_func(stack)
    prompt = "<start_of_turn>user\n2+2?<end_of_turn>\n<start_of_turn>model\n"
    out = f([prompt + "4" + marker], [prompt], ["4"])
    assert out["rewards"].tolist() == [1.25]


SPACED = st.sampled_from([" ,", " .", " ?", " !", " 's", " n't", "  "])


@settings(max_examples=200, deadline=None)
@given(
    words=st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=6), min_size=1, max_size=6),
    seps=st.lists(SPACED, min_size=6, max_size=6),
    answer=st.text(alphabet="0123456789", min_size=1, max_size=4),
)
def test_a_prompt_changed_only_in_whitespace_is_found(
    words: list[str], seps: list[str], answer: str
) -> None:
    prompt = "".join(w + s for w, s in zip(words, seps))
    decoded = prompt.replace(" ,", ",").replace(" .", ".").replace(" 's", "'s")  # clean-up
    split = split_query(decoded + answer + "<|im_end|>", prompt, DEFAULT_SPECIAL_TOKENS)
    assert split is not None and split[1] == answer


@settings(max_examples=100, deadline=None)
@given(prompt=st.text(alphabet="abcdefgh?:", min_size=3, max_size=20), answer=st.text("0123"))
def test_a_prompt_not_in_the_query_marks_the_sample(prompt: str, answer: str) -> None:
    from .conftest import make_stack

    query = "Z" + prompt[1:] + answer  # the prompt's first character is gone
    f = reward_func(make_stack(), none_reward=-7.0)
    out = f([query], [prompt], [answer])
    assert out["rewards"].tolist() == [-7.0]
    logs = {k: v.tolist()[0] for k, v in out["extra_logs"].items()}
    assert logs["prompt_not_found"] == 1.0 and logs["masked"] == 1.0
    assert set(logs) == set(f.extra_log_keys)  # the same keys as a scored sample
