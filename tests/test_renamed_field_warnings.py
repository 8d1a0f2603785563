"""The renamed review field (``verdicts`` → ``reviews``, ``verdict`` → ``review``) as its user
meets it: the warning is seen without any warning filter, at the user's own line; an error
about a value given under the old name names the old name (the field as the file spells it);
an item with both names is refused by every reader, the audit's level items included."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from rewardkit.audit.level_items import recipe_b
from rewardkit.bioaudit.schema import read_levels, read_tasks, read_trajectories
from rewardkit.errors import ConfigError, InputError, RenamedFieldWarning
from rewardkit.levels import score_trajectory

DEC = {"decision_id": "d1", "action": "normalization", "params": {}, "context": {}}
RECORDS = {
    "trajectories": (read_trajectories, {"trajectory_id": "t", "decisions": [DEC]}),
    "tasks": (
        read_tasks,
        {
            "task_id": "t",
            "paradigm": "deg",
            "decisions": [DEC],
            "n_gold_correct": 1,
            "n_gold_error": 0,
            "n_gold_edge": 0,
        },
    ),
    "levels": (read_levels, {"trajectory_id": "t", "levels": [3]}),
}

# one script per entry point of the old name, run as a user runs it: `python script.py`
USER_SCRIPT = """
import json, sys
from rewardkit.audit.level_items import recipe_b
from rewardkit.audit.scoring import task_reviews
from rewardkit.bioaudit.schema import read_levels, read_tasks, read_trajectories
from rewardkit.levels import Step, score_trajectory
d = {"decision_id": "d1", "action": "normalization", "params": {}, "context": {}}
rows = {
    "traj.jsonl": {"trajectory_id": "t", "decisions": [d], "verdicts": ["final"]},
    "tasks.jsonl": {"task_id": "t", "paradigm": "deg", "decisions": [d], "verdicts": None,
                    "n_gold_correct": 1, "n_gold_error": 0, "n_gold_edge": 0},
    "levels.jsonl": {"trajectory_id": "t", "levels": [3], "verdicts": ["final"]},
}
for name, row in rows.items():
    open(name, "w").write(json.dumps(row) + "\\n")
class OldTask:
    verdicts = ["final"]
read_trajectories("traj.jsonl")  # line 17
read_tasks("tasks.jsonl")  # line 18
read_levels("levels.jsonl")  # line 19
score_trajectory([{"level": 3, "verdict": "final"}], session=True)  # line 20
recipe_b()({"levels": [3], "verdicts": ["final"]})  # line 21
Step(3, verdict="final").verdict  # line 22 (twice)
task_reviews(OldTask())  # line 23
"""


def test_the_warning_is_seen_by_default_at_the_users_line(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(USER_SCRIPT.lstrip("\n"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    run = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, env=env
    )
    assert run.returncode == 0, run.stderr
    seen = [ln for ln in run.stderr.splitlines() if "RenamedFieldWarning" in ln]
    # "train.py:<line>: RenamedFieldWarning: ..." — the user's line, not rewardkit's internals
    lines = [int(ln.split(":")[1]) for ln in seen]
    assert all(ln.startswith(f"{script}:") for ln in seen), run.stderr
    assert lines == [17, 18, 19, 20, 21, 22, 22, 23], run.stderr
    assert "traj.jsonl, line 1: field 'verdicts'" in run.stderr
    assert "levels.jsonl, line 1: field 'verdicts'" in run.stderr


@pytest.mark.parametrize(
    ("old", "field"),
    [
        ("final", "verdicts"),
        ({"a": 1}, "verdicts"),
        (["final", "final"], "verdicts"),
        (["ok"], r"verdicts\[0\]"),
        ([7], r"verdicts\[0\]"),
    ],
)
@pytest.mark.parametrize("kind", sorted(RECORDS))
def test_a_bad_value_under_the_old_name_names_the_old_name(tmp_path, kind, old, field):
    reader, rec = RECORDS[kind]
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps({**rec, "verdicts": old}) + "\n")
    with (
        pytest.warns(RenamedFieldWarning),
        pytest.raises(InputError, match=rf"line 1, field '{field}': "),
    ):
        reader(path)
    path.write_text(json.dumps({**rec, "reviews": old}) + "\n")
    new = field.replace("verdicts", "reviews")
    with pytest.raises(InputError, match=rf"line 1, field '{new}': "):
        reader(path)


@pytest.mark.parametrize(
    ("old", "field"),
    [("final", "verdicts"), (["final", "final"], "verdicts"), (["ok"], r"verdicts\[0\]")],
)
def test_a_level_item_names_the_old_name_in_its_error(old, field):
    with pytest.warns(RenamedFieldWarning), pytest.raises(InputError, match=f"field '{field}'"):
        recipe_b()({"levels": [3], "verdicts": old})
    new = field.replace("verdicts", "reviews")
    with pytest.raises(InputError, match=f"field '{new}'"):
        recipe_b()({"levels": [3], "reviews": old})


@pytest.mark.parametrize("pair", [(["revoked"], ["final"]), (None, ["final"]), (["final"], None)])
def test_a_level_item_with_both_names_is_refused(pair):
    # before: 'reviews' won silently, whatever 'verdicts' said
    old, new = pair
    with pytest.raises(InputError, match="field 'verdicts': has both 'verdicts'"):
        recipe_b()({"levels": [3], "verdicts": old, "reviews": new})


@pytest.mark.parametrize("bad", [5, "ok", ["final"]])
def test_a_step_mapping_names_the_old_key_in_its_error(bad):
    with pytest.warns(RenamedFieldWarning), pytest.raises(ConfigError, match="'verdict' must"):
        score_trajectory([{"level": 3, "verdict": bad}], session=True)


def test_a_level_reward_warns_once_naming_the_first_item(recwarn):
    # was: one identical message per item, naming neither the item nor the file
    reward = recipe_b()
    for k in range(500):
        reward({"id": f"t{k}", "levels": [3, 2], "verdicts": ["final", None]})
    renamed = [w for w in recwarn if issubclass(w.category, RenamedFieldWarning)]
    assert len(renamed) == 1
    assert "field 'verdicts' is deprecated (first in item 't0')" in str(renamed[0].message)


def test_an_audit_task_with_both_attributes_that_differ_is_refused():
    # was: 'reviews' won silently, whatever 'verdicts' said
    from rewardkit.audit.scoring import task_reviews

    class Both:
        reviews = ("final",)
        verdicts = ("revoked",)

    class Same:
        reviews = ("final",)
        verdicts = ("final",)

    with pytest.raises(ConfigError, match=r"Both has both 'verdicts' .* and 'reviews'"):
        task_reviews(Both())
    assert list(task_reviews(Same())) == ["final"]
