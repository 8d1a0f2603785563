"""rewardkit calibrate / validate: exit 0 pass, 1 a gate fails, 2 bad input."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from rewardkit.cli import main


def test_validate_passes_on_the_shipped_benchmark(tmp_path, capsys):
    assert main(["validate", "--preset", "bioaudit", "--json", "--out", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["passed"] is True and all(out["gates"].values()) and len(out["gates"]) == 5
    saved = json.loads((tmp_path / "validation.json").read_text())
    assert [g["name"] for g in saved["gates"]] == [
        "mapping",
        "determinism",
        "spike_in",
        "ablations",
        "golden",
    ]
    assert (tmp_path / "validate-manifest.json").exists()


def test_broken_mapping_in_config_fails_the_mapping_gate(tmp_path, capsys):
    cfg = tmp_path / "rewardkit.toml"
    cfg.write_text("[reward]\nmapping = { 0 = 0.0, 1 = 0.6, 2 = 0.3, 3 = 0.85 }\n")
    code = main(
        [
            "validate",
            "--preset",
            "bioaudit",
            "--config",
            str(cfg),
            "--json",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert code == 1
    gates = json.loads(capsys.readouterr().out)["gates"]
    assert gates["mapping"] is False and gates["golden"] is True
    saved = json.loads((tmp_path / "o" / "validation.json").read_text())
    assert "must be non-decreasing" in saved["gates"][0]["summary"]


def test_edited_golden_file_fails_the_golden_gate(tmp_path, capsys):
    src = Path(str(resources.files("rewardkit.bioaudit") / "data" / "v1.2.0" / "golden.jsonl"))
    lines = src.read_text().splitlines()
    obj = json.loads(lines[0])
    obj["expected_levels"][0] = 0 if obj["expected_levels"][0] != 0 else 3
    lines[0] = json.dumps(obj)
    (tmp_path / "golden.jsonl").write_text("\n".join(lines) + "\n")
    cfg = tmp_path / "rewardkit.toml"
    cfg.write_text('[data]\ngolden = "golden.jsonl"\n')
    assert (
        main(
            [
                "validate",
                "--preset",
                "bioaudit",
                "--config",
                str(cfg),
                "--json",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 1
    )
    gates = json.loads(capsys.readouterr().out)["gates"]
    assert [k for k, ok in gates.items() if not ok] == ["golden"]


def test_bad_config_exits_2_with_one_line(tmp_path, capsys):
    cfg = tmp_path / "rewardkit.toml"
    cfg.write_text("[stats]\nn_resamples = -3\n")
    assert (
        main(
            ["validate", "--preset", "bioaudit", "--config", str(cfg), "--out", str(tmp_path / "o")]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("rewardkit: error: ") and "field 'stats.n_resamples'" in err
    assert err.count("\n") == 1 and not (tmp_path / "o").exists()


def test_calibrate_writes_the_table(tmp_path, capsys):
    assert (
        main(
            [
                "calibrate",
                "--preset",
                "bioaudit",
                "--generator-seeds",
                "3",
                "--no-plots",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "| recipe | Spearman ρ [CI]" in text and "PASS B separates more than A" in text
    for name in ("preregistration.json", "calibration.json", "calibration.md"):
        assert (tmp_path / name).exists()


def test_calibrate_exits_1_when_the_acceptance_fails(tmp_path, capsys):
    cfg = tmp_path / "rewardkit.toml"
    cfg.write_text("[stats]\nseed_tolerance = 0.0001\nn_resamples = 300\n")
    args = ["calibrate", "--preset", "bioaudit", "--config", str(cfg), "--generator-seeds", "0"]
    args += ["--no-plots", "--json", "--out", str(tmp_path)]
    assert main(args) == 1
    cal = json.loads(capsys.readouterr().out)["calibration"]
    failed = [f["name"] for f in cal["acceptance"] if not f["passed"]]
    assert failed and all("seed-stable" in name for name in failed)


def test_calibrate_refuses_a_broken_mapping(tmp_path, capsys):
    cfg = tmp_path / "rewardkit.toml"
    cfg.write_text("[reward]\nmapping = { 0 = 0.0, 1 = 0.3, 2 = 0.6, 3 = 0.8 }\n")
    assert (
        main(
            [
                "calibrate",
                "--preset",
                "bioaudit",
                "--config",
                str(cfg),
                "--no-plots",
                "--out",
                str(tmp_path),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "field 'reward.mapping'" in err and "ceiling" in err
