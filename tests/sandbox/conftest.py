"""Fixtures of the sandbox tests."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest


@pytest.fixture
def open_dir():
    """A directory under /tmp that every uid can traverse (the workers' dropped uids too)."""
    d = Path(tempfile.mkdtemp(prefix="rk-removal-", dir="/tmp"))
    d.chmod(0o755)
    try:
        yield d
    finally:
        subprocess.run(["rm", "-rf", str(d)], check=False)
