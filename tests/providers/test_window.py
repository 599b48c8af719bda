"""The context window: configured, the embedded model's, or asked of a real HTTP server
(llama.cpp's /props, vLLM's /v1/models, Ollama's /api/show) once; the default otherwise."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from conch.config.settings import AISettings, LocalSettings, Settings
from conch.providers.window import DEFAULT_WINDOW, context_window, forget_windows

# path -> the JSON body answered to GET (or POST) there; anything else is a 404.
Routes = dict[str, Any]


class _Server:
    """A model server on 127.0.0.1 that answers ``routes`` and counts what it was asked."""

    def __init__(self, routes: Routes) -> None:
        self.routes = routes
        self.asked: list[tuple[str, str, Any]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                owner.asked.append((method, self.path, body))
                answer = owner.routes.get(self.path)
                if callable(answer):
                    answer = answer(body)
                if answer is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                data = json.dumps(answer).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (the slow server's test)

            def do_GET(self) -> None:
                self._answer("GET")

            def do_POST(self) -> None:
                self._answer("POST")

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve() -> Iterator[Callable[[Routes], _Server]]:
    servers: list[_Server] = []
    forget_windows()

    def start(routes: Routes) -> _Server:
        server = _Server(routes)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()
    forget_windows()


def _ai(url: str, model: str | None = "m", **more: Any) -> AISettings:
    return AISettings(provider="openai", base_url=url, model=model, **more)


def test_a_llama_cpp_server_says_its_window_in_props(serve: Callable[[Routes], _Server]) -> None:
    server = serve({"/props": {"default_generation_settings": {"n_ctx": 8192}}})
    window = context_window(_ai(server.url))
    assert (window.tokens, window.source, window.reason) == (8192, "llama.cpp", None)
    assert "/props" in window.describe()


def test_a_vllm_server_says_max_model_len_for_the_model_named(
    serve: Callable[[Routes], _Server],
) -> None:
    models = {
        "object": "list",
        "data": [
            {"id": "other", "object": "model", "max_model_len": 2048},
            {"id": "qwen", "object": "model", "max_model_len": 32768},
        ],
    }
    server = serve({"/v1/models": models})
    window = context_window(_ai(server.url, "qwen"))
    assert (window.tokens, window.source) == (32768, "vllm")


def test_another_model_s_window_is_not_taken_when_several_are_listed(
    serve: Callable[[Routes], _Server],
) -> None:
    models = {
        "object": "list",
        "data": [
            {"id": "a", "object": "model", "max_model_len": 2048},
            {"id": "b", "object": "model", "max_model_len": 32768},
        ],
    }
    server = serve({"/v1/models": models})
    assert context_window(_ai(server.url, "qwen")).tokens == 4096
    single = serve({"/v1/models": {"object": "list", "data": [models["data"][1]]}})
    assert context_window(_ai(single.url, "qwen")).tokens == 32768


def test_a_base_url_that_is_not_a_url_gives_the_default_with_the_reason() -> None:
    window = context_window(_ai("http://[not a url"))
    assert window.tokens == 4096 and window.reason


def test_an_ollama_server_says_num_ctx_else_the_architecture_s_context_length(
    serve: Callable[[Routes], _Server],
) -> None:
    def show(body: Any) -> Any:
        if body["model"] == "tuned":
            return {"parameters": "stop <|im_end|>\nnum_ctx 16384", "model_info": {}}
        return {
            "parameters": "temperature 0.7",
            "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768},
        }

    server = serve(
        {
            "/api/show": show,
            "/api/version": {"version": "0.5.7"},
            "/v1/models": {"data": [{"id": "tuned"}]},
        }
    )
    tuned = context_window(_ai(server.url, "tuned"))
    plain = context_window(_ai(server.url, "qwen2.5-coder:1.5b"))
    assert (tuned.tokens, tuned.source) == (16384, "ollama")
    assert (plain.tokens, plain.source) == (32768, "ollama")
    shows = [body for method, path, body in server.asked if path == "/api/show"]
    assert shows == [{"model": "tuned"}, {"model": "qwen2.5-coder:1.5b"}]


def test_the_server_is_asked_once(serve: Callable[[Routes], _Server]) -> None:
    server = serve({"/props": {"default_generation_settings": {"n_ctx": 8192}}})
    for _ in range(3):
        assert context_window(_ai(server.url)).tokens == 8192
    assert [path for _, path, _ in server.asked] == ["/props"]
    assert context_window(_ai(server.url), refresh=True).tokens == 8192
    assert len(server.asked) == 2


def test_the_config_wins_over_the_server(serve: Callable[[Routes], _Server]) -> None:
    server = serve({"/props": {"default_generation_settings": {"n_ctx": 8192}}})
    window = context_window(_ai(server.url, context_window=12000))
    assert (window.tokens, window.source) == (12000, "config")
    assert server.asked == []


def test_a_server_that_does_not_say_gives_the_default_with_the_reason(
    serve: Callable[[Routes], _Server],
) -> None:
    server = serve({"/v1/models": {"data": [{"id": "m"}]}})
    window = context_window(_ai(server.url))
    assert (window.tokens, window.source) == (DEFAULT_WINDOW, "default")
    assert window.reason is not None and "context_window" in window.reason
    assert "the default" in window.describe()
    # Nothing is posted to a server that is not Ollama: a POST could be taken for work.
    assert [method for method, _, _ in server.asked] == ["GET", "GET", "GET"]


def test_a_server_that_cannot_be_reached_is_asked_again_later() -> None:
    forget_windows()
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    window = context_window(_ai(f"http://127.0.0.1:{port}/v1"))
    assert (window.tokens, window.source) == (DEFAULT_WINDOW, "default")
    assert window.reason is not None and "could not be reached" in window.reason


def test_the_embedded_model_s_window_is_its_n_ctx_and_others_are_not_asked() -> None:
    local = AISettings(provider="local", local=LocalSettings(n_ctx=8192))
    assert context_window(local).tokens == 8192
    assert context_window(AISettings(provider="scripted")).source == "default"
    official = context_window(AISettings(provider="openai", model="gpt-4o-mini"))
    assert official.source == "default" and official.reason is not None


def test_session_and_server_take_the_window_from_the_one_function(
    serve: Callable[[Routes], _Server], monkeypatch: pytest.MonkeyPatch
) -> None:
    from conch.agent.session import Session
    from conch.server.models import ModelTable

    server = serve({"/props": {"default_generation_settings": {"n_ctx": 6144}}})
    session = Session.remote(server.url, "m")
    assert session.context_tokens == 6144
    session.close()
    settings = Settings.model_validate(
        {
            "ai": {"provider": "openai", "base_url": server.url, "model": "m"},
            "models": {
                "big": {"provider": "openai", "base_url": server.url, "context_window": 9000}
            },
        }
    )
    table = ModelTable.from_settings(settings)
    assert table.context_tokens("m") == 6144
    assert table.context_tokens("big") == 9000
    with Session.from_settings(settings) as opened:
        assert opened.context_tokens == 6144


def test_a_server_that_does_not_answer_in_time_gives_the_default_once(
    serve: Callable[[Routes], _Server], monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    import conch.providers.window as window_module

    monkeypatch.setattr(window_module, "PROBE_TIMEOUT_S", 0.2)

    def slow(body: Any) -> Any:
        time.sleep(1.0)
        return {"default_generation_settings": {"n_ctx": 8192}}

    server = serve({"/props": slow})
    window = context_window(_ai(server.url))
    assert (window.tokens, window.source) == (DEFAULT_WINDOW, "default")
    assert window.reason is not None and "did not answer" in window.reason
    assert context_window(_ai(server.url)) == window
    assert len(server.asked) == 1
