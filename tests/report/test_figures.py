"""The figures of the area sections: present on the demo, small, and byte-identical per run."""

from __future__ import annotations

import io
import struct

import pytest

from rewardkit.demo import SECTIONS, run_demo

pytest.importorskip("matplotlib", reason="the figures need the [report] extra")

from rewardkit._plotting import PASS_FAIL_FILL, table_png

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# section → captions (by their start) it must carry: issue 9's list of plots
EXPECTED = {
    "audit": ("Calibration: reward vs gold", "Calibration intervals", "Spike-in", "The five"),
    "envs": ("Red-team library", "Red-team fuzzing", "Sweep: task success vs cost"),
    "sql": ("SQL red-team",),
    "selfplay": ("Simulation",),
    "bioaudit": ("Engine levels",),
    "sandbox": ("Statuses",),
}
AREA_SPECS = [
    s for s in SECTIONS if s.split(":")[0].removesuffix(".demo").rsplit(".", 1)[-1] in EXPECTED
]


def _size(png: bytes) -> tuple[int, int]:
    """Width and height in pixels, from the PNG's IHDR chunk."""
    assert png.startswith(PNG_MAGIC) and png[12:16] == b"IHDR"
    w, h = struct.unpack(">II", png[16:24])
    return int(w), int(h)


@pytest.fixture(scope="module")
def figures() -> dict[str, dict[str, bytes]]:
    report = run_demo(sections=AREA_SPECS)
    assert not report.skipped, report.skipped
    return {s.name: dict(s.figures) for s in report.sections}


def test_every_area_section_has_its_figures(figures: dict[str, dict[str, bytes]]) -> None:
    assert set(figures) == set(EXPECTED)
    for name, starts in EXPECTED.items():
        captions = list(figures[name])
        for start in starts:
            assert any(c.startswith(start) for c in captions), (name, start, captions)
        for caption, png in figures[name].items():
            w, h = _size(png)
            # readable on a page without scrolling sideways; the red-team table is the tallest
            assert 300 <= w <= 1000 and 150 <= h <= 1600, (name, caption, w, h)  # long tables grow


@pytest.mark.slow
def test_figures_are_byte_identical_across_two_runs(figures: dict[str, dict[str, bytes]]) -> None:
    again = {s.name: dict(s.figures) for s in run_demo(sections=AREA_SPECS).sections}
    assert again.keys() == figures.keys()
    for name in figures:
        assert again[name].keys() == figures[name].keys()
        diff = [c for c in figures[name] if again[name][c] != figures[name][c]]
        assert not diff, (name, diff)


def _colours(png: bytes) -> set[tuple[int, int, int]]:
    from matplotlib.image import imread

    px = (imread(io.BytesIO(png), format="png")[..., :3] * 255).round().astype(int)
    return {tuple(int(v) for v in p) for p in px.reshape(-1, 3)}


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]


def test_table_fills_the_pass_fail_column_only() -> None:
    rows = [("a", "PASS", "fine"), ("b", "FAIL", "broken")]
    with_fill = table_png(("x", "result", "why"), rows, title="t", pass_fail_col=1)
    without = table_png(("x", "result", "why"), rows, title="t")
    fills = {_rgb(PASS_FAIL_FILL["PASS"]), _rgb(PASS_FAIL_FILL["FAIL"])}
    assert fills <= _colours(with_fill)
    assert not fills & _colours(without)
    # one more row, a taller figure of the same width
    taller = table_png(("x", "result", "why"), [*rows, ("c", "PASS", "")], title="t")
    (w1, h1), (w2, h2) = _size(without), _size(taller)
    assert w1 == w2 and h2 > h1
    assert table_png(("x", "result", "why"), rows, title="t", pass_fail_col=1) == with_fill
