"""The demo report rendered in a real headless Chromium: every section, every image, no error."""

from __future__ import annotations

from pathlib import Path

import pytest

from rewardkit._cliutil import write_artefacts
from rewardkit._json import write_atomic
from rewardkit.demo import run_demo
from rewardkit.report import render_report
from rewardkit.report.browser import check_in_browser, find_chromium
from rewardkit.report.html import section_figures

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        find_chromium() is None,
        reason="no Chromium on PATH (Debian: apt-get install chromium; .ci/run installs it "
        "when it runs as root)",
    ),
]
pytest.importorskip("matplotlib", reason="the report needs the [report] extra")


def test_demo_report_renders_every_section_and_image(tmp_path: Path) -> None:
    report = run_demo()
    hashes = write_artefacts(
        tmp_path, {n: o for s in report.sections for n, o in s.artefacts.items()}
    )
    page = write_atomic(tmp_path / "report.html", render_report(report, artefacts=hashes))
    seen = check_in_browser(page)
    assert seen.sections == tuple(s.name for s in report.sections)
    n_figures = sum(len(section_figures(s)) for s in report.sections)
    assert n_figures >= 3
    assert seen.images_total == n_figures
    assert seen.images_loaded == n_figures, seen.broken_images
    assert seen.console_errors == ()
    assert seen.external_refs == ()  # self-contained
    assert seen.title == "rewardkit demo — embedded defaults"
    assert seen.ok


def test_the_check_catches_a_broken_page(tmp_path: Path) -> None:
    # The oracle must be able to fail: broken images, console errors and exceptions are seen.
    page = tmp_path / "broken.html"
    page.write_text(
        "<!DOCTYPE html><html><head><title>broken</title></head><body>"
        '<section data-section="a"><img alt="corrupt" src="data:image/png;base64,AAAA"></section>'
        '<section data-section="b"><img alt="missing" src="missing.png"></section>'
        '<script>console.error("boom"); throw new Error("kaput");</script>'
        "</body></html>"
    )
    seen = check_in_browser(page)
    assert seen.sections == ("a", "b")
    assert seen.images_total == 2 and seen.images_loaded == 0
    assert set(seen.broken_images) == {"a/corrupt", "b/missing"}
    joined = "\n".join(seen.console_errors)
    assert "console.error: boom" in joined
    assert "kaput" in joined
    assert "missing.png" in joined  # the failed file load is logged by the browser
    assert seen.external_refs == ("missing.png",)
    assert not seen.ok
