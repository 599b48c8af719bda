"""The client against real service processes (on the fake model): start, reuse, recovery."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from daemon_util import wait_for

from conch.daemon import process
from conch.daemon.client import ServiceSpec, Timeouts, service_argv, service_status
from conch.daemon.location import Location
from conch.daemon.process import pid_alive, read_pid
from conch.daemon.provider import DaemonProvider
from conch.errors import ProviderError
from conch.messages import GenerationOptions, Message, TextDelta
from conch.providers import ScriptedProvider
from conch.providers.base import complete

MakeProvider = Callable[..., DaemonProvider]


def ask(text: str) -> list[Message]:
    return [Message("system", "echo"), Message("user", text)]


def test_a_request_starts_the_service_and_the_next_one_reuses_it(
    make_provider: MakeProvider, location: Location
) -> None:
    first = make_provider()
    assert complete(first, ask("one")).text.startswith("echo: one [")
    pid = first.service_pid
    assert pid is not None and pid != os.getpid() and pid_alive(pid)
    assert read_pid(location) == pid
    assert location.socket.stat().st_mode & 0o777 == 0o600
    assert location.directory.stat().st_mode & 0o777 == 0o700
    assert first.last_timings == {"request": 1, "pid": pid}

    second = make_provider()  # as from another conch invocation
    assert complete(second, ask("two")).text.startswith("echo: two [")
    assert second.service_pid == pid
    assert second.last_timings == {"request": 2, "pid": pid}
    status = service_status(location)
    assert status is not None and status["requests"] == 2 and status["pid"] == pid
    assert "serving" in location.log_file.read_text()


def test_an_idle_service_exits_and_removes_its_files(
    make_provider: MakeProvider, location: Location
) -> None:
    provider = make_provider(idle_timeout_s=1.0)
    complete(provider, ask("hello"))
    pid = provider.service_pid
    assert pid is not None
    wait_for(lambda: not pid_alive(pid), 20, "the idle service to exit")
    assert not location.socket.exists()
    assert not location.pid_file.exists()
    assert "exiting (idle)" in location.log_file.read_text()


def test_a_service_killed_mid_answer_is_a_clear_error_not_a_hang(
    make_provider: MakeProvider,
) -> None:
    provider = make_provider(timeout=60)
    stream = provider.stream(ask("a long answer delay=0.3"), GenerationOptions())
    assert next(e for e in stream if isinstance(e, TextDelta)).text  # past the start's stages
    assert provider.service_pid is not None
    began = time.monotonic()
    os.kill(provider.service_pid, signal.SIGKILL)
    with pytest.raises(ProviderError, match="stopped in the middle of its answer") as caught:
        list(stream)
    assert time.monotonic() - began < 10
    assert "\n" not in str(caught.value)


def test_a_service_killed_before_answering_is_replaced_and_the_request_retried(
    make_provider: MakeProvider, location: Location
) -> None:
    provider = make_provider()
    answers: list[str] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            answers.append(complete(provider, ask("slow start first=2")).text)
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()

    def busy() -> bool:
        status = service_status(location)
        return status is not None and status["active"] == 1

    wait_for(busy, 20, "the request to reach the service")
    old = read_pid(location)
    assert old is not None
    os.kill(old, signal.SIGKILL)
    thread.join(40)
    assert not thread.is_alive() and not errors, errors
    assert answers[0].startswith("echo: slow start first=2 [")
    assert provider.service_pid not in (None, old)
    assert any("stopped before answering; retrying" in n for n in provider.notes)


def test_a_stale_socket_and_pid_file_are_cleared(
    make_provider: MakeProvider, location: Location
) -> None:
    location.directory.mkdir(mode=0o700, parents=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(location.socket))  # the file stays, nobody listens: a crashed service
    dead.close()
    location.pid_file.write_text("999999999\n")  # above any pid_max: long gone
    provider = make_provider()
    assert complete(provider, ask("fresh")).text.startswith("echo: fresh")
    assert read_pid(location) == provider.service_pid


def test_a_service_of_another_version_or_model_is_replaced(
    make_provider: MakeProvider, location: Location, fake_model: Path
) -> None:
    provider = make_provider()
    spec = ServiceSpec.build(provider.ai, provider.daemon, provider.paths, backend=provider.backend)
    argv = service_argv(spec)
    code = (
        "import sys; from conch import version; version.__version__ = '0.0.1'; "
        "from conch.daemon.serve import main; main(sys.argv[1:])"
    )
    old = subprocess.Popen(
        [sys.executable, "-c", code, *argv[argv.index("serve") :]],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: service_status(location) is not None, 20, "the old service")
        status = service_status(location)
        assert status is not None and status["version"] == "0.0.1"
        assert complete(provider, ask("upgrade")).text.startswith("echo: upgrade")
        assert provider.service_pid not in (None, old.pid)
        assert old.wait(10) == 0  # asked to stop, it stopped cleanly
    finally:
        if old.poll() is None:
            old.kill()
            old.wait(5)
    replaced = provider.service_pid
    os.utime(fake_model, ns=(10**9, 10**9))  # the model file changed on disk
    other = make_provider()
    assert complete(other, ask("new model")).text.startswith("echo: new model")
    assert other.service_pid not in (None, replaced)


def test_two_clients_starting_at_once_share_one_service(
    make_provider: MakeProvider, location: Location
) -> None:
    barrier = threading.Barrier(2)
    providers = {name: make_provider() for name in ("left", "right")}
    answers: dict[str, str] = {}

    def run(name: str) -> None:
        barrier.wait(10)
        answers[name] = complete(providers[name], ask(name)).text

    threads = [threading.Thread(target=run, args=(name,)) for name in providers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(40)
    assert answers["left"].startswith("echo: left [")
    assert answers["right"].startswith("echo: right [")
    pid = providers["left"].service_pid
    assert pid is not None and providers["right"].service_pid == pid
    assert [service.pid for service in process.spawned()] == [pid]
    assert location.log_file.read_text().count("serving on") == 1  # one service ever started


def test_a_service_that_cannot_start_falls_back_to_this_process(
    make_provider: MakeProvider,
) -> None:
    provider = make_provider(
        backend="daemon_fakes:no_such_backend",
        start_timeout_s=60,
        fallback=lambda: ScriptedProvider.of("pwd"),
    )
    began = time.monotonic()
    assert complete(provider, ask("where am i")).text == "pwd"
    assert time.monotonic() - began < 30  # noticed the exit, did not wait out the timeout
    assert provider.in_process
    (note,) = provider.notes
    assert "exited at start" in note and "running the model in this process" in note
    assert "no_such_backend" in note


def test_a_socket_path_too_long_falls_back_without_starting_anything(
    make_provider: MakeProvider, monkeypatch: pytest.MonkeyPatch, runtime: Path
) -> None:
    deep = runtime / ("d" * 60) / ("e" * 60)
    deep.mkdir(mode=0o700, parents=True)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(deep))
    provider = make_provider(fallback=lambda: ScriptedProvider.of("ls"))
    assert complete(provider, ask("list")).text == "ls"
    assert "too long" in provider.notes[0]
    assert process.spawned() == []
    assert not Location.default().log_file.exists()  # no service ever wrote its log


def test_a_service_that_stops_answering_is_killed_and_replaced(
    make_provider: MakeProvider,
) -> None:
    first = make_provider()
    complete(first, ask("one"))
    wedged = first.service_pid
    assert wedged is not None
    os.kill(wedged, signal.SIGSTOP)
    try:
        second = make_provider(timeouts=Timeouts(hello_s=1.0, retire_s=1.0))
        began = time.monotonic()
        assert complete(second, ask("two")).text.startswith("echo: two [")
        assert time.monotonic() - began < 20
        assert second.service_pid not in (None, wedged)
        assert not pid_alive(wedged)
        assert not second.in_process
    finally:
        with contextlib.suppress(OSError):
            os.kill(wedged, signal.SIGKILL)


def test_sigterm_ends_the_service_cleanly(make_provider: MakeProvider, location: Location) -> None:
    provider = make_provider()
    complete(provider, ask("hello"))
    pid = provider.service_pid
    assert pid is not None and location.socket.exists() and location.pid_file.exists()
    os.kill(pid, signal.SIGTERM)
    wait_for(lambda: not pid_alive(pid), 10, "the service to exit on SIGTERM")
    assert not location.socket.exists()
    assert not location.pid_file.exists()
    assert "exiting (stopped)" in location.log_file.read_text()


def test_the_service_counts_tokens_with_its_models_tokenizer(make_provider: MakeProvider) -> None:
    provider = make_provider()
    assert complete(provider, ask("load")).text.startswith("echo: load [")
    assert provider.count_tokens("one two three") == 3
    assert provider.count_tokens("one unknown") is None
    assert not provider.in_process


def test_the_service_scores_a_reply_and_says_when_it_cannot(
    make_provider: MakeProvider, location: Location
) -> None:
    provider = make_provider()
    assert provider.likelihood(ask("one two"), "three four five") == -5.0
    assert provider.likelihood(ask("one"), "unknown") is None
    with pytest.raises(ProviderError, match="failed on purpose"):
        provider.likelihood(ask("one"), "fail")
    # Scored by the service, not in this process: one service, still running.
    assert provider.service_pid is not None and provider.service_pid != os.getpid()
    assert not provider.in_process
    assert complete(provider, ask("after")).text.startswith("echo: after [")
