"""A file path that is not a path (a NUL byte in it, an int, bytes) given to any reader of the
public API is an InputError, like a missing file — not a ValueError or TypeError from os."""

from __future__ import annotations

import pytest

from rewardkit.audit.data import read_items
from rewardkit.bioaudit import read_levels, read_trajectories
from rewardkit.errors import InputError
from rewardkit.selfplay import load_bank, read_bank_file

READERS = {
    "read_levels": read_levels,
    "read_trajectories": read_trajectories,
    "read_items": read_items,
    "read_bank_file": read_bank_file,
    "load_bank": lambda p: load_bank(path=p),
}


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize(
    ("path", "says"),
    [("a\0b.jsonl", "holds a NUL byte"), (3, "got int"), (b"x.jsonl", "got bytes")],
    ids=["nul", "int", "bytes"],
)
def test_a_path_that_is_not_a_path_is_an_input_error(reader, path, says):
    with pytest.raises(InputError, match=says):
        READERS[reader](path)
