"""The frozen golden set: every stored verdict is reproduced byte for byte."""

from __future__ import annotations

import json

from rewardkit.envs.fhir.golden import GOLDEN, GOLDEN_PATH
from rewardkit.envs.fhir.tasks import VERIFIER_VERSION


def test_golden_verdicts_replay_exactly():
    recs = GOLDEN.load()
    assert len(recs) >= 50
    assert {r["verdict"]["verifier_version"] for r in recs} == {VERIFIER_VERSION}
    diffs = GOLDEN.diff()
    assert diffs == [], (
        "the verifier's verdicts changed: if this is intended, bump VERIFIER_VERSION and run "
        "`python -m rewardkit.envs.fhir.golden --write`; first read the diff: " + repr(diffs[:5])
    )


def test_golden_file_is_what_the_code_generates():
    lines = GOLDEN_PATH.read_text().splitlines()
    assert [json.loads(x) for x in lines] == GOLDEN.compute()


def test_a_changed_verdict_shows_up_in_the_diff(tmp_path):
    recs = GOLDEN.load()
    recs[0]["verdict"]["total"] = 123.0
    p = tmp_path / "g.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    diffs = GOLDEN.diff(p)
    assert diffs == [(recs[0]["name"], f"total: 123.0 → {GOLDEN.load()[0]['verdict']['total']}")]
