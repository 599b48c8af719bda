"""What keeps the server safe to leave running: disconnects that stop the model, time
limits, and requests to a local model taking turns (the key and the bind rule:
test_server_auth.py)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable

import httpx
from serverutil import AUTH, SlowProvider, user
from starlette.testclient import TestClient

from conch.server.config import Caps

Server = Callable[..., str]
Client = Callable[..., TestClient]
WAIT = 10.0  # seconds any wait below may take at most


def test_a_client_that_leaves_a_stream_stops_the_model(server_for: Server) -> None:
    provider = SlowProvider(words=2000, pause=0.01)
    base = server_for(provider)
    with httpx.stream(
        "POST",
        f"{base}/v1/chat/completions",
        json={**user("go"), "stream": True},
        headers=AUTH,
        timeout=WAIT,
    ) as response:
        for line in response.iter_lines():
            if '"content":"w' in line:
                break  # the model is writing: leave
    assert provider.closed.wait(WAIT), "the model kept generating after the client left"


def test_a_client_that_leaves_a_whole_request_stops_the_model(server_for: Server) -> None:
    provider = SlowProvider(words=2000, pause=0.01)
    base = server_for(provider)
    done = threading.Event()

    def ask() -> None:
        with contextlib.suppress(httpx.ReadTimeout):
            httpx.post(
                f"{base}/v1/chat/completions",
                json=user("go"),
                headers=AUTH,
                timeout=httpx.Timeout(WAIT, read=0.5),
            )
        done.set()

    threading.Thread(target=ask, daemon=True).start()
    assert provider.started.wait(WAIT)
    assert done.wait(WAIT)
    assert provider.closed.wait(WAIT), "the model kept generating after the client left"


def test_a_request_past_the_time_limit_ends_with_a_504(client_for: Client) -> None:
    provider = SlowProvider(words=2000, pause=0.01)
    client = client_for(provider, caps=Caps(timeout_s=0.3))
    response = client.post("/v1/chat/completions", json=user("go"))
    assert response.status_code == 504 and response.json()["error"]["code"] == "timeout"
    assert provider.closed.wait(WAIT)


def _ask_in_parallel(base: str, count: int) -> list[str]:
    replies: list[str] = []
    errors: list[BaseException] = []

    def ask() -> None:
        try:
            response = httpx.post(
                f"{base}/v1/chat/completions", json=user("go"), headers=AUTH, timeout=WAIT * 3
            )
            replies.append(response.json()["choices"][0]["message"]["content"])
        except BaseException as exc:  # the test reads it below
            errors.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT * 3)
    assert not errors, errors
    return replies


def test_requests_to_a_model_in_this_process_take_turns(server_for: Server) -> None:
    provider = SlowProvider(words=20, pause=0.005, name="local")  # the embedded model, in process
    replies = _ask_in_parallel(server_for(provider), 4)
    assert len(replies) == 4 and all(r.startswith("w0 ") for r in replies)
    assert provider.most == 1


def test_requests_to_a_remote_model_run_in_parallel(server_for: Server) -> None:
    provider = SlowProvider(words=40, pause=0.01, name="openai")
    replies = _ask_in_parallel(server_for(provider), 4)
    assert len(replies) == 4
    assert provider.most > 1
