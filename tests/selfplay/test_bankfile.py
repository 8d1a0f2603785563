"""The bank's data file: the shipped file reproduces the bank byte for byte (frozen draws and
bank hash), a user's file builds a bank, and every bad entry names the file, the line, the
field, the task and what is accepted."""

from __future__ import annotations

import ast
import hashlib
import re
from pathlib import Path

import numpy as np
import pytest

from rewardkit._json import canonical_json
from rewardkit.errors import InputError
from rewardkit.selfplay.bank import BANK_VERSION, load_bank
from rewardkit.selfplay.bankfile import SHIPPED_BANK, read_bank_file
from rewardkit.selfplay.executor import CachedExecutor, TrustedExecutor

# Drawn with the bank's former Python generators (before the bank became data): seeds 0-4 as
# default_rng([seed, 12]), 40 argument tuples each, then one integer showing where the stream
# stands. The data file must reproduce them: the bank's GT tests, held-out tests and random
# pool are these draws.
FROZEN_DRAWS = {
    "remove_all": "6c511804748e808ad0a833ac",
    "sorted_with_original": "5709ab2e7ca30720b007302f",
    "sum_evens": "5709ab2e7ca30720b007302f",
    "max_of": "5709ab2e7ca30720b007302f",
    "count_greater": "6c511804748e808ad0a833ac",
    "running_sum": "5709ab2e7ca30720b007302f",
    "second_largest": "2b232235a3e2156f106c403d",
    "is_palindrome": "2de0bf9f0b06c0c414cc852a",
    "fizzbuzz": "2956a078139011c66a4ab04d",
    "factorial": "1e4b21d7d7ea6fbfa645a3ca",
    "clamp_all": "24e7533644eb3a5eb851d0cf",
    "index_of": "e6e9644c1fefd1c92edb0324",
    "count_vowels": "322f1bab0a1a6a96f6b1299f",
    "pairwise_diffs": "5709ab2e7ca30720b007302f",
    "dedupe": "58ba31a8feb0381d97de8f32",
    "longest_run": "105d59b187eebd58d23e6b90",
    "rotate_left": "b098377961090b703bc83f86",
    "prefix_max": "5709ab2e7ca30720b007302f",
    "count_inversions": "2b232235a3e2156f106c403d",
    "digit_sum": "b974cfa262c24e69fc13acfd",
    "mean_or_zero": "5709ab2e7ca30720b007302f",
    "gcd_all": "deae93789491f0e6919c875c",
    "insert_sorted": "fa6bf808e78473495472a1a7",
    "top_k": "2fcc771d5b646c9e8b66e9b4",
    "above_average": "38ecb6b2debe5f2a318ff35d",
    "shift_to_zero": "5709ab2e7ca30720b007302f",
    "transpose": "6372375db6d1112f0627af01",
    "count_pairs_sum": "8c97487ff5a2d4a53e1959e0",
    "swap_ends": "5709ab2e7ca30720b007302f",
    "cumulative_product": "5f0479b7f8a8ed34dc5e5eba",
    "last_index": "34f627f3e4f0fcedd4b2e851",
    "word_lengths": "5fce676b922f4bb13f0565dc",
    "merge_counts": "ec2337eea80a0d0c9558e214",
    "window_sums": "ce8b6fd004d1b9a28ba7b27b",
}


# sha256 of the canonical JSON of the bank's tasks (seed 0): every GT and held-out test, every
# candidate and its y. The simulation's numbers (docs/selfplay.md) rest on it. If a change of
# the data file, the mutation operators or the executors changes it on purpose, bump
# BANK_VERSION (and the data file's version) and rerun the numbers the docs quote.
BANK_TASKS_SHA256 = "dde2bfca80f872cf1972714a64e0837b3b1418234e1fa35de134bd97402f2349"


def digest(task) -> str:
    h = hashlib.sha256()
    for seed in range(5):
        rng = np.random.default_rng([seed, 12])
        for _ in range(40):
            h.update(repr(task.draw(rng)).encode() + b"\n")
        h.update(repr(int(rng.integers(2**62))).encode() + b"\n")
    return h.hexdigest()[:24]


def test_shipped_file_is_the_bank():
    bank_file = read_bank_file()
    assert bank_file.version == BANK_VERSION
    assert [t.task_id for t in bank_file.tasks] == list(FROZEN_DRAWS)
    assert sum(len(t.bugs) for t in bank_file.tasks) == 1


@pytest.mark.parametrize("task", read_bank_file().tasks, ids=lambda t: t.task_id)
def test_draws_from_the_data_file_are_the_frozen_ones(task):
    assert digest(task) == FROZEN_DRAWS[task.task_id]


def test_bank_is_byte_identical_to_the_frozen_one(bank):
    got = hashlib.sha256(canonical_json(bank.to_dict()["tasks"]).encode()).hexdigest()
    assert got == BANK_TASKS_SHA256, "the bank changed: bump BANK_VERSION if this is intended"


def test_a_copy_of_the_shipped_file_builds_the_same_bank(bank, tmp_path):
    copy = tmp_path / "bank.toml"
    copy.write_bytes(SHIPPED_BANK.read_bytes())
    again = load_bank(path=copy, executor=CachedExecutor(TrustedExecutor()))
    assert again.to_dict()["tasks"] == bank.to_dict()["tasks"]
    assert again.version == bank.version


MINE = """version = "mine-v1"

[[task]]
id = "double"
prompt = "Return 2 * x."
args = [{ kind = "int", lo = -99, hi = 99 }]
boundary = ["(0,)", "(1,)"]
reference = '''
def double(x):
    return 2 * x
'''
variants = ['''
def double(x):
    return x + x
''']

[[task.bug]]
name = "plus_one"
family = "off_by_one"
source = '''
def double(x):
    return 2 * x + 1
'''
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "mine.toml"
    p.write_text(text)
    return p


def test_a_users_file_builds_a_bank(tmp_path):
    bank = load_bank(path=write(tmp_path, MINE), executor=CachedExecutor(TrustedExecutor()))
    (task,) = bank.tasks
    assert bank.version == "mine-v1" and task.task_id == "double"
    assert [t.input for t in task.gt_tests[:2]] == ["(0,)", "(1,)"]
    assert len(task.gt_tests) == 8 and len(task.heldout_tests) == 16
    assert all(t.expected == repr(2 * ast.literal_eval(t.input)[0]) for t in task.gt_tests)
    bug = task.candidate("plus_one")
    assert bug.handwritten and bug.family == "off_by_one" and bug.y == 0.0
    assert task.candidate("variant0").y == 1.0


def test_a_missing_file_is_reported_not_replaced_by_the_shipped_one(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_bank(path=tmp_path / "nope.toml")


NINE = ", ".join(f'"({i},)"' for i in range(9))
Q3 = "'" * 3
BAD_TASK = [  # (replace, by, field, message)
    (
        'kind = "int"',
        'kind = "float"',
        "args[0].kind",
        "unknown kind 'float'; expected one of int,",
    ),
    ("lo = -99, ", "", "args[0].lo", "missing; kind 'int' needs lo, hi: integers"),
    ("lo = -99", 'lo = "-99"', "args[0].lo", "expected an int; got '-99'; lo, hi: integers"),
    ("lo = -99, hi = 99", "lo = 9, hi = -9", "args[0].lo", "lo = 9 is greater than hi = -9"),
    (
        "args = [",
        "args = [{ kind = 'int', lo = 0, hi = 1 }, ",
        "boundary[0]",
        r"'\(0,\)' is not a tuple of 2 argument\(s\) \(one per args spec",
    ),
    (
        'args = [{ kind = "int", lo = -99, hi = 99 }]',
        'args = { kind = "int", lo = -99, hi = 99 }',
        "args",
        "expected an array of specs, one per argument",
    ),
    ('prompt = "Return 2 * x."\n', "", "prompt", "missing; a task needs id, prompt, args"),
    ('prompt = "Return 2 * x."', 'prompt = ""', "prompt", "expected a non-empty string"),
    ('"(1,)"]', '"(1"]', "boundary[1]", r"not a Python literal: '\(1'; expected an array"),
    ('"(1,)"]', '"(0,)"]', "boundary", "repeats an input; expected an array of at most 8 distinct"),
    ('"(0,)", "(1,)"]', NINE + "]", "boundary", "9 inputs; expected an array of at most 8"),
    (
        'boundary = ["(0,)", "(1,)"]',
        'boundary = "(0,)"',
        "boundary",
        "expected an array of at most",
    ),
    (
        "reference = " + Q3,
        'gt_inputs = ["(5,)"]\nreference = ' + Q3,
        "gt_inputs",
        "1 inputs; expected an array of exactly 8 distinct argument-tuple literals",
    ),
    (
        "    return 2 * x\n" + Q3 + "\nvariants",
        "    return 2 *\n" + Q3 + "\nvariants",
        "reference",
        r"not valid Python \(line 2: invalid syntax\); expected Python source defining def double",
    ),
    (
        "def double(x):\n    return 2 * x\n",
        "def twice(x):\n    return 2 * x\n",
        "reference",
        "does not define the task's function; expected Python source defining def double",
    ),
    (
        "variants = [" + Q3 + "\ndef double(x):\n    return x + x\n" + Q3 + "]",
        'variants = "x + x"',
        "variants",
        "expected an array of programs; got 'x \\+ x'",
    ),
    (
        "def double(x):\n    return x + x",
        "def double(x):\n    return x +",
        "variants[0]",
        "not valid Python",
    ),
    (
        'family = "off_by_one"',
        'family = "typo"',
        "bug[0].family",
        "expected one of aliasing, boundary, reorder, off_by_one, comparison; got 'typo'",
    ),
    ('name = "plus_one"', 'name = "reference"', "bug[0].name", "other than 'reference'"),
    ('name = "plus_one"', 'name = "variant0"', "bug[0].name", "other than 'reference'"),
    ('name = "plus_one"', 'name = "a b"', "bug[0].name", "letters, digits"),
    (
        "source = " + Q3 + "\ndef double(x):\n    return 2 * x + 1\n" + Q3 + "\n",
        "",
        "bug[0].source",
        "missing 'source'; a bug has name, family, source",
    ),
    (
        'family = "off_by_one"',
        'family = "off_by_one"\nseverity = 3',
        "bug[0].severity",
        "unknown field 'severity'",
    ),
    (
        'prompt = "Return',
        'hint = "x"\nprompt = "Return',
        "hint",
        "unknown field; a task has id, prompt, args, boundary, gt_inputs, reference, variants",
    ),
]


@pytest.mark.parametrize(("old", "new", "field", "message"), BAD_TASK)
def test_bad_task_entry_names_file_line_field_task_and_what_is_accepted(
    tmp_path, old, new, field, message
):
    assert old in MINE
    p = write(tmp_path, MINE.replace(old, new, 1))
    with pytest.raises(InputError, match=message) as exc:
        read_bank_file(p)
    assert str(exc.value).startswith(f"{p}, line 3, field '{field}': in task 'double': ")
    assert exc.value.field == field and exc.value.path == str(p)


def test_errors_in_a_later_task_name_its_line(tmp_path):
    second = MINE[MINE.index("[[task]]") :].replace("hi = 99", 'hi = "x"')
    p = write(tmp_path, MINE + "\n" + second.replace('id = "double"', 'id = "again"'))
    line = MINE.count("\n") + 2
    with pytest.raises(InputError, match=r"field 'args\[0\].hi': in task 'again'") as exc:
        read_bank_file(p)
    assert exc.value.line == line
    assert re.search(rf"line {line}\b", str(exc.value))


def test_duplicate_ids_and_bad_ids(tmp_path):
    second = MINE[MINE.index("[[task]]") :]
    p = write(tmp_path, MINE + "\n" + second)
    with pytest.raises(InputError, match="in task 'double': a second task with this id"):
        read_bank_file(p)
    p = write(tmp_path, MINE.replace('id = "double"', 'id = "2x"'))
    with pytest.raises(InputError, match="field 'id': expected the task's function name"):
        read_bank_file(p)
    p = write(tmp_path, MINE.replace('id = "double"', 'id = "lambda"'))
    with pytest.raises(InputError, match="a Python identifier"):
        read_bank_file(p)


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        (MINE.replace('version = "mine-v1"', ""), "version", "expected a non-empty string"),
        (MINE.replace('version = "mine-v1"', "version = 1"), "version", "got 1"),
        ('version = "v"\n', "task", r"expected one or more \[\[task\]\] tables"),
        (MINE.replace("version", "tasks = 3\nversion"), "tasks", "unknown top-level key"),
    ],
)
def test_bad_file_level_entries(tmp_path, text, field, message):
    p = write(tmp_path, text)
    with pytest.raises(InputError, match=message) as exc:
        read_bank_file(p)
    assert str(exc.value).startswith(f"{p}, field '{field}': ")


def test_not_toml_is_reported_by_the_reader(tmp_path):
    with pytest.raises(InputError, match=r"mine\.toml: not valid TOML"):
        read_bank_file(write(tmp_path, "[[task]\nid ="))


def test_a_wrong_correct_variant_is_reported_when_the_bank_is_built(tmp_path):
    p = write(tmp_path, MINE.replace("return x + x", "return x + x + (x == 1)"))
    with pytest.raises(InputError, match=r"in task 'double': a correct program fails 1 of") as e:
        load_bank(path=p, executor=CachedExecutor(TrustedExecutor()))
    assert e.value.field == "variants[0]" and e.value.line == 3
