"""The JSONL schema: users' trajectories, levels and gold; errors name file, line and field."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardkit.bioaudit import read_gold, read_levels, read_tasks, read_trajectories
from rewardkit.bioaudit.schema import read_golden
from rewardkit.errors import InputError

DEC = {"decision_id": "d1", "action": "qc_filter", "params": {}, "context": {}}


def write(tmp_path, *objs, name="f.jsonl"):
    p = tmp_path / name
    p.write_text("".join((o if isinstance(o, str) else json.dumps(o)) + "\n" for o in objs))
    return p


def test_valid_files(tmp_path):
    t = read_trajectories(
        write(
            tmp_path,
            {"trajectory_id": "a", "decisions": [DEC]},
            {"task_id": "b", "paradigm": "deg", "decisions": [], "reviews": []},
        )
    )
    assert [x.trajectory_id for x in t] == ["a", "b"]
    assert t[0].paradigm is None and t[0].reviews is None and t[1].reviews == ()
    lv = read_levels(
        write(
            tmp_path,
            {"trajectory_id": "a", "levels": [3, -1, 0], "reviews": ["final", None, "revoked"]},
        )
    )
    assert lv[0].levels == (3, -1, 0) and lv[0].reviews == ("final", None, "revoked")
    g = read_gold(
        write(tmp_path, {"task_id": "a", "n_gold_correct": 3, "n_gold_error": 1, "n_gold_edge": 0})
    )
    assert (g[0].n_gold_correct, g[0].n_gold_error, g[0].n_gold_edge) == (3, 1, 0)


GOOD_T = {"trajectory_id": "a", "decisions": [DEC]}


@pytest.mark.parametrize(
    "reader, line2, match",
    [
        (read_trajectories, {"decisions": [DEC]}, r"line 2, field 'trajectory_id': missing"),
        (
            read_trajectories,
            {"trajectory_id": "b", "decisions": [{**DEC, "action": 3}]},
            r"line 2, field 'decisions\[0\]\.action': expected a string",
        ),
        (
            read_trajectories,
            {"trajectory_id": "b", "decisions": [{"decision_id": "d"}]},
            r"line 2, field 'decisions\[0\]\.action': missing",
        ),
        (
            read_trajectories,
            {"trajectory_id": "b", "decisions": [DEC, DEC]},
            r"line 2, field 'decisions\[1\]\.decision_id': duplicate decision_id 'd1'",
        ),
        (
            read_trajectories,
            {"trajectory_id": "b", "decisions": [{**DEC, "note": 1}]},
            r"line 2, field 'decisions\[0\]\.note': unknown field",
        ),
        (
            read_trajectories,
            {"trajectory_id": "b", "decisions": "x"},
            r"line 2, field 'decisions': expected a list of decision objects",
        ),
        (
            read_trajectories,
            {"trajectory_id": "b", "decisions": [DEC], "reviews": ["ok"]},
            r"line 2, field 'reviews\[0\]': expected final, provisional, revoked or null",
        ),
        (
            read_trajectories,
            {"trajectory_id": "b", "decisions": [DEC], "reviews": []},
            r"line 2, field 'reviews': has 0 entries for 1 steps",
        ),
        (
            read_trajectories,
            {"trajectory_id": "a", "decisions": []},
            r"line 2, field 'trajectory_id': duplicate id 'a' \(line 1 has it too\)",
        ),
        (
            read_trajectories,
            {"trajectory_id": "b", "decisions": [], "colour": 1},
            r"line 2, field 'colour': unknown field",
        ),
        (read_trajectories, "{oops", r"line 2: not valid JSON"),
        (
            read_levels,
            {"trajectory_id": "b", "levels": [3, 4]},
            r"line 2, field 'levels\[1\]': expected an int in -1\.\.3; got 4",
        ),
        (
            read_levels,
            {"trajectory_id": "b", "levels": [True]},
            r"line 2, field 'levels\[0\]': expected an int in -1\.\.3; got True",
        ),
        (
            read_gold,
            {"task_id": "b", "n_gold_correct": -1, "n_gold_error": 0, "n_gold_edge": 0},
            r"line 2, field 'n_gold_correct': expected an int >= 0; got -1",
        ),
        (
            read_gold,
            {"task_id": "b", "n_gold_correct": 1, "n_gold_error": 0},
            r"line 2, field 'n_gold_edge': missing",
        ),
        (read_tasks, {"task_id": "b", "decisions": []}, r"line 2, field 'paradigm': missing"),
    ],
)
def test_malformed_line_names_file_line_and_field(tmp_path, reader, line2, match):
    first = {
        read_trajectories: GOOD_T,
        read_levels: {"trajectory_id": "a", "levels": [3]},
        read_gold: {"task_id": "a", "n_gold_correct": 1, "n_gold_error": 0, "n_gold_edge": 0},
        read_tasks: {
            "task_id": "a",
            "paradigm": "deg",
            "decisions": [],
            "reviews": None,
            "n_gold_correct": 1,
            "n_gold_error": 0,
            "n_gold_edge": 0,
        },
    }[reader]
    p = write(tmp_path, first, line2, name="user.jsonl")
    with pytest.raises(InputError, match=r"user\.jsonl, " + match):
        reader(p)


def test_golden_levels_must_match_decisions(tmp_path):
    p = write(
        tmp_path,
        {"trajectory_id": "g", "paradigm": "deg", "decisions": [DEC], "expected_levels": [3, 3]},
    )
    with pytest.raises(InputError, match=r"line 1, field 'expected_levels': has 2 levels for 1"):
        read_golden(p)


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match=r"nope\.jsonl: no such file"):
        read_trajectories(tmp_path / "nope.jsonl")


ident = st.text("abcdefgh-_0123", min_size=1, max_size=8)
jsonish = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-9, 9), st.text(max_size=5)),
    lambda inner: st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
decision = st.builds(
    lambda i, a, p, c: {"decision_id": i, "action": a, "params": p, "context": c},
    ident,
    ident,
    st.dictionaries(st.text(max_size=4), jsonish, max_size=3),
    st.dictionaries(st.text(max_size=4), jsonish, max_size=3),
)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.lists(decision, max_size=4, unique_by=lambda d: d["decision_id"]), min_size=1, max_size=4
    ),
    st.lists(st.sampled_from(["final", "provisional", "revoked", None]), max_size=4),
)
def test_roundtrip_property(tmp_path_factory, trajs, review_pool):
    lines = []
    for k, ds in enumerate(trajs):
        rec = {"trajectory_id": f"t{k}", "decisions": ds}
        if review_pool and len(ds) == len(review_pool):
            rec["reviews"] = review_pool
        lines.append(rec)
    p = write(tmp_path_factory.mktemp("rt"), *lines)
    got = read_trajectories(p)
    assert [list(t.decisions) for t in got] == trajs
    assert [t.reviews for t in got] == [
        tuple(r["reviews"]) if "reviews" in r else None for r in lines
    ]
