"""The review-session field is ``reviews`` (``review`` per step) since benchmark v1.2.0.

Files and mappings that still use the old name (``verdicts`` / ``verdict``) are read the same
for one version, with one RenamedFieldWarning per file naming the file, the first line that
has it, the old and the new name; a record with both names is refused. Every test compares the
old-name read with the new-name read of the same data, so dropping the rename (or reading the
old name silently, or differently) fails it.
"""

from __future__ import annotations

import json
import re
import shutil
import warnings
from importlib import resources
from pathlib import Path

import pytest

from rewardkit._json import content_hash
from rewardkit.audit.level_items import LevelItemReward
from rewardkit.bioaudit import load_benchmark
from rewardkit.bioaudit.schema import read_levels, read_tasks, read_trajectories
from rewardkit.cli import main
from rewardkit.errors import ConfigError, InputError, RenamedFieldWarning
from rewardkit.levels import Step, score_trajectory

DATA = Path(str(resources.files("rewardkit.bioaudit") / "data" / "v1.2.0"))
DEC = {"decision_id": "d1", "action": "normalization", "params": {}, "context": {}}


def _old(text: str) -> str:
    """The same JSONL with the field written under its old name."""
    return text.replace('"reviews":', '"verdicts":')


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _read_warned(reader, path: Path):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = reader(path)
    renamed = [w for w in seen if issubclass(w.category, RenamedFieldWarning)]
    return got, renamed, [w for w in seen if w not in renamed]


CASES = [
    (read_trajectories, lambda k, r: {"trajectory_id": f"t{k}", "decisions": [DEC], **r}),
    (
        read_tasks,
        lambda k, r: {
            "task_id": f"t{k}",
            "paradigm": "deg",
            "decisions": [DEC],
            "n_gold_correct": 1,
            "n_gold_error": 0,
            "n_gold_edge": 0,
            **({"reviews": None} | r),
        },
    ),
    (read_levels, lambda k, r: {"trajectory_id": f"t{k}", "levels": [3], **r}),
]


@pytest.mark.parametrize(("reader", "make"), CASES, ids=["trajectories", "tasks", "levels"])
def test_old_name_reads_the_same_with_one_warning_naming_file_and_line(tmp_path, reader, make):
    # line 1 has no review session (or an explicit null), lines 2-4 do
    later = [make(k, {"reviews": [v]}) for k, v in enumerate(["final", "revoked", None], 1)]
    records = [make(0, {}), *later]
    new = _write(tmp_path / "new.jsonl", records)
    old = tmp_path / "old.jsonl"
    old.write_text(_old(new.read_text()))
    assert '"verdicts"' in old.read_text() and '"reviews"' not in old.read_text()

    want, renamed, other = _read_warned(reader, new)
    assert not renamed and not other
    got, renamed, other = _read_warned(reader, old)
    assert got == want and not other
    first = 1 if reader is read_tasks else 2  # read_tasks' line 1 carries "reviews": null
    assert len(renamed) == 1  # one per file, not one per line
    msg = str(renamed[0].message)
    assert msg.startswith(f"{old}, line {first}: field 'verdicts' is deprecated")
    assert "rename it to 'reviews'" in msg
    assert [r.reviews for r in got] == [None, ("final",), ("revoked",), (None,)]


@pytest.mark.parametrize(("reader", "make"), CASES, ids=["trajectories", "tasks", "levels"])
def test_both_names_on_one_line_are_refused(tmp_path, reader, make):
    rec = make(0, {"reviews": ["final"]})
    rec["verdicts"] = ["revoked"]
    path = _write(tmp_path / "both.jsonl", [make(1, {}), rec])
    with pytest.raises(InputError, match=r"line 2, field 'verdicts': has both 'verdicts'"):
        reader(path)


def test_old_values_are_checked_like_new_ones(tmp_path):
    path = _write(
        tmp_path / "bad.jsonl", [{"trajectory_id": "a", "levels": [3], "verdicts": ["ok"]}]
    )
    with (
        pytest.warns(RenamedFieldWarning),
        pytest.raises(InputError, match=r"line 1, field 'verdicts\[0\]': expected final"),
    ):
        read_levels(path)


def _old_layout(tmp_path: Path) -> Path:
    """The shipped benchmark written in the v1.1.0 layout (field 'verdicts'), hashes updated."""
    root = tmp_path / "v1.1.0-layout"
    shutil.copytree(DATA, root)
    manifest = json.loads((root / "manifest.json").read_text())
    for name in ("tasks.jsonl", "legacy.jsonl"):
        f = root / name
        f.write_text(_old(f.read_text()))
        manifest["files"][name] = content_hash(f.read_bytes())
    manifest["version"] = "v1.1.0"
    (root / "manifest.json").write_text(json.dumps(manifest))
    return root


def test_a_benchmark_folder_in_the_old_layout_loads_the_same_tasks(tmp_path):
    root = _old_layout(tmp_path)
    shipped = load_benchmark()
    with pytest.warns(RenamedFieldWarning) as seen:
        old = load_benchmark(root)
    files = sorted(re.match(r"(.*), line", str(w.message)).group(1) for w in seen)
    assert files == sorted(str(root / n) for n in ("legacy.jsonl", "tasks.jsonl"))
    assert old.tasks == shipped.tasks and old.legacy == shipped.legacy
    assert sum(t.reviews is not None for t in old.tasks) > 0


def test_the_retired_version_name_says_what_replaced_it():
    with pytest.raises(InputError, match=r"'v1\.1\.0' is no longer shipped.*'reviews'.*v1\.2\.0"):
        load_benchmark("v1.1.0")


def test_shipped_files_use_only_the_new_name():
    for f in DATA.glob("*.jsonl"):
        assert '"verdicts"' not in f.read_text(), f.name
    assert '"reviews":[' in (DATA / "tasks.jsonl").read_text()
    assert json.loads((DATA / "manifest.json").read_text())["version"] == "v1.2.0"


def test_cli_reads_an_old_file_with_one_warning_line(tmp_path, capsys):
    lines = (DATA / "tasks.jsonl").read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if '"reviews":[' in line)
    new = tmp_path / "new.jsonl"
    new.write_text("\n".join(lines[: first + 2]) + "\n")
    old = tmp_path / "old.jsonl"
    old.write_text(_old(new.read_text()))
    assert main(["bioaudit", "audit", str(new), "--json"]) == 0
    want = json.loads(capsys.readouterr().out)
    assert main(["bioaudit", "audit", str(old), "--json"]) == 0
    cap = capsys.readouterr()
    got = json.loads(cap.out)
    assert got.pop("file") != want.pop("file") and got == want
    assert cap.err.splitlines() == [
        f"rewardkit: warning: {old}, line 1: field 'verdicts' is deprecated; rename it to "
        "'reviews' (read as 'reviews' on every line for now; the next version refuses "
        "'verdicts')"
    ]


def test_a_step_mapping_with_the_old_key_scores_the_same():
    new = [{"level": 3, "review": "final"}, {"level": 0, "review": "provisional"}, 2]
    old = [{"level": 3, "verdict": "final"}, {"level": 0, "verdict": "provisional"}, 2]
    want = score_trajectory(new, session=True)
    with pytest.warns(RenamedFieldWarning, match=r"Step 0: the key 'verdict' .* 'review'"):
        got = score_trajectory(old, session=True)
    assert got == want and got.mask_reasons == (None, "provisional_not_final", "no_review_record")
    with pytest.raises(ConfigError, match=r"Step 0 has both 'verdict' .* give only 'review'"):
        score_trajectory([{"level": 3, "review": "final", "verdict": "final"}])
    assert Step(3, "revoked").review == "revoked"


def test_an_audit_item_with_the_old_field_scores_the_same():
    reward = LevelItemReward(recipe="B")
    item = {"id": "a", "levels": [3, 3, 0], "reviews": ["final", "final", "revoked"]}
    want = reward(item)
    old = {"id": "a", "levels": [3, 3, 0], "verdicts": ["final", "final", "revoked"]}
    with pytest.warns(RenamedFieldWarning, match="field 'verdicts' is deprecated.*'reviews'"):
        assert reward(old) == want
    assert want == reward({"id": "a", "levels": [3, 3]})  # the revoked L0 is masked
    with pytest.raises(InputError, match="field 'reviews'"):
        reward({"id": "a", "levels": [3, 3], "reviews": ["final"]})


def test_an_audit_task_with_the_old_attribute_scores_the_same():
    """A user's Task class written for the old attribute name ``verdicts``."""
    import dataclasses

    from rewardkit.audit import LevelReward
    from rewardkit.audit.scoring import score_tasks, taskset_hash
    from rewardkit.bioaudit import Engine

    @dataclasses.dataclass(frozen=True)
    class OldTask:
        task_id: str
        decisions: tuple
        verdicts: tuple | None
        n_gold_correct: int
        n_gold_error: int
        n_gold_edge: int

    tasks = [t for t in load_benchmark().tasks if t.reviews is not None][:3]
    assert tasks and any("revoked" in t.reviews or "provisional" in t.reviews for t in tasks)
    old = [
        OldTask(t.task_id, t.decisions, t.reviews, t.n_gold_correct, t.n_gold_error, t.n_gold_edge)
        for t in tasks
    ]
    want = score_tasks(tasks, judge=Engine(), reward=LevelReward())
    with pytest.warns(RenamedFieldWarning, match="OldTask: the task attribute 'verdicts'"):
        got = score_tasks(old, judge=Engine(), reward=LevelReward())
    assert got.to_json() == want.to_json()
    with pytest.warns(RenamedFieldWarning):
        assert taskset_hash(old) == taskset_hash(tasks)
    # the reviews matter: scored as if no review session, the values differ
    plain = [dataclasses.replace(t, reviews=None) for t in tasks]
    assert score_tasks(plain, judge=Engine(), reward=LevelReward()).values != want.values


def test_step_keyword_and_attribute_verdict_still_work_with_a_warning():
    with pytest.warns(RenamedFieldWarning, match=r"Step\(verdict=\.\.\.\) is deprecated"):
        old = Step(2, verdict="revoked")
    assert old == Step(2, "revoked") == Step(level=2, review="revoked")
    assert old.to_json() == Step(2, "revoked").to_json()  # no 'verdict' in the JSON
    with pytest.warns(RenamedFieldWarning, match=r"Step\.verdict is deprecated"):
        assert old.verdict == "revoked"
    with pytest.raises(TypeError, match="besides 'review'"):
        Step(2, "final", verdict="revoked")
    with pytest.raises(TypeError, match=r"\['colour'\]"):
        Step(2, colour="red")
    with pytest.raises(ConfigError, match="The 'review' of a Step"):
        Step(2, "maybe")
