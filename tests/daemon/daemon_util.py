"""Helpers shared by the model service's tests."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

# The backend spawned services run in these tests (tests/daemon is on their PYTHONPATH).
FAKE_BACKEND = "daemon_fakes:echo"


def wait_for(condition: Callable[[], bool], seconds: float, what: str) -> None:
    """Poll ``condition`` until it holds; fail the test after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    pytest.fail(f"timed out after {seconds:g} s waiting for {what}")
