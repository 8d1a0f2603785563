"""The HTML report of ``rewardkit demo`` (extra ``[report]``: matplotlib, jinja2).

- :func:`render_report` — the self-contained page of ``rewardkit demo`` (``out/report.html``).
- :mod:`rewardkit.report.browser` — checks the page in headless Chromium.

The figures in it are drawn by :mod:`rewardkit._plotting` (``png`` / ``bars_png`` /
``lines_png`` / ``table_png``, PNG bytes), which the areas use for their own figures too.
"""

from .html import render_report

__all__ = ["render_report"]
