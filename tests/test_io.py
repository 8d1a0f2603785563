"""Shared input helpers: JSONL/TOML readers, rng coercion, optional extras."""

from __future__ import annotations

import numpy as np
import pytest

from rewardkit._io import read_jsonl, read_toml, require_field
from rewardkit._optional import have, require
from rewardkit._rng import as_generator
from rewardkit.errors import ConfigError, InputError, MissingExtraError


def parse(obj, path, line):
    return (
        require_field(obj, "id", str, path, line, accepted="a string"),
        require_field(obj, "level", int, path, line, accepted="an int in -1..3"),
    )


def test_read_jsonl_parses_and_skips_blank_lines(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_text('{"id": "t1", "level": 3}\n\n{"id": "t2", "level": -1}\n')
    assert read_jsonl(p, parse) == [("t1", 3), ("t2", -1)]
    assert read_jsonl(p) == [{"id": "t1", "level": 3}, {"id": "t2", "level": -1}]


@pytest.mark.parametrize(
    "text, match",
    [
        (
            '{"id": "t1", "level": 3}\n{"id": "t2", "level": tru}\n',
            r"a\.jsonl, line 2: not valid JSON",
        ),
        ("[1, 2]\n", r"a\.jsonl, line 1: each line must be a JSON object; got list"),
        ('{"id": "t1"}\n', r"a\.jsonl, line 1, field 'level': missing; expected an int in -1\.\.3"),
        (
            '{"id": "t1", "level": true}\n',
            r"line 1, field 'level': expected an int in -1\.\.3; got True",
        ),
        ('{"id": 7, "level": 1}\n', r"line 1, field 'id': expected a string; got 7"),
    ],
)
def test_read_jsonl_errors_name_file_line_and_field(tmp_path, text, match):
    p = tmp_path / "a.jsonl"
    p.write_text(text)
    with pytest.raises(InputError, match=match):
        read_jsonl(p, parse)


def test_read_missing_files(tmp_path):
    with pytest.raises(InputError, match=r"nope\.jsonl: no such file"):
        read_jsonl(tmp_path / "nope.jsonl")
    with pytest.raises(InputError, match=r"nope\.toml: no such file"):
        read_toml(tmp_path / "nope.toml")
    (tmp_path / "bad.toml").write_text("x = \n")
    with pytest.raises(InputError, match=r"bad\.toml: not valid TOML"):
        read_toml(tmp_path / "bad.toml")


def test_as_generator():
    g = np.random.default_rng(3)
    assert as_generator(g, "f") is g
    assert as_generator(5, "f").integers(0, 1000) == np.random.default_rng(5).integers(0, 1000)
    with pytest.raises(
        ConfigError,
        match=r"The 'rng' parameter of f must be a non-negative int "
        r"seed or a numpy\.random\.Generator\. Got -1\.",
    ):
        as_generator(-1, "f")
    with pytest.raises(ConfigError, match=r"Got True"):
        as_generator(True, "f")


def test_optional_extras():
    assert have("json") and not have("rewardkit_no_such_module")
    with pytest.raises(MissingExtraError, match=r"pip install 'rewardkit\[report\]'"):
        require("rewardkit_no_such_module", "report", "Plotting")


def test_read_jsonl_rejects_a_file_without_records(tmp_path):
    p = tmp_path / "empty.jsonl"
    p.write_text("\n  \n")
    with pytest.raises(InputError, match=r"empty\.jsonl: no records: expected one JSON object"):
        read_jsonl(p)
    assert read_jsonl(p, allow_empty=True) == []
