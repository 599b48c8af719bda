"""What keeps the server safe to leave running: the key, the bind rule, disconnects that
stop the model, time limits, and requests to a local model taking turns."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from pathlib import Path

import httpx
import openai
import pytest
from serverutil import SlowProvider, user
from starlette.testclient import TestClient

from conch.agent.builtin import ToolOptions
from conch.errors import UsageError
from conch.providers.scripted import ScriptedProvider
from conch.server.app import create_app
from conch.server.config import Caps, ServerConfig, check_bind, is_loopback
from conch.server.models import ModelTable
from conch.server.run import bound_port, serving

Server = Callable[..., str]
Client = Callable[..., TestClient]
WAIT = 10.0  # seconds any wait below may take at most


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.10", False),
        ("myhost.example", False),
    ],
)
def test_only_loopback_addresses_count_as_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_a_non_loopback_bind_without_a_key_is_refused() -> None:
    with pytest.raises(UsageError, match=r"refusing to listen on 0\.0\.0\.0 without an API key"):
        check_bind("0.0.0.0", None)
    check_bind("0.0.0.0", "s3cret-key")
    check_bind("127.0.0.1", None)
    with pytest.raises(UsageError, match="empty"):
        check_bind("127.0.0.1", "  ")


def test_the_key_is_needed_for_the_api_but_not_for_health(tmp_path: Path) -> None:
    config = ServerConfig(host="0.0.0.0", api_key="s3cret-key", tools=ToolOptions(root=tmp_path))
    app = create_app(config, ModelTable.of({"m": ScriptedProvider.of("hi")}))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        assert client.get("/v1/models").status_code == 401
        wrong = client.get("/v1/models", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "invalid_api_key"
        assert (
            client.get("/v1/models", headers={"Authorization": "Bearer s3cret-key"}).status_code
            == 200
        )
        assert client.get("/health").status_code == 200


def test_a_server_on_every_interface_answers_only_with_the_key(tmp_path: Path) -> None:
    """A real bind on 0.0.0.0; the only traffic goes to 127.0.0.1."""
    config = ServerConfig(
        host="0.0.0.0", port=0, api_key="s3cret-key", tools=ToolOptions(root=tmp_path, audit=False)
    )
    with serving(config, ModelTable.of({"m": ScriptedProvider.of("Keyed reply.")})) as server:
        base = f"http://127.0.0.1:{bound_port(server)}/v1"
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=base, api_key="wrong", max_retries=0).models.list()
        client = openai.OpenAI(base_url=base, api_key="s3cret-key", max_retries=0)
        reply = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}]
        )
        assert reply.choices[0].message.content == "Keyed reply."


def test_a_client_that_leaves_a_stream_stops_the_model(server_for: Server) -> None:
    provider = SlowProvider(words=2000, pause=0.01)
    base = server_for(provider)
    with httpx.stream(
        "POST", f"{base}/v1/chat/completions", json={**user("go"), "stream": True}, timeout=WAIT
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
            response = httpx.post(f"{base}/v1/chat/completions", json=user("go"), timeout=WAIT * 3)
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
