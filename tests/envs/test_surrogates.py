"""Text with a lone surrogate (``"\\ud800"``: a Python str that is not Unicode text UTF-8 can
hold) anywhere in an action, by class, in every environment family: an error observation, never
an exception, and the snapshot is written and replays to the live verdict. Before the fix
(``recorded_action`` kept such text) ``snapshot()`` raised UnicodeEncodeError for every case
below, so an episode could not be logged or replayed."""

from __future__ import annotations

import pytest

from rewardkit.envs import Env, make

SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff", "\ud83d"]  # high, low, half an emoji


def _cases(ref_answer):
    out = []
    for s in SURROGATES:
        out += [
            ("text_action", s),
            ("text_in_json_text", '{"tool": "get_patient", "args": {"id": "p-' + s + '"}}'),
            ("tool_name", {"tool": "get" + s, "args": {}}),
            ("arg_value", {"tool": "get_patient", "args": {"id": s}}),
            ("arg_key", {"tool": "get_patient", "args": {s: "p-1"}}),
            ("answer_note", {"answer": {**ref_answer, "note": "ok " + s}}),
            ("answer_status", {"answer": {**ref_answer, "status": s}}),
            ("answer_evidence", {"answer": {**ref_answer, "evidence": [s]}}),
            ("nested_list", {"answer": {**ref_answer, "evidence": [["x", s]]}}),
        ]
    return out


@pytest.mark.parametrize(
    "env_id", ["fhir/anc-threshold-v1", "fhir/potassium-latest-v1", "sql/revenue-v1"]
)
def test_lone_surrogates_give_an_error_and_a_replayable_snapshot(env_id):
    env = make(env_id)
    env.reset(seed=5)
    ref = env.reference_actions()
    cases = _cases(ref[-1]["answer"])
    assert len(cases) == 45
    for kind, action in cases:
        env.reset(seed=5)
        for a in ref[:-1]:
            env.step(a)
        obs, _r, term, _trunc, _info = env.step(action)
        assert "error" in obs and not term, kind
        env.step(ref[-1])
        live = env.finalize()
        snap = env.snapshot()  # raised UnicodeEncodeError before the fix
        snap.decode("utf-8")
        assert Env.replay(snap).to_dict() == live.to_dict(), kind
        if env_id.startswith("fhir/"):
            assert live.components["format"] == 0.75, kind  # the malformed action is penalised


def test_escaped_surrogates_inside_json_text_stay_text():
    """A JSON escape (``"\\\\ud800"`` as six ASCII characters) is valid text: recorded as is."""
    env = make("fhir/anc-threshold-v1")
    env.reset(seed=5)
    ref = env.reference_actions()
    for a in ref[:-1]:
        env.step(a)
    env.step('{"answer": {"status": "met", "note": "\\ud800"}}')
    live = env.finalize()
    assert Env.replay(env.snapshot()).to_dict() == live.to_dict()
