"""The HTML report and its plots (extra ``[report]``: matplotlib, jinja2).

- :func:`render_report` — the self-contained page of ``rewardkit demo`` (``out/report.html``).
- :mod:`rewardkit.report.plots` — ``png`` / ``bars_png`` / ``lines_png`` / ``table_png`` (Agg,
  PNG bytes) and ``optional_figures`` for the figures of a demo section.
"""

from .html import render_report

__all__ = ["render_report"]
