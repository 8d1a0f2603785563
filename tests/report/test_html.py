"""The HTML report: self-contained, one section per demo section, escaped, hashes listed."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from rewardkit import Check, Section
from rewardkit.demo import DemoReport, run_demo
from rewardkit.report.browser import check_in_browser, find_chromium

pytest.importorskip("jinja2", reason="the report needs the [report] extra")
pytest.importorskip("matplotlib", reason="the report needs the [report] extra")

from rewardkit._plotting import png
from rewardkit.report import render_report
from rewardkit.report.html import section_figures

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _dot() -> bytes:
    return png(lambda fig: fig.add_subplot().plot([0, 1], [1, 0]), width_in=1, height_in=1)


def test_every_section_figure_and_artefact_hash_is_on_the_page() -> None:
    report = run_demo()
    hashes = {
        name: f"sha256:{i:064x}"
        for i, name in enumerate(["levels.json", "stack.json", "advantages.json", "checks.json"])
    }
    html = render_report(report, artefacts=hashes)
    for s in report.sections:
        assert f'id="sec-{s.name}"' in html and s.title in html
        for caption in s.figures:
            assert f'alt="{caption}"' in html
    for digest in hashes.values():
        assert digest in html  # the manifest, and each section's own artefacts
    uris = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    assert len(uris) == sum(len(section_figures(s)) for s in report.sections) >= 3
    assert all(base64.b64decode(u).startswith(PNG_MAGIC) for u in uris)
    # self-contained: no src/href other than data: URIs and in-page anchors
    refs = re.findall(r'(?:src|href)="([^"]*)"', html)
    assert all(r.startswith(("data:", "#")) for r in refs), refs
    assert "ALL CHECKS PASS" in html
    assert render_report(report, artefacts=hashes) == html  # no time stamp: same page


def test_text_is_escaped_and_failures_and_skips_are_shown() -> None:
    evil = Section(
        "evil",
        "<script>alert(1)</script>",
        (Check("x < y & z", "1", "2", False),),
        {"evil.json": {}},
        {"a <b> plot": _dot()},
    )
    report = DemoReport(
        (evil,),
        {"rewardkit.audit.demo:demo_section": "package rewardkit.audit is not in this build"},
    )
    html = render_report(report, artefacts={"evil.json": "sha256:" + "0" * 64})
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "x &lt; y &amp; z" in html and 'alt="a &lt;b&gt; plot"' in html
    assert "1 CHECK(S) FAIL" in html
    assert "rewardkit.audit.demo:demo_section" in html and "not in this build" in html


def test_png_artefacts_are_shown_as_figures() -> None:
    data = _dot()
    s = Section("a", "A", (), {"plot.png": data, "notes.md": "# x", "fake.png": b"not a png"})
    html = render_report(DemoReport((s,)), artefacts={})
    assert html.count("data:image/png;base64,") == 1 and 'alt="plot.png"' in html


def test_section_to_dict_lists_figure_hashes_not_bytes() -> None:
    data = _dot()
    s = Section("a", "A", (), {}, {"fig": data})
    d = s.to_dict()
    assert d["figures"]["fig"].startswith("sha256:") and len(d["figures"]["fig"]) == 71
    assert s.to_json()  # JSON-able


def test_plots_are_deterministic_png() -> None:
    a, b = _dot(), _dot()
    assert a.startswith(PNG_MAGIC) and a == b


def test_optional_figures_without_matplotlib(monkeypatch: pytest.MonkeyPatch) -> None:
    from rewardkit import _plotting as plots

    monkeypatch.setattr(plots, "have", lambda module: False)
    assert plots.optional_figures(lambda: {"x": b"never built"}) == {}


def test_no_chromium_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REWARDKIT_CHROMIUM", str(tmp_path / "no-such-browser"))
    assert find_chromium() is None
    with pytest.raises(FileNotFoundError, match="No Chromium found"):
        check_in_browser(tmp_path / "x.html")
