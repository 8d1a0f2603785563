"""The self-contained HTML report of ``rewardkit demo``.

Usage::

    from rewardkit.demo import run_demo
    from rewardkit.report import render_report
    report = run_demo()
    html = render_report(report, artefacts={"levels.json": "sha256:…", ...})

One page, no external resource (CSS inline, plots as base64 PNG ``data:`` URIs), so it opens
from disk, from a CI artefact store or as an e-mail attachment. It has a summary (every check,
every section), one ``<section>`` per demo section (its checks, its figures and any PNG it
wrote as an artefact, its artefacts with their hashes), the sections that were skipped and
why, and the manifest of all artefacts. Rendering uses a jinja2 template with autoescaping;
it embeds no time stamp, so the same demo gives the same page.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._optional import require
from .._version import __version__

if TYPE_CHECKING:
    from .._results import Section
    from ..demo import DemoReport

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

__all__ = ["render_report", "section_figures"]


def _data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def section_figures(section: Section) -> dict[str, bytes]:
    """The figures a section shows: its ``figures``, then any PNG it wrote as an artefact."""
    extra = {
        name: data
        for name, data in section.artefacts.items()
        if name.endswith(".png") and isinstance(data, bytes) and data.startswith(PNG_MAGIC)
    }
    return {**section.figures, **extra}


def render_report(
    report: DemoReport,
    *,
    artefacts: Mapping[str, str],
    title: str = "rewardkit demo — embedded defaults",
) -> str:
    """The report page as a string. ``artefacts``: file name → content hash (the manifest)."""
    jinja2 = require("jinja2", "report", "The HTML report")
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("rewardkit.report", "templates"),
        autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    sections: list[dict[str, Any]] = []
    for s in report.sections:
        sections.append(
            {
                "name": s.name,
                "title": s.title,
                "description": s.description,
                "passed": all(c.passed for c in s.checks),
                "checks": s.checks,
                "figures": [
                    {"name": name, "src": _data_uri(data)}
                    for name, data in section_figures(s).items()
                ],
                "artefacts": [(name, artefacts.get(name, "not written")) for name in s.artefacts],
            }
        )
    n_checks = sum(len(s.checks) for s in report.sections)
    n_failed = sum(not c.passed for s in report.sections for c in s.checks)
    return str(
        env.get_template("report.html.j2").render(
            title=title,
            version=__version__,
            passed=report.passed,
            n_checks=n_checks,
            n_failed=n_failed,
            sections=sections,
            skipped=sorted(report.skipped.items()),
            manifest=sorted(artefacts.items()),
        )
    )
