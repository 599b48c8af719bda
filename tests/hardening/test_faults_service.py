"""The model service under faults: killed mid-answer, its socket deleted while it runs, its
model file truncated. Each is recovered (the request is answered) or reported (one line, exit
5, a history entry), never a hang or a traceback. The service runs the fake model of
tests/daemon (``daemon_fakes:echo``) except where the real engine is the point."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from report import record

from cliutil import CliResult, write_config
from conch.config.paths import Paths
from conch.config.settings import AISettings, DaemonSettings, LocalSettings
from conch.daemon import client, process
from conch.daemon.client import service_status, stop_service
from conch.daemon.location import Location
from conch.daemon.process import pid_alive, read_pid
from conch.daemon.provider import DaemonProvider
from conch.messages import Message
from conch.providers.base import complete
from conch.storage.history import History

DAEMON_TESTS = Path(__file__).resolve().parent.parent / "daemon"
FAKE_BACKEND = "daemon_fakes:echo"
Conch = Callable[..., CliResult]


@pytest.fixture
def location(monkeypatch: pytest.MonkeyPatch) -> Iterator[Location]:
    """A private runtime dir whose services run the fake model; all stopped at the end."""
    directory = Path(tempfile.mkdtemp(prefix="conch-rt-"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(directory))
    monkeypatch.delenv("CONCH_DAEMON", raising=False)
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(DAEMON_TESTS), path) if p))
    monkeypatch.setattr(client, "DEFAULT_BACKEND", FAKE_BACKEND)
    where = Location.default()
    try:
        yield where
    finally:
        with contextlib.suppress(Exception):
            stop_service(where)
        for service in process.spawned():
            if pid_alive(service.pid):
                with contextlib.suppress(OSError):
                    os.kill(service.pid, signal.SIGKILL)
            with contextlib.suppress(Exception):
                service.wait(5)
        process.reap()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def fake_model(tmp_path: Path) -> Path:
    path = tmp_path / "fake.gguf"
    path.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\x00" * 56)
    return path


def provider_for(model: Path) -> DaemonProvider:
    ai = AISettings(local=LocalSettings(model_path=str(model)), timeout=30)
    daemon = DaemonSettings(idle_timeout_s=60.0, start_timeout_s=30.0)
    return DaemonProvider(ai, daemon, Paths.default(), backend=FAKE_BACKEND)


def ask(text: str) -> list[Message]:
    return [Message("user", text)]


def test_a_deleted_socket_gets_a_new_service_and_the_old_one_goes(
    location: Location, fake_model: Path
) -> None:
    provider = provider_for(fake_model)
    try:
        assert complete(provider, ask("first")).text.startswith("echo: first")
        old = read_pid(location)
        assert old is not None
        location.socket.unlink()  # a cleaner of /run or /tmp took it
        answer = complete(provider, ask("second")).text
        new = read_pid(location)
    finally:
        provider.close()
    assert answer.startswith("echo: second")
    assert new is not None and new != old and location.socket.exists()
    deadline = time.monotonic() + 15
    while pid_alive(old) and time.monotonic() < deadline:
        time.sleep(0.1)
    record("service", "socket-deleted", recovered=True, old_service_left=pid_alive(old))
    assert not pid_alive(old), "the unreachable service was left running"


def test_the_service_killed_mid_answer_is_reported_by_the_cli(
    location: Location, fake_model: Path, conch: Conch, isolated_dirs: Path
) -> None:
    write_config(
        isolated_dirs,
        f"ai:\n  provider: local\n  local:\n    model_path: {fake_model}\n"
        "generation:\n  dry_run: false\n  review: 1\n  candidates: 1\n"
        "validation:\n  enabled: false\n",
    )
    killed: list[int] = []

    def kill_when_answering() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            status = service_status(location)
            if status is not None and status.get("active") == 1:
                time.sleep(0.5)  # some of the answer is out
                pid = read_pid(location)
                if pid is not None:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                return
            time.sleep(0.02)

    killer = threading.Thread(target=kill_when_answering)
    killer.start()
    result = conch("--print", "list files delay=0.2")
    killer.join(40)
    assert killed, "the service never took the request"
    entry = History(Paths.default().state_dir).latest()
    record("service", "killed-mid-answer", code=result.code, message=result.err.strip())
    assert "Traceback" not in result.err
    assert result.code == 5, result.err
    assert result.err.startswith("conch: ") and result.err.count("\n") == 1
    assert "stopped in the middle of its answer" in result.err
    assert entry is not None and entry.exit_code == 5


def test_a_truncated_model_file_is_one_line_not_a_crash(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    """The real engine on a model file cut short (a download that stopped): the one-shot CLI
    in this process and through the service say what is wrong in one line."""
    model = tmp_path / "cut.gguf"
    model.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\x07" * 4096)
    write_config(isolated_dirs, f"ai:\n  provider: local\n  local:\n    model_path: {model}\n")
    result = conch("--no-daemon", "--print", "list files")
    record("service", "truncated-model", code=result.code, message=result.err.strip())
    assert "Traceback" not in result.err
    assert result.code in (1, 5), result.err
    assert result.err.startswith("conch: ") and result.err.count("\n") == 1
    assert str(model) in result.err
