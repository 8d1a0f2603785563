"""rewardkit.toml: defaults, relative paths, and errors naming the file and the field."""

from __future__ import annotations

import pytest

from rewardkit.audit.config import AuditConfig
from rewardkit.errors import InputError


def _write(tmp_path, text):
    p = tmp_path / "rewardkit.toml"
    p.write_text(text)
    return p


def test_defaults_and_values(tmp_path):
    assert AuditConfig().seeds == (42, 1, 7, 123, 2026) and AuditConfig().n_resamples == 2000
    cfg = AuditConfig.from_toml(
        _write(
            tmp_path,
            "[reward]\nmapping = { 0 = 0.0, 1 = 0.2, 2 = 0.5, 3 = 0.85 }\ngamma = 0.25\n"
            '[stats]\nn_resamples = 500\nseeds = [1, 2]\n[data]\ngolden = "g.jsonl"\n',
        )
    )
    assert cfg.mapping == {0: 0.0, 1: 0.2, 2: 0.5, 3: 0.85} and cfg.gamma == 0.25
    assert cfg.n_resamples == 500 and cfg.seeds == (1, 2)
    assert cfg.golden == tmp_path / "g.jsonl"


@pytest.mark.parametrize(
    "text, match",
    [
        ("[rewards]\n", r"field 'rewards': unknown section; accepted: data, judge"),
        ("[reward]\nbeta = 1\n", r"field 'reward.beta': unknown key; accepted: ceiling"),
        (
            "[reward]\ngamma = 1.5\n",
            r"field 'reward.gamma': expected a number in \[0, 1\]; got 1.5",
        ),
        ("[reward]\nrecipe = 'D'\n", r"field 'reward.recipe': expected one of A, B, C"),
        ("[reward]\nmapping = { x = 0.1 }\n", r"field 'reward.mapping.x': expected an integer"),
        ("[reward]\nmapping = { 0 = 'a' }\n", r"field 'reward.mapping.0': expected a finite"),
        ("[reward]\nfactory = 'nocolon'\n", r"field 'reward.factory': expected 'module:callable'"),
        ("[stats]\nn_resamples = 0\n", r"field 'stats.n_resamples': expected an int >= 1; got 0"),
        ("[stats]\nseeds = [1, -1]\n", r"field 'stats.seeds': expected a non-empty list"),
        ("[stats]\nalpha = 0\n", r"field 'stats.alpha': expected a number in \(0, 1\)"),
        ("[data]\ntasks = 3\n", r"field 'data.tasks': expected a path string"),
        ("[stats\n", r"not valid TOML"),
    ],
)
def test_errors_name_file_and_field(tmp_path, text, match):
    p = _write(tmp_path, text)
    with pytest.raises(InputError, match=match) as info:
        AuditConfig.from_toml(p)
    assert str(p) in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        AuditConfig.from_toml(tmp_path / "nope.toml")
