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
from conch.daemon import client, process
from conch.daemon.client import Timeouts, stop_service
from conch.daemon.location import Location
from conch.daemon.process import pid_alive, read_pid
from conch.daemon.provider import DaemonProvider
from conch.messages import Finished, Note, ProviderEvent
from conch.providers.base import Provider

HERE = Path(__file__).resolve().parent


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A short private XDG_RUNTIME_DIR (socket paths are limited to about 100 bytes)."""
    directory = Path(tempfile.mkdtemp(prefix="conch-rt-"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(directory))
    monkeypatch.delenv("CONCH_DAEMON", raising=False)
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(HERE), path) if p))
    # Services a front end starts (the in-process CLI) run the fake model too.
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
    spawned = process.spawned()
    pids = {p.pid for p in spawned}
    if (pid := read_pid(location)) is not None:
        pids.add(pid)
    for pid in pids:
        if pid_alive(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    for service in spawned:
        with contextlib.suppress(Exception):
            service.wait(5)
    process.reap()


@pytest.fixture
def location(runtime: Path) -> Location:
    return Location.default()


@pytest.fixture
def fake_model(tmp_path: Path) -> Path:
    """A file that passes for a GGUF model (the fake backend never reads it)."""
    path = tmp_path / "fake.gguf"
    path.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\x00" * 56)
    return path


class RecordingProvider(DaemonProvider):
    """A DaemonProvider that keeps the notes and the engine timings its streams carried."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.notes: list[str] = []
        self.last_timings: dict[str, Any] | None = None

    def stream(self, *args: Any, **kwargs: Any) -> Iterator[ProviderEvent]:
        for event in super().stream(*args, **kwargs):
            if isinstance(event, Note):
                self.notes.append(event.text)
            elif isinstance(event, Finished):
                self.last_timings = event.timings
            yield event


@pytest.fixture
def make_provider(runtime: Path, fake_model: Path) -> Callable[..., DaemonProvider]:
    """A DaemonProvider on the fake model; other keyword arguments go to DaemonSettings."""

    def make(
        timeout: float = 30.0,
        backend: str = FAKE_BACKEND,
        fallback: Callable[[], Provider] | None = None,
        timeouts: Timeouts | None = None,
        **daemon: Any,
    ) -> DaemonProvider:
        settings = {"idle_timeout_s": 60.0, "start_timeout_s": 30.0, **daemon}
        ai = AISettings(local=LocalSettings(model_path=str(fake_model)), timeout=timeout)
        return RecordingProvider(
            ai,
            DaemonSettings(**settings),
            Paths.default(),
            backend=backend,
            fallback=fallback,
            timeouts=timeouts,
        )

    return make
