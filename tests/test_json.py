"""Canonical JSON, content hashes and atomic writes."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rewardkit._json import JsonMixin, canonical_json, content_hash, to_plain, write_atomic


@dataclass(frozen=True)
class R(JsonMixin):
    b: float
    a: tuple[int, ...]
    m: dict


def test_sorted_keys_numpy_and_special_floats():
    r = R(b=np.float64(-0.0), a=(np.int64(3), 1), m={2: None, "x": np.bool_(True)})
    assert r.to_json() == '{"a":[3,1],"b":0.0,"m":{"2":null,"x":true}}'


@pytest.mark.parametrize("nan", [float("nan"), np.nan, np.float32("nan"), -np.float64("nan")])
def test_nan_is_an_error_with_its_path_never_null(nan: float) -> None:
    """A NaN is a bug upstream; written as null it would read as "cannot score"."""
    r = R(b=0.5, a=(), m={"task": {"components": [0.1, nan]}})
    with pytest.raises(ValueError, match=r"cannot hold NaN \(at \$\.m\.task\.components\[1\]\)"):
        r.to_json()
    with pytest.raises(ValueError, match=r"NaN \(at \$\.b\)"):
        R(b=nan, a=(), m={}).to_json()


def test_infinity_is_rejected_with_its_path():
    with pytest.raises(ValueError, match=r"infinite value \(at \$\.m\.k\)"):
        canonical_json({"m": {"k": float("inf")}})


def test_colliding_keys_are_rejected():
    with pytest.raises(ValueError, match="same JSON key '1'"):
        to_plain({1: 0, "1": 1})


def test_unknown_types_are_rejected():
    with pytest.raises(TypeError, match=r"cannot put a object into canonical JSON"):
        canonical_json({"x": object()})


@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.text()
        | st.floats(allow_nan=False, allow_infinity=False),
        lambda c: st.lists(c) | st.dictionaries(st.text(), c),
        max_leaves=20,
    )
)
def test_round_trip_is_lossless_and_stable(obj):
    text = canonical_json(obj)
    back = json.loads(text)
    assert canonical_json(back) == text


def test_content_hash():
    assert content_hash({"a": 1, "b": 2}) == content_hash({"b": 2, "a": 1})
    assert content_hash(b"abc") == (
        "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )


def test_write_atomic_replaces_whole_file_and_leaves_no_temp(tmp_path):
    p = tmp_path / "sub" / "out.json"
    write_atomic(p, "old")
    write_atomic(p, "new")
    assert p.read_text() == "new"
    assert os.listdir(p.parent) == ["out.json"]


def test_write_atomic_keeps_old_file_on_failure(tmp_path, monkeypatch):
    p = tmp_path / "out.json"
    write_atomic(p, "old")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(p, "new")
    assert p.read_text() == "old"
    assert os.listdir(tmp_path) == ["out.json"]


def test_write_atomic_gives_the_mode_of_a_plain_open(tmp_path):
    old = os.umask(0o022)
    try:
        p = write_atomic(tmp_path / "r.html", "x")
        assert (p.stat().st_mode & 0o777) == 0o644
    finally:
        os.umask(old)
