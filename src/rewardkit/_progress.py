"""Progress bars on long work (rich), silent when not wanted (tests, --json, no terminal)."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

__all__ = ["track"]

T = TypeVar("T")


def track(
    items: Iterable[T], *, description: str, total: int | None = None, enabled: bool | None = None
) -> Iterator[T]:
    """Iterate over ``items`` with a progress bar on stderr when ``enabled`` (default: a tty)."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield from items
        return
    from rich.console import Console
    from rich.progress import track as rich_track

    yield from rich_track(
        items, description=description, total=total, console=Console(stderr=True), transient=True
    )
