"""Attacks on the audit of a user's own reward, by class: a reward module that prints, a reward
that scores nothing, fields a reward must (and must not) see, files a JSONL exporter really
writes, user modules named like the standard library, factories returning the wrong kind of
object, and calibrations that cannot judge the reward."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardkit.audit.agreement import calibrate_rewards
from rewardkit.audit.data import RewardRecord, read_golden, read_items, read_spike_pairs
from rewardkit.audit.userreward import load_function, load_reward
from rewardkit.audit.validate_reward import validate_reward
from rewardkit.cli import main
from rewardkit.errors import InputError

ITEMS = [
    {"id": f"i{k}", "completion": "x" * k, "expected": {"n": k % 3}, "gold": k % 3 == 0}
    for k in range(12)
]
SCORE = "def score(item):\n    return (len(item['completion']) % 3) / 2\n"


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A user's folder as working directory; the test's modules are forgotten afterwards."""
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in ITEMS))
    monkeypatch.chdir(tmp_path)
    before = set(sys.modules)
    yield tmp_path
    for m in set(sys.modules) - before:
        if m.startswith("user_"):
            del sys.modules[m]


def _module(workdir, name, source):
    (workdir / f"{name}.py").write_text(source)
    return name


# --- a reward module that prints is still deterministic, and --json stays JSON -------------

PRINTERS = {
    "at_import": "print('loading the reward')\n" + SCORE + "def make():\n    return score\n",
    "in_factory": SCORE + "def make():\n    print('made')\n    return score\n",
    "per_item": "def make():\n    def r(item):\n        print('scoring', item['completion'])\n"
    "        return (len(item['completion']) % 3) / 2\n    return r\n",
    "fd_1": "import os\nos.write(1, b'C-level noise\\n')\n"
    + SCORE
    + "def make():\n    return score\n",
    "stack": "print('hello')\nfrom rewardkit import Component, RewardStack\n"
    + SCORE
    + "def loud(item):\n    print('component')\n    return score(item)\n"
    "def make():\n    return RewardStack(components=[Component('a', loud, range=(0, 1)),"
    " Component('b', lambda i: float('x' in i['completion']), weight=0.5, range=(0, 1))])\n",
}


@pytest.mark.parametrize("kind", sorted(PRINTERS))
def test_a_reward_that_prints_is_deterministic_and_json_output_stays_json(workdir, capsys, kind):
    name = _module(workdir, f"user_print_{kind}", PRINTERS[kind])
    code = main(
        [
            "validate",
            "--reward",
            f"{name}:make",
            "--items",
            "items.jsonl",
            "--range",
            "0:1.5",
            "--json",
            "--out",
            str(workdir / "out"),
        ]
    )
    out = capsys.readouterr().out
    gates = json.loads(out)["gates"]  # nothing the reward printed is in stdout
    assert gates["determinism"] == "pass" and gates["range"] == "pass", gates
    assert code == 4  # spike-in and golden not run; ablations too for a plain function


# --- a reward that cannot score anything fails the range gate ------------------------------

NOTHING = {
    "plain_none": "def make():\n    def r(item):\n        return None\n    r.range = (0, 1)\n"
    "    return r\n",
    "stack_required_none": "from rewardkit import Component, RewardStack\n"
    "def make():\n    return RewardStack(components=[Component('a', lambda i: None, "
    "required=True, range=(0, 1))])\n",
}


@pytest.mark.parametrize("kind", sorted(NOTHING))
def test_range_fails_when_the_reward_scores_no_item(workdir, kind):
    r = load_reward(f"{_module(workdir, f'user_none_{kind}', NOTHING[kind])}:make")
    g = validate_reward(r, items=read_items("items.jsonl")).gate("range")
    assert g.status == "fail" and "scored none of the 12 items" in g.summary


def test_range_still_passes_when_some_items_cannot_be_scored(workdir):
    src = (
        "def make():\n    def r(item):\n        n = len(item['completion'])\n"
        "        return None if n < 3 else 0.5 + (n % 2) / 4\n    r.range = (0, 1)\n    return r\n"
    )
    r = load_reward(f"{_module(workdir, 'user_some_none', src)}:make")
    g = validate_reward(r, items=read_items("items.jsonl")).gate("range")
    assert g.status == "pass" and g.evidence["n_none"] == 3


# --- what a reward sees ---------------------------------------------------------------------


@given(
    name=st.sampled_from(["expected", "expected_components", "answer", "label", "target"]),
    value=st.one_of(
        st.integers(),
        st.text(max_size=5),
        st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    ),
)
@settings(max_examples=40, deadline=None)
def test_an_item_field_named_like_a_golden_answer_reaches_the_reward(tmp_path_factory, name, value):
    d = tmp_path_factory.mktemp("f")
    (d / "items.jsonl").write_text(json.dumps({"id": "a", name: value, "gold": 1}) + "\n")
    (d / "spike.jsonl").write_text(
        json.dumps({"id": "s", "clean": {name: value, "gold": 1}, "corrupted": {name: value}})
        + "\n"
    )
    (item,) = read_items(d / "items.jsonl")
    assert item.reward_input() == {"id": "a", name: value}  # gold hidden, nothing else
    (pair,) = read_spike_pairs(d / "spike.jsonl")
    assert dict(pair.clean) == {name: value} and dict(pair.corrupted) == {name: value}


def test_golden_items_hide_their_answers_and_gold(tmp_path):
    p = tmp_path / "g.jsonl"
    p.write_text(
        json.dumps({"id": "a", "x": 1, "gold": 1, "expected": 0.5, "expected_components": {}})
        + "\n"
    )
    (g,) = read_golden(p)
    assert g.item.reward_input() == {"id": "a", "x": 1}


def test_a_reward_reading_its_own_expected_field_is_audited(workdir):
    src = (
        "def make():\n    def r(item):\n        return float(item['expected']['n'] == "
        "len(item['completion']) % 3) * 0.5 + len(item['completion']) / 24\n"
        "    r.range = (0, 1)\n    return r\n"
    )
    r = load_reward(f"{_module(workdir, 'user_expected', src)}:make")
    g = validate_reward(r, items=read_items("items.jsonl")).gate("range")
    assert g.status == "pass", g.summary  # before: KeyError 'expected' on every item


# --- JSONL as exporters write it ------------------------------------------------------------

SEPARATORS = ["\u2028", "\u2029", "\x85", "\x0c", "\x0b", "\x1c", "\x1d", "\x1e"]


@given(
    text=st.text(
        alphabet=st.one_of(st.sampled_from(SEPARATORS), st.characters(codec="utf-8")),
        max_size=20,
    ),
    crlf=st.booleans(),
    bom=st.booleans(),
    blank=st.booleans(),
)
@settings(max_examples=80, deadline=None)
def test_any_json_string_survives_the_jsonl_reader(tmp_path_factory, text, crlf, bom, blank):
    d = tmp_path_factory.mktemp("j")
    records = [
        {"id": "a", "completion": text, "gold": 1},
        {"id": "b", "completion": "x", "gold": 0},
    ]
    nl = "\r\n" if crlf else "\n"
    body = (nl if blank else "").join(json.dumps(r, ensure_ascii=False) + nl for r in records)
    (d / "items.jsonl").write_bytes((b"\xef\xbb\xbf" if bom else b"") + body.encode("utf-8"))
    items = read_items(d / "items.jsonl")
    assert [i.reward_input()["completion"] for i in items] == [text, "x"]
    assert [i.source[1] for i in items] == ([1, 3] if blank else [1, 2])


@pytest.mark.parametrize("depth", [1_500, 100_000])
def test_deep_nesting_is_bad_input_not_a_traceback(workdir, capsys, depth):
    (workdir / "deep.jsonl").write_text('{"id": "a", "x": ' + "[" * depth + "]" * depth + "}\n")
    with pytest.raises(InputError, match=r"deep.jsonl, line 1: .*nested (more|deeper)"):
        read_items("deep.jsonl")
    code = main(["validate", "--reward", "x:make", "--items", "deep.jsonl", "--out", "o"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "nested" in err[0]


# --- user modules named like the standard library -------------------------------------------


@pytest.mark.parametrize("name", ["random", "statistics", "json", "types", "numbers", "string"])
def test_a_user_module_named_like_the_standard_library_is_refused_by_name(workdir, name):
    (workdir / f"{name}.py").write_text(SCORE + "def make():\n    return score\n")
    for load in (
        lambda: load_reward(f"{name}:make"),
        lambda: load_function(f"{name}:score", param="--perturb"),
    ):
        with pytest.raises(
            InputError, match=rf"{name}.py in .* standard-library module '{name}'.*rename"
        ):
            load()
    (workdir / f"{name}.py").unlink()


# --- factories returning the wrong kind, rewards returning the wrong kind -------------------


@pytest.mark.parametrize(
    "made, words",
    [
        ("dict", "the class dict"),
        ("42", "type int"),
        ("None", "type NoneType"),
        ("'r'", "type str"),
    ],
)
def test_a_factory_returning_the_wrong_kind_is_refused(workdir, made, words):
    tag = "".join(c for c in made if c.isalnum())
    name = _module(workdir, f"user_wrong_{tag}", f"def make():\n    return {made}\n")
    with pytest.raises(InputError, match=rf"field '--reward'.*returned .*{words}"):
        load_reward(f"{name}:make")


@pytest.mark.parametrize(
    "value, ok",
    [
        (np.float32(0.25), True),
        (np.float64(0.25), True),
        (np.int64(1), True),
        (np.bool_(True), False),
        (True, False),
        ("0.5", False),
        (float("nan"), False),
        (float("inf"), False),
        (np.float32("nan"), False),
    ],
)
def test_numeric_scalars_are_rewards_and_bools_strings_nonfinite_are_errors(value, ok):
    from rewardkit.audit.userreward import UserReward

    s = UserReward(lambda item: value).score({})
    assert (s.error is None and s.value == float(value)) if ok else (s.value is None and s.error)


# --- calibrations that cannot judge the reward -----------------------------------------------


def _items(tmp_path, golds):
    p = tmp_path / "gold.jsonl"
    p.write_text(
        "".join(json.dumps({"id": f"i{k}", "gold": g}) + "\n" for k, g in enumerate(golds))
    )
    return read_items(p, require_gold=True)


def test_a_reward_that_raised_fails_calibration_and_is_named(tmp_path):
    items = _items(tmp_path, [True, False] * 10)
    recs = [RewardRecord(i.id, None if k < 3 else float(k % 2 == 0)) for k, i in enumerate(items)]
    errors = {items[k].id: "KeyError: 'final'" for k in range(3)}
    cal = calibrate_rewards(items, recs, n_resamples=50, seeds=(1,), errors=errors)
    assert cal.outcome == "fail" and not cal.passed
    c = cal.acceptance[0]
    assert not c.passed and "raised on 3 of 20 items" in c.measured and "KeyError" in c.measured
    assert "The reward raised on 3 item(s); first: " in cal.table()
    assert calibrate_rewards(items, recs, n_resamples=50, seeds=(1,)).outcome == "pass"


@pytest.mark.parametrize("n_scored", [0, 1])
def test_a_reward_that_scores_fewer_than_two_items_is_one_line_naming_the_error(tmp_path, n_scored):
    items = _items(tmp_path, [True, False] * 3)
    recs = [RewardRecord(i.id, 0.5 if k < n_scored else None) for k, i in enumerate(items)]
    errors = {i.id: "ZeroDivisionError: division by zero" for i in items[n_scored:]}
    with pytest.raises(
        InputError, match=rf"only {n_scored} of 6 .*raised on {6 - n_scored} .*ZeroDivisionError"
    ):
        calibrate_rewards(items, recs, n_resamples=50, seeds=(1,), errors=errors)


@pytest.mark.parametrize(
    "golds",
    [[1.0] * 12, [True] * 12, [False] * 12, [0.1 * k for k in range(12)], [True] + [False] * 11],
)
def test_calibration_without_good_vs_bad_is_never_a_pass(tmp_path, golds):
    items = _items(tmp_path, golds)
    recs = [RewardRecord(i.id, (k % 4) / 3) for k, i in enumerate(items)]
    cal = calibrate_rewards(items, recs, n_resamples=200, seeds=(42, 1))
    assert cal.stratified is None
    assert cal.outcome in ("fail", "incomplete") and not cal.passed
    assert "| NOT RUN |" in cal.table()


def test_undefined_rank_agreement_is_not_reported_as_stable(tmp_path):
    items = _items(tmp_path, [True, False] * 6)
    recs = [RewardRecord(i.id, 0.5) for i in items]  # constant reward
    cal = calibrate_rewards(items, recs, n_resamples=50, seeds=(1, 2))
    stab = cal.acceptance[-1]
    assert not stab.passed and "undefined" in stab.measured


def test_calibrate_exit_4_when_good_vs_bad_could_not_run(workdir, capsys):
    (workdir / "gold.jsonl").write_text(
        "".join(json.dumps({"id": f"i{k}", "gold": 0.1 * k}) + "\n" for k in range(40))
    )
    (workdir / "rewards.jsonl").write_text(
        "".join(json.dumps({"id": f"i{k}", "reward": 0.1 * k}) + "\n" for k in range(40))
    )
    code = main(
        ["calibrate", "--rewards", "rewards.jsonl", "--gold", "gold.jsonl", "--json", "--out", "o"]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 4 and out["outcome"] == "incomplete" and out["passed"] is False


# --- user code that changes its input in place ------------------------------------------------

NESTED_ITEMS = [
    {"id": f"n{k}", "msg": {"text": "ab" * (k % 3 + 1), "tags": ["b", "a"][:: 1 - 2 * (k % 2)]}}
    for k in range(8)
]
STACK2 = (
    "from rewardkit import Component, RewardStack\n"
    "def long(item):\n    return min(1.0, len(item['msg']['text']) / 6)\n"
    "def tagged(item):\n    return float(item['msg']['tags'][0] == 'b')\n"
    "def make():\n    return RewardStack(components=[Component('long', long, range=(0, 1)),"
    " Component('tagged', tagged, weight=0.5, range=(0, 1))])\n"
)
MUTATIONS = {  # each corrupts the text in place, nested, and returns the same object
    "assign": "    item['msg']['text'] = ''\n",
    "append": "    item['msg']['text'] = item['msg']['text'][:1]\n"
    "    item['msg']['tags'].append('z')\n",
    "delete_then_set": "    del item['msg']['text']\n    item['msg']['text'] = 'a'\n",
    "sort_tags": "    item['msg']['tags'].sort()\n    item['msg']['text'] = ''\n",
}


@pytest.mark.parametrize("kind", sorted(MUTATIONS))
def test_a_perturbation_changing_the_item_in_place_leaks_into_no_gate(workdir, kind):
    (workdir / "n.jsonl").write_text("".join(json.dumps(i) + "\n" for i in NESTED_ITEMS))
    name = _module(
        workdir,
        f"user_mut_{kind}",
        STACK2 + "def corrupt(item):\n" + MUTATIONS[kind] + "    return item\n",
    )
    items = read_items("n.jsonl")
    before = [json.dumps(i.reward_input(), sort_keys=True) for i in items]
    v = validate_reward(
        load_reward(f"{name}:make"),
        items=items,
        perturb=load_function(f"{name}:corrupt", param="--perturb"),
    )
    assert [json.dumps(i.reward_input(), sort_keys=True) for i in items] == before
    spike = v.gate("spike_in")
    assert spike.status == "pass", spike.summary  # the clean item was scored clean
    assert v.gate("ablations").status == "pass", v.gate("ablations").summary


def test_a_reward_changing_its_input_in_place_is_scored_on_the_item_as_given(workdir):
    (workdir / "n.jsonl").write_text("".join(json.dumps(i) + "\n" for i in NESTED_ITEMS))
    src = STACK2.replace(
        "    return float(item['msg']['tags'][0] == 'b')",
        "    t = item['msg']['tags']\n    first = t[0]\n    t.sort()\n    t.append('c')\n"
        "    return float(first == 'b' and len(t) == 3)",
    )
    name = _module(workdir, "user_mut_reward", src)
    items = read_items("n.jsonl")
    v = validate_reward(load_reward(f"{name}:make"), items=items)
    assert v.gate("determinism").status == "pass", v.gate("determinism").summary
    assert [i.reward_input()["msg"]["tags"] for i in items] == [
        x["msg"]["tags"] for x in NESTED_ITEMS
    ]
    assert v.gate("ablations").status == "pass", v.gate("ablations").summary


@pytest.mark.parametrize("returned", ["None", "'corrupted'", "[1, 2]", "3", "item.items()"])
def test_a_perturbation_returning_no_item_is_a_named_failure_not_a_traceback(workdir, returned):
    (workdir / "n.jsonl").write_text("".join(json.dumps(i) + "\n" for i in NESTED_ITEMS))
    tag = "".join(c for c in returned if c.isalnum())
    name = _module(
        workdir, f"user_ret_{tag}", STACK2 + f"def corrupt(item):\n    return {returned}\n"
    )
    v = validate_reward(
        load_reward(f"{name}:make"),
        items=read_items("n.jsonl"),
        perturb=load_function(f"{name}:corrupt", param="--perturb"),
    )
    g = v.gate("spike_in")
    assert g.status == "fail" and "the perturbation returned" in g.summary
    assert "expected the corrupted item (a dict)" in g.summary


def test_ablations_are_not_run_when_no_component_can_be_dropped(workdir):
    src = (
        "from rewardkit import Component, Gate, GateOutcome, RewardStack\n"
        "def make():\n    return RewardStack(gates=[Gate('g', lambda i: GateOutcome(True, ()))],"
        " components=[Component('only', lambda i: len(i['completion']) % 3 / 2, range=(0, 1)),"
        " Component('metric', lambda i: 1.0, weight=0, range=(0, 1))], fail_value=-1)\n"
    )
    v = validate_reward(
        load_reward(f"{_module(workdir, 'user_one', src)}:make"), items=read_items("items.jsonl")
    )
    g = v.gate("ablations")
    assert g.status == "not run" and "'only'" in g.summary and "2+ weighted components" in g.summary


# --- calibrate options and components that name nothing -------------------------------------


@pytest.mark.parametrize("n_scored", [0, 1])
def test_a_component_without_two_scored_items_is_reported_not_a_crash(tmp_path, n_scored):
    items = _items(tmp_path, [True, False] * 6)
    recs = [
        RewardRecord(i.id, (k % 4) / 3, {"sparse": 1.0 if k < n_scored else None, "dense": k / 12})
        for k, i in enumerate(items)
    ]
    cal = calibrate_rewards(items, recs, n_resamples=50, seeds=(1,))
    assert set(cal.components) == {"dense"}
    assert cal.component_notes == {"sparse": f"not computed: {n_scored} scored item(s) (< 2)"}
    assert f"| sparse | not computed: {n_scored} scored item(s)" in cal.table()


@pytest.mark.parametrize(
    "args, field",
    [
        (["--strata", "difficulty"], "--strata"),
        (["--strata", "Stratum"], "--strata"),
        (["--good-min", "0.5"], "--good-min"),
    ],
)
def test_an_option_that_names_nothing_in_the_data_is_bad_input(workdir, capsys, args, field):
    (workdir / "g.jsonl").write_text(
        "".join(json.dumps({"id": k, "gold": k % 2 == 0, "level": k % 3}) + "\n" for k in range(8))
    )
    (workdir / "r.jsonl").write_text(
        "".join(json.dumps({"id": k, "reward": k / 8}) + "\n" for k in range(8))
    )
    code = main(["calibrate", "--rewards", "r.jsonl", "--gold", "g.jsonl", *args, "--out", "o"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and f"field '{field}'" in err[0]
    with pytest.raises(Exception, match="good_min"):
        calibrate_rewards(
            read_items("g.jsonl"), [RewardRecord(str(k), k / 8) for k in range(8)], good_min=0.5
        )


# --- user code that calls sys.exit() must never end the audit with its status ---------------

EXITS = {
    "import": "import sys\nsys.exit({code})\n" + SCORE + "def make():\n    return score\n",
    "factory": "import sys\n" + SCORE + "def make():\n    sys.exit({code})\n",
    "reward": "import sys\ndef make():\n    def r(item):\n        sys.exit({code})\n"
    "    r.range = (0, 1)\n    return r\n",
    "component": "import sys\nfrom rewardkit import Component, RewardStack\n"
    + SCORE
    + "def bye(item):\n    sys.exit({code})\n"
    "def make():\n    return RewardStack(components=[Component('a', score, range=(0, 1)),"
    " Component('b', bye, weight=0.5, range=(0, 1))])\n",
    "perturbation": "import sys\n" + SCORE + "score.range = (0, 1.5)\n"
    "def make():\n    return score\ndef corrupt(item):\n    sys.exit({code})\n",
}


@pytest.mark.parametrize("code", ["0", "None", "1", "'bye'"])
@pytest.mark.parametrize("where", sorted(EXITS))
def test_sys_exit_in_user_code_is_an_error_of_the_reward(workdir, capsys, where, code):
    tag = "".join(c for c in code if c.isalnum())
    name = _module(workdir, f"user_exit_{where}_{tag}", EXITS[where].format(code=code))
    extra = ["--perturb", f"{name}:corrupt"] if where == "perturbation" else []
    args = ["--reward", f"{name}:make", "--out", str(workdir / "o")]
    status = main(["validate", *args, "--items", "items.jsonl", "--allow-not-run", *extra])
    err = capsys.readouterr().err
    assert status in (1, 2), (status, err)  # a failed gate or bad input, never 0
    if where in ("import", "factory"):
        assert "called sys.exit" in err
    if where != "perturbation":
        assert main(["calibrate", *args, "--gold", "items.jsonl"]) in (1, 2)


@pytest.mark.parametrize(
    "spec, hint",
    [
        ("user_path.py:make", "'user_path:make'"),
        ("./user_path:make", "'user_path:make'"),
        ("./user_path.py:make", "'user_path:make'"),
        ("sub/user_path.py:make", "'sub.user_path:make'"),
    ],
)
def test_a_file_path_given_as_module_is_answered_with_the_module_name(workdir, spec, hint):
    _module(workdir, "user_path", SCORE + "def make():\n    return score\n")
    with pytest.raises(InputError, match=rf"not a file path.*use {hint}"):
        load_reward(spec)
    with pytest.raises(InputError, match=rf"not a file path.*use {hint.replace('make', 'score')}"):
        load_function(spec.replace("make", "score"), param="--perturb")
