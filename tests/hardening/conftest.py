"""The canary of the gate and injection tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from gateutil import CANARY_TEXT


@pytest.fixture
def canary(isolated_dirs: Path, tmp_path: Path) -> Path:
    """A file in the temporary HOME that must survive; refuses to run outside tmp_path."""
    home = Path(os.environ["HOME"]).resolve()
    assert home == isolated_dirs.resolve() and home.is_relative_to(tmp_path.resolve())
    path = home / "canary.txt"
    path.write_text(CANARY_TEXT, encoding="utf-8")
    return path
