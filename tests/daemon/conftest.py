"""Fixtures for the model service: a private runtime dir, a fake model, and cleanup.

Services started by a test run the fake backend (``daemon_fakes:echo``) unless the test says
otherwise, and are stopped (or killed) when the test ends, so none outlives the test run.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from daemon_util import FAKE_BACKEND

from conch.config.paths import Paths
from conch.config.settings import AISettings, DaemonSettings, LocalSettings
from conch.daemon import client
from conch.daemon.client import DaemonProvider, pid_alive, read_pid, stop_service
from conch.daemon.location import Location

HERE = Path(__file__).resolve().parent


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A short private XDG_RUNTIME_DIR (socket paths are limited to about 100 bytes)."""
    directory = Path(tempfile.mkdtemp(prefix="conch-rt-"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(directory))
    monkeypatch.delenv("CONCH_DAEMON", raising=False)
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(HERE), path) if p))
    monkeypatch.setattr(client, "DEFAULT_BACKEND", FAKE_BACKEND)
    location = Location.default()
    try:
        yield directory
    finally:
        _stop_everything(location)
        shutil.rmtree(directory, ignore_errors=True)


def _stop_everything(location: Location) -> None:
    with contextlib.suppress(Exception):
        stop_service(location)
    pids = {p.pid for p in client._SPAWNED}
    if (pid := read_pid(location)) is not None:
        pids.add(pid)
    for pid in pids:
        if pid_alive(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    for process in list(client._SPAWNED):
        with contextlib.suppress(Exception):
            process.wait(5)
    client._SPAWNED.clear()


@pytest.fixture
def location(runtime: Path) -> Location:
    return Location.default()


@pytest.fixture
def fake_model(tmp_path: Path) -> Path:
    """A file that passes for a GGUF model (the fake backend never reads it)."""
    path = tmp_path / "fake.gguf"
    path.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\x00" * 56)
    return path


@pytest.fixture
def make_provider(runtime: Path, fake_model: Path) -> Callable[..., DaemonProvider]:
    """A DaemonProvider on the fake model; keyword arguments go to DaemonSettings."""

    def make(timeout: float = 30.0, backend: str | None = None, **daemon: Any) -> DaemonProvider:
        settings = {"idle_timeout_s": 60.0, "start_timeout_s": 30.0, **daemon}
        ai = AISettings(local=LocalSettings(model_path=str(fake_model)), timeout=timeout)
        provider = DaemonProvider(ai, DaemonSettings(**settings), Paths.default(), backend=backend)
        provider.notes = []  # type: ignore[attr-defined]
        provider.on_note = provider.notes.append  # type: ignore[attr-defined]
        return provider

    return make
