"""The rewardkit command: --help, --version, one-line usage errors with exit 2, the demo."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys

import pytest

from rewardkit import __version__
from rewardkit.cli import main


def run(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "rewardkit.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        # A hang guard, not a speed check: the whole demo runs here, on a machine that may be busy.
        timeout=280,
    )


def test_version_and_help(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"rewardkit {__version__}"
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "demo" in out and "--json" in out and "--out" in out


@pytest.mark.parametrize(
    "argv, match",
    [
        (["demo", "--bogus"], "rewardkit: error: No such option '--bogus'"),
        (["nope"], "rewardkit: error: No such command 'nope'"),
        (["demo", "--out"], "rewardkit: error: Option '--out' requires an argument"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(argv, match, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(match)
    assert err.count("\n") == 1


@pytest.fixture(scope="module")
def demo_json(tmp_path_factory):
    """One ``demo --json`` run (the whole demo: each run takes tens of seconds), shared."""
    out = tmp_path_factory.mktemp("demo") / "o"
    p = run("demo", "--json", "--out", str(out))
    assert p.returncode == 0, p.stderr
    return out, json.loads(p.stdout)


def test_demo_writes_artefacts_and_json_summary(demo_json):
    out, summary = demo_json
    assert summary["passed"] is True
    # the core sections' artefacts (each area's demo section adds its own)
    assert {"levels.json", "stack.json", "advantages.json", "checks.json"} <= set(
        summary["artefacts"]
    )
    assert summary["report"] == (out / "report.html").as_posix()
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["artefacts"] == summary["artefacts"]
    levels = json.loads((out / "levels.json").read_text())
    assert levels["injected/B"]["value"] == pytest.approx(0.2353846153846154)


def test_demo_table_output(tmp_path):
    p = run("demo", "--out", str(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    # exit 0 means every check passed; the ok column (last cell of each row) says so too
    # (a check's own text may contain the word FAIL, e.g. a sandbox status)
    ok_cells = re.findall(r"(PASS|FAIL)\s*│\s*$", p.stdout, flags=re.M)
    assert ok_cells and set(ok_cells) == {"PASS"}


def test_out_that_is_a_file_is_rejected(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    p = run("demo", "--out", str(f))
    assert p.returncode == 2
    assert p.stderr.startswith("rewardkit: error: Invalid value for '--out'")


def test_demo_twice_gives_byte_identical_json_artefacts(demo_json, tmp_path):
    a, summary = demo_json
    b = tmp_path / "b"
    p = run("--json", "--out", str(b), "demo")  # global options before the subcommand work too
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["artefacts"] == summary["artefacts"]
    names = sorted(f.name for f in a.glob("*.json"))
    assert "manifest.json" in names and len(names) >= 5
    assert names == sorted(f.name for f in b.glob("*.json"))
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    manifest = json.loads((a / "manifest.json").read_text())
    for name, digest in manifest["artefacts"].items():
        assert digest == "sha256:" + hashlib.sha256((a / name).read_bytes()).hexdigest()
        assert digest in (a / "report.html").read_text()  # the report lists every hash


def test_manifest_keeps_other_commands_artefacts(tmp_path):
    from rewardkit._cliutil import write_artefacts

    write_artefacts(tmp_path, {"a.json": {"x": 1}})
    write_artefacts(tmp_path, {"b.json": {"y": 2}})
    listed = json.loads((tmp_path / "manifest.json").read_text())["artefacts"]
    assert set(listed) == {"a.json", "b.json"}
    (tmp_path / "a.json").unlink()
    write_artefacts(tmp_path, {"b.json": {"y": 3}})
    listed = json.loads((tmp_path / "manifest.json").read_text())["artefacts"]
    assert set(listed) == {"b.json"}
