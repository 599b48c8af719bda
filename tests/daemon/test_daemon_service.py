"""The service run in a thread of the test process, on the fake model: fast control flow."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from daemon_fakes import EchoProvider, StagedEchoProvider
from daemon_util import FAKE_BACKEND

import conch
from conch.config.settings import LocalSettings
from conch.daemon import protocol
from conch.daemon.backend import ServedModel, ServiceConfig
from conch.daemon.client import ServiceSpec, connect
from conch.daemon.location import Location, ServiceUnavailable
from conch.daemon.provider import DaemonProvider
from conch.daemon.service import Service
from conch.errors import ProviderError
from conch.messages import Finished, GenerationOptions, Message, ProviderEvent, Stage
from conch.providers.base import complete


@dataclass
class Running:
    service: Service
    thread: threading.Thread
    location: Location
    result: list[str]

    def stop(self) -> None:
        self.service.stop()
        self.thread.join(10)
        assert not self.thread.is_alive()


@pytest.fixture
def start(location: Location, fake_model: Path) -> Iterator[Callable[..., Running]]:
    """Start a service in a thread on the fake model; every one is stopped at the end."""
    started: list[Running] = []

    def run(
        idle_timeout_s: float = 60.0,
        model: Callable[[LocalSettings, Path], ServedModel] = EchoProvider,
        load: bool = True,
        **service: Any,
    ) -> Running:
        """Keyword arguments go to Service; ``load=False`` leaves the model to the first
        request."""
        config = ServiceConfig(
            socket_path=location.socket,
            pid_file=location.pid_file,
            local=LocalSettings(model_path=str(fake_model)),
            cache_dir=location.directory,
            idle_timeout_s=idle_timeout_s,
            backend=FAKE_BACKEND,
        )
        svc = Service(config, model(config.local, config.cache_dir), **service)
        if load:
            svc.load_model()
        svc.bind()
        result: list[str] = []
        thread = threading.Thread(target=lambda: result.append(svc.serve_forever()), daemon=True)
        thread.start()
        running = Running(svc, thread, location, result)
        started.append(running)
        return running

    yield run
    for running in started:
        running.stop()


def ask(text: str) -> list[Message]:
    return [Message("system", "echo"), Message("user", text)]


def test_socket_is_private_and_its_files_go_when_it_stops(start: Callable[..., Running]) -> None:
    running = start()
    location = running.location
    assert location.socket.stat().st_mode & 0o777 == 0o600
    assert location.directory.stat().st_mode & 0o777 == 0o700
    assert location.pid_file.read_text().strip() == str(os.getpid())
    assert location.pid_file.stat().st_mode & 0o777 == 0o600
    running.stop()
    assert running.result == ["stopped"]
    assert not location.socket.exists()
    assert not location.pid_file.exists()


def test_hello_and_status_describe_the_service(
    start: Callable[..., Running], fake_model: Path
) -> None:
    running = start()
    connection = connect(running.location)
    assert connection is not None
    try:
        hello = connection.hello
        assert hello["type"] == "hello"
        assert hello["version"] == conch.__version__
        assert hello["protocol"] == protocol.PROTOCOL
        assert hello["pid"] == os.getpid()
        assert hello["model"]["path"] == str(fake_model.resolve())
        status = connection.call({"type": "status"}, 5)
    finally:
        connection.close()
    assert status["requests"] == 0
    assert status["loaded"] is True  # loaded before it listened
    assert status["idle_s"] >= 0 and status["uptime_s"] >= 0
    assert status["idle_timeout_s"] == 60.0
    assert status["rss_bytes"] > 10 * 2**20
    assert status["socket"] == str(running.location.socket)


def test_two_clients_at_once_are_served_one_after_the_other(
    start: Callable[..., Running], make_provider: Callable[..., DaemonProvider]
) -> None:
    running = start()
    barrier = threading.Barrier(2)
    answers: dict[str, str] = {}
    stages: dict[str, list[str]] = {}

    def one(name: str) -> None:
        provider = make_provider()
        stages[name] = []

        def seen(event: ProviderEvent) -> None:
            if isinstance(event, Stage):
                stages[name].append(event.label)

        barrier.wait(10)
        answers[name] = complete(provider, ask(f"{name} delay=0.1"), on_event=seen).text

    threads = [threading.Thread(target=one, args=(name,)) for name in ("alpha", "beta")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert set(answers) == {"alpha", "beta"}
    spans = []
    for name, text in answers.items():
        assert text.startswith(f"echo: {name} delay=0.1 [")
        started, ended = (float(x) for x in text.rsplit("[", 1)[1].rstrip("]").split())
        spans.append((started, ended))
    first, second = sorted(spans)
    assert first[1] <= second[0], "the two requests overlapped"
    assert any("waiting for another request" in seen for seen in stages.values())
    assert running.service.status()["requests"] == 2


def test_an_idle_service_exits_by_itself(start: Callable[..., Running]) -> None:
    running = start(idle_timeout_s=0.5)
    running.thread.join(10)
    assert running.result == ["idle"]
    assert not running.location.socket.exists()


def test_a_client_adjusts_the_idle_timeout(
    start: Callable[..., Running], make_provider: Callable[..., DaemonProvider]
) -> None:
    running = start()
    assert complete(make_provider(idle_timeout_s=0.5), ask("hi")).text.startswith("echo: hi")
    running.thread.join(10)
    assert running.result == ["idle"]


def test_a_client_leaving_mid_answer_frees_the_model(
    start: Callable[..., Running], make_provider: Callable[..., DaemonProvider]
) -> None:
    start()
    slow = make_provider().stream(ask("slow delay=1"), GenerationOptions())
    assert next(slow).text
    slow.close()
    began = time.monotonic()
    assert complete(make_provider(), ask("next")).text.startswith("echo: next")
    assert time.monotonic() - began < 5


def test_a_failed_request_is_one_line_and_the_service_carries_on(
    start: Callable[..., Running], make_provider: Callable[..., DaemonProvider]
) -> None:
    start()
    provider = make_provider()
    with pytest.raises(ProviderError, match=r"^the fake model failed on purpose$"):
        complete(provider, ask("fail"))
    assert complete(provider, ask("again")).text.startswith("echo: again")


def test_keepalives_keep_a_slow_answer_within_ai_timeout(
    start: Callable[..., Running], make_provider: Callable[..., DaemonProvider]
) -> None:
    start()
    # Silent for 2.5 s before the first chunk, with a 1.5 s timeout: the keepalives count.
    text = complete(make_provider(timeout=1.5), ask("first=2.5")).text
    assert text.startswith("echo: first=2.5")


def test_a_silent_service_is_a_timeout_not_a_hang(
    location: Location, make_provider: Callable[..., DaemonProvider], fake_model: Path
) -> None:
    provider = make_provider(timeout=0.5)
    location.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(location.socket))
    listener.listen(1)
    held: list[socket.socket] = []

    def answer_hello_then_nothing() -> None:
        conn, _ = listener.accept()
        held.append(conn)
        conn.recv(65536)
        spec = ServiceSpec.build(provider.ai, provider.daemon, provider.paths, backend=FAKE_BACKEND)
        hello = {"type": "hello", "protocol": protocol.PROTOCOL, "version": conch.__version__}
        conn.sendall(protocol.encode({**hello, "pid": 1, "model": spec.identity}))

    thread = threading.Thread(target=answer_hello_then_nothing, daemon=True)
    thread.start()
    began = time.monotonic()
    try:
        with pytest.raises(ProviderError, match=r"sent nothing for 0\.5 s \(ai\.timeout\)"):
            complete(provider, ask("hello?"))
    finally:
        listener.close()
        for conn in held:
            conn.close()
    assert time.monotonic() - began < 5


def test_stopping_during_a_request_tells_the_client(
    start: Callable[..., Running], make_provider: Callable[..., DaemonProvider]
) -> None:
    running = start()
    stream = make_provider().stream(ask("slow delay=0.3"), GenerationOptions())
    assert next(stream).text
    running.service.stop()
    with pytest.raises(ProviderError, match="stopped during the request"):
        list(stream)


def test_the_first_message_must_be_a_hello(start: Callable[..., Running]) -> None:
    running = start()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        sock.connect(str(running.location.socket))
        sock.sendall(protocol.encode({"type": "status"}))
        reply = json.loads(sock.makefile("rb").readline())
    assert reply["type"] == "error" and "hello" in reply["message"]


def test_a_peer_of_another_user_is_hung_up_on(start: Callable[..., Running]) -> None:
    running = start(peer_check=lambda sock: False)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        sock.connect(str(running.location.socket))
        try:
            # the service may hang up before the hello is even written (a broken pipe)
            sock.sendall(protocol.encode({"type": "hello"}))
            answer = sock.recv(100)
        except (ConnectionResetError, BrokenPipeError):
            answer = b""
    assert answer == b""  # hung up on, nothing said


def test_the_models_own_stages_reach_the_client_once_each(
    start: Callable[..., Running], make_provider: Callable[..., DaemonProvider]
) -> None:
    running = start(model=StagedEchoProvider, load=False)
    assert running.service.status()["loaded"] is False
    events: list[ProviderEvent] = []
    text = complete(make_provider(), ask("hi"), on_event=events.append).text
    assert text.startswith("echo: hi")
    stages = [event.label for event in events if isinstance(event, Stage)]
    assert stages == ["loading model", "warming up"]
    finished = [event for event in events if isinstance(event, Finished)]
    assert len(finished) == 1 and finished[0].timings == {"request": 1, "pid": os.getpid()}
    status = running.service.status()
    assert status["loaded"] is True and status["load_seconds"] is not None


def test_a_stale_socket_is_replaced_but_a_live_one_is_not(
    start: Callable[..., Running], location: Location
) -> None:
    location.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(location.socket))  # a socket file nobody listens on
    dead.close()
    running = start()
    connection = connect(location)
    assert connection is not None
    connection.close()
    with pytest.raises(ServiceUnavailable, match="already listening"):
        start()
    assert running.thread.is_alive()


def test_a_malformed_likelihood_request_is_refused_and_the_service_carries_on(
    start: Callable[..., Running], make_provider: Callable[..., DaemonProvider]
) -> None:
    running = start()
    connection = connect(running.location)
    assert connection is not None
    try:
        wire = protocol.messages_to_wire(ask("one"))
        reply = connection.call({"type": "likelihood", "messages": wire, "reply": 3}, 5.0)
        assert reply["type"] == "error" and "reply must be a string" in reply["message"]
        reply = connection.call({"type": "likelihood", "messages": wire, "reply": "two"}, 5.0)
        assert reply == {"type": "done", "logprob": -2.0}
    finally:
        connection.close()
    assert make_provider().likelihood(ask("one two"), "three") == -3.0


def test_a_malformed_tokenize_request_is_refused_and_the_service_carries_on(
    start: Callable[..., Running],
) -> None:
    running = start()
    connection = connect(running.location)
    assert connection is not None
    try:
        reply = connection.call({"type": "tokenize", "text": ["one"]}, 5.0)
        assert reply["type"] == "error" and "text must be a string" in reply["message"]
        connection.call({"type": "load"}, 5.0)
        reply = connection.call({"type": "tokenize", "text": "one two"}, 5.0)
        assert reply == {"type": "done", "tokens": 2}
    finally:
        connection.close()
