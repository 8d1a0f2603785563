"""The frozen golden set: every stored verdict is reproduced byte for byte."""

from __future__ import annotations

import json

from rewardkit.envs.fhir.golden import GOLDEN_PATH, compute_golden, diff_golden, load_golden
from rewardkit.envs.fhir.tasks import VERIFIER_VERSION


def test_golden_verdicts_replay_exactly():
    recs = load_golden()
    assert len(recs) >= 50
    assert {r["verdict"]["verifier_version"] for r in recs} == {VERIFIER_VERSION}
    diffs = diff_golden()
    assert diffs == [], (
        "the verifier's verdicts changed: if this is intended, bump VERIFIER_VERSION and run "
        "`python -m rewardkit.envs.fhir.golden --write`; first read the diff: " + repr(diffs[:5])
    )


def test_golden_file_is_what_the_code_generates():
    lines = GOLDEN_PATH.read_text().splitlines()
    assert [json.loads(x) for x in lines] == compute_golden()


def test_a_changed_verdict_shows_up_in_the_diff(tmp_path):
    recs = load_golden()
    recs[0]["verdict"]["total"] = 123.0
    p = tmp_path / "g.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    diffs = diff_golden(p)
    assert diffs == [(recs[0]["name"], f"total: 123.0 → {load_golden()[0]['verdict']['total']}")]
