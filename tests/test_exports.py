"""The public API: a sorted __all__ that names exactly what the package exports."""

from __future__ import annotations

import rewardkit


def test_all_is_sorted_and_unique():
    assert rewardkit.__all__ == sorted(rewardkit.__all__)
    assert len(set(rewardkit.__all__)) == len(rewardkit.__all__)


def test_all_names_exist_and_nothing_public_is_missing():
    for name in rewardkit.__all__:
        assert hasattr(rewardkit, name), name
    public = {n for n in dir(rewardkit) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(rewardkit, n)).__name__ == "module"}
    assert public - modules == set(rewardkit.__all__) - {"__version__"}
