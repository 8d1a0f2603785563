"""The public API: a sorted __all__ that names exactly what the package exports."""

from __future__ import annotations

import subprocess
import sys

import rewardkit


def test_all_is_sorted_and_unique():
    assert rewardkit.__all__ == sorted(rewardkit.__all__)
    assert len(set(rewardkit.__all__)) == len(rewardkit.__all__)


def test_all_names_exist_and_nothing_public_is_missing():
    for name in rewardkit.__all__:
        assert getattr(rewardkit, name) is not None, name
    public = {n for n in dir(rewardkit) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(rewardkit, n)).__name__ == "module"}
    assert public - modules == set(rewardkit.__all__) - {"__version__"}


def test_lazy_names_are_the_areas_own_objects():
    from rewardkit import audit, sandbox, stats

    assert rewardkit.rank_agreement is stats.rank_agreement
    assert rewardkit.Sandbox is sandbox.Sandbox
    assert rewardkit.validate is audit.validate


def test_import_loads_no_area_until_asked():
    code = (
        "import sys, rewardkit; print(sorted(m for m in sys.modules if m.startswith('rewardkit.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    for area in ("audit", "stats", "sandbox", "selfplay", "envs", "autorater", "bioaudit"):
        assert f"'rewardkit.{area}'" not in out.stdout
