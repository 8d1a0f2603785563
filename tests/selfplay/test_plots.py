"""The self-play curves: a subset of panels, and a clear error for an unknown one."""

from __future__ import annotations

import pytest

from rewardkit.errors import ConfigError
from rewardkit.selfplay import load_bank, simulate

pytest.importorskip("matplotlib", reason="the curves need the [report] extra")

from rewardkit.selfplay.plots import render_curves


@pytest.fixture(scope="module")
def sim():
    bank = load_bank(task_ids=("remove_all", "sum_evens"))
    return simulate(("A",), 5, rng=0, n_seeds=1, bank=bank)


def test_panels_subset_is_a_smaller_png(sim):
    full = render_curves(sim)
    three = render_curves(sim, panels=("D_s", "H_y", "null_mi_mean"))
    assert three.startswith(b"\x89PNG\r\n\x1a\n") and len(three) < len(full)
    assert render_curves(sim, panels=("D_s", "H_y", "null_mi_mean")) == three


@pytest.mark.parametrize("panels", [("D_s", "nope"), ()])
def test_unknown_panel_is_refused(sim, panels):
    with pytest.raises(ConfigError, match=r"'panels' parameter of render_curves must name"):
        render_curves(sim, panels=panels)
