"""The OpenAI-compatible provider against a real HTTP server on 127.0.0.1 that each test scripts."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import keyring
import keyring.backend
import pytest

from conch.config.settings import AISettings
from conch.errors import ConfigError, ProviderError
from conch.messages import (
    Finished,
    GenerationOptions,
    Message,
    TextDelta,
    ToolCall,
    ToolSpec,
    Usage,
)
from conch.providers.base import Provider, complete
from conch.providers.openai import OpenAIProvider

KEY = "sk-test-0123456789abcdef"
HELLO = [Message("system", "be brief"), Message("user", "list files")]

# -- the scripted server -----------------------------------------------------------------------


@dataclass
class Reply:
    """One scripted answer: ``parts`` are written and flushed one by one (streamed)."""

    status: int = 200
    parts: list[bytes] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    stall: bool = False  # hold the request until the test ends (for timeouts)


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


def sse(*events: Any, done: bool = True, newline: str = "\n") -> Reply:
    lines = [f"data: {json.dumps(e)}{newline}{newline}".encode() for e in events]
    if done:
        lines.append(f"data: [DONE]{newline}{newline}".encode())
    return Reply(parts=lines, headers={"Content-Type": "text/event-stream"})


def body_json(data: Any, status: int = 200, **headers: str) -> Reply:
    return Reply(
        status, [json.dumps(data).encode()], {"Content-Type": "application/json", **headers}
    )


def delta(content: str | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = dict(extra)
    if content is not None:
        d["content"] = content
    return {"choices": [{"index": 0, "delta": d, "finish_reason": finish}]}


def usage(prompt: int, completion: int) -> dict[str, Any]:
    return {"choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion}}


class FakeServer:
    """Answers POSTs from ``replies`` in order (the last one repeats) and GET /models;
    ``routes`` answers other paths (a llama.cpp server's ``/props``, ``/tokenize``)."""

    def __init__(
        self,
        replies: list[Reply],
        models: Reply | None = None,
        routes: dict[str, Reply] | None = None,
    ) -> None:
        self.replies = list(replies)
        self.models = models or body_json({"data": [{"id": "served-model"}]})
        self.routes = routes or {}
        self.seen: list[Seen] = []
        self.release = threading.Event()
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.handle_error = lambda request, address: None  # type: ignore[method-assign]
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    @property
    def posts(self) -> list[Seen]:
        return [s for s in self.seen if s.method == "POST"]

    def _next(self, seen: Seen) -> Reply:
        with self._lock:
            self.seen.append(seen)
            if seen.path in self.routes:
                return self.routes[seen.path]
            if seen.method == "GET":
                return self.models
            return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._answer(None)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self._answer(json.loads(raw) if raw else None)

            def _answer(self, body: Any) -> None:
                headers = {k.lower(): v for k, v in self.headers.items()}
                reply = server._next(Seen(self.command, self.path, headers, body))
                if reply.stall:
                    server.release.wait(10)
                    return
                try:
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    for part in reply.parts:
                        self.wfile.write(part)
                        self.wfile.flush()
                except OSError:
                    pass  # the client gave up first

        return Handler

    def stop(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(10)


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[FakeServer] = []

    def start(
        *replies: Reply, models: Reply | None = None, routes: dict[str, Reply] | None = None
    ) -> FakeServer:
        server = FakeServer(list(replies), models, routes)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def providers() -> Iterator[Any]:
    made: list[OpenAIProvider] = []
    sleeps: list[float] = []

    def make(url: str, **kwargs: Any) -> OpenAIProvider:
        kwargs.setdefault("model", "test-model")
        kwargs.setdefault("api_key", KEY)
        kwargs.setdefault("timeout", 5.0)
        kwargs.setdefault("max_retries", 0)
        provider = OpenAIProvider(url, backoff_base=0.001, sleep=sleeps.append, **kwargs)
        made.append(provider)
        return provider

    make.sleeps = sleeps  # type: ignore[attr-defined]
    yield make
    for provider in made:
        provider.close()


class EmptyKeyring(keyring.backend.KeyringBackend):
    """A keyring with nothing in it, so a developer's real keyring never leaks into tests."""

    priority = 1  # type: ignore[assignment]

    def get_password(self, service: str, username: str) -> str | None:
        return None

    def set_password(self, service: str, username: str, password: str) -> None:
        raise NotImplementedError

    def delete_password(self, service: str, username: str) -> None:
        raise NotImplementedError


@pytest.fixture
def empty_keyring() -> Iterator[None]:
    previous = keyring.get_keyring()
    keyring.set_keyring(EmptyKeyring())
    try:
        yield
    finally:
        keyring.set_keyring(previous)


def unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def error_of(provider: Provider, options: GenerationOptions | None = None) -> str:
    with pytest.raises(ProviderError) as caught:
        complete(provider, HELLO, options)
    message = str(caught.value)
    assert "\n" not in message
    assert KEY not in message
    return message


# -- streaming ---------------------------------------------------------------------------------


def test_streams_text_in_several_deltas_and_ends_with_the_reported_usage(serve, providers) -> None:
    server = serve(sse(delta("ls"), delta(" -la"), delta(" ~", finish="stop"), usage(12, 3)))
    provider = providers(server.url)
    events = list(provider.stream(HELLO, GenerationOptions()))
    assert events == [
        TextDelta("ls"),
        TextDelta(" -la"),
        TextDelta(" ~"),
        Finished(Usage(12, 3), "stop"),
    ]


def test_tolerates_crlf_line_endings_comments_and_keepalives(serve, providers) -> None:
    reply = sse(delta("pwd", finish="stop"), newline="\r\n")
    reply.parts.insert(0, b": keepalive\r\n\r\nevent: message\r\n")
    provider = providers(serve(reply).url)
    response = complete(provider, HELLO)
    assert response.text == "pwd"
    assert response.usage == Usage(0, 0)  # no usage chunk: zeros


def test_reassembles_streamed_tool_call_fragments_into_whole_tool_calls(serve, providers) -> None:
    def frag(index: int, **fields: Any) -> dict[str, Any]:
        return delta(tool_calls=[{"index": index, **fields}])

    server = serve(
        sse(
            frag(0, id="call_a", type="function", function={"name": "run", "arguments": ""}),
            frag(0, function={"arguments": '{"cmd": '}),
            frag(1, id="call_b", type="function", function={"name": "peek", "arguments": "{"}),
            frag(0, function={"arguments": '"ls"}'}),
            frag(1, function={"arguments": '"path": "."}'}),
            delta(finish="tool_calls"),
            usage(20, 9),
        )
    )
    response = complete(providers(server.url), HELLO)
    assert response.tool_calls == (
        ToolCall("call_a", "run", '{"cmd": "ls"}'),
        ToolCall("call_b", "peek", '{"path": "."}'),
    )
    assert response.finish_reason == "tool_calls"
    assert response.usage == Usage(20, 9)


def test_tool_calls_are_flushed_when_the_stream_ends_without_a_finish_reason(
    serve, providers
) -> None:
    fragment = {"index": 0, "id": "c1", "function": {"name": "run", "arguments": "{}"}}
    server = serve(sse(delta(tool_calls=[fragment]), done=False))
    response = complete(providers(server.url), HELLO)
    assert response.tool_calls == (ToolCall("c1", "run", "{}"),)


def test_accepts_one_json_body_from_a_server_that_ignores_stream(serve, providers) -> None:
    server = serve(
        body_json(
            {
                "choices": [
                    {
                        "message": {
                            "role": "assistant",
                            "content": "df -h",
                            "tool_calls": [
                                {"id": "t1", "function": {"name": "run", "arguments": "{}"}}
                            ],
                        },
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 7, "completion_tokens": 2},
            }
        )
    )
    response = complete(providers(server.url), HELLO)
    assert response.text == "df -h"
    assert response.tool_calls == (ToolCall("t1", "run", "{}"),)
    assert response.usage == Usage(7, 2)
    assert response.finish_reason == "stop"


# -- the request -------------------------------------------------------------------------------


def test_the_request_body_carries_model_messages_sampling_and_stream_flags(
    serve, providers
) -> None:
    server = serve(sse(delta("ok", finish="stop")))
    tool = ToolSpec("run", "Run a command.", {"type": "object"})
    options = GenerationOptions(temperature=0.3, max_tokens=64, stop=("\n",), seed=7, grammar="g")
    complete(providers(server.url), HELLO, options, tools=[tool])
    (seen,) = server.posts
    assert seen.path == "/v1/chat/completions"
    assert seen.body["model"] == "test-model"
    assert seen.body["messages"] == [m.to_openai() for m in HELLO]
    assert seen.body["stream"] is True
    assert seen.body["stream_options"] == {"include_usage": True}
    assert seen.body["temperature"] == 0.3
    assert seen.body["max_tokens"] == 64
    assert seen.body["stop"] == ["\n"]
    assert seen.body["seed"] == 7
    assert seen.body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "run",
                "description": "Run a command.",
                "parameters": {"type": "object"},
            },
        }
    ]
    assert seen.body["grammar"] == "g"  # a local server: llama.cpp honours it


def test_a_json_schema_becomes_a_strict_response_format(serve, providers) -> None:
    server = serve(sse(delta("{}", finish="stop")))
    schema = {"type": "object", "properties": {"command": {"type": "string"}}}
    complete(providers(server.url), HELLO, GenerationOptions(json_schema=schema))
    assert server.posts[0].body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "response", "schema": schema, "strict": True},
    }
    assert "grammar" not in server.posts[0].body


def openai_itself() -> tuple[OpenAIProvider, list[dict[str, Any]]]:
    """A provider for api.openai.com whose requests never leave the process: the bodies it
    sent, answered with one short reply."""
    bodies: list[dict[str, Any]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        reply = {"choices": [{"message": {"content": "ls"}, "finish_reason": "stop"}]}
        return httpx.Response(200, json=reply)

    provider = OpenAIProvider(
        "https://api.openai.com/v1",
        "gpt-4o-mini",
        KEY,
        5.0,
        0,
        transport=httpx.MockTransport(answer),
    )
    return provider, bodies


def test_grammar_is_never_sent_to_openai_itself() -> None:
    provider, bodies = openai_itself()
    assert complete(provider, HELLO, GenerationOptions(grammar="root ::= x")).text == "ls"
    assert "grammar" not in bodies[0]


LLAMA_CPP_ROUTES = {
    "/props": body_json({"eos_token": "<|im_end|>", "total_slots": 1}),
    "/tokenize": body_json({"tokens": [151645]}),
}


def test_end_bias_is_a_logit_bias_on_the_end_token_a_llama_cpp_server_names(
    serve, providers
) -> None:
    server = serve(sse(delta("ls", finish="stop")), routes=LLAMA_CPP_ROUTES)
    provider = providers(server.url)
    complete(provider, HELLO, GenerationOptions(end_bias=2.0))
    complete(provider, HELLO, GenerationOptions(end_bias=1.5))
    chats = [s for s in server.posts if s.path == "/v1/chat/completions"]
    assert [c.body["logit_bias"] for c in chats] == [{"151645": 2.0}, {"151645": 1.5}]
    # Asked once: the server's tokenizer, with special tokens parsed.
    assert [s.path for s in server.seen].count("/props") == 1
    (tokenize,) = [s for s in server.seen if s.path == "/tokenize"]
    assert tokenize.body == {"content": "<|im_end|>", "parse_special": True}


def test_no_logit_bias_where_the_server_does_not_name_its_end_token(serve, providers) -> None:
    server = serve(
        sse(delta("ls", finish="stop")), routes={"/props": body_json({"error": "no"}, 404)}
    )
    provider = providers(server.url)
    complete(provider, HELLO, GenerationOptions(end_bias=2.0))
    complete(provider, HELLO, GenerationOptions(end_bias=2.0))
    chats = [s for s in server.posts if s.path == "/v1/chat/completions"]
    assert len(chats) == 2 and all("logit_bias" not in c.body for c in chats)
    assert [s.path for s in server.seen].count("/props") == 1  # the answer is remembered


def test_without_end_bias_the_server_is_not_asked_for_its_end_token(serve, providers) -> None:
    server = serve(sse(delta("ls", finish="stop")), routes=LLAMA_CPP_ROUTES)
    complete(providers(server.url), HELLO)
    assert [s.path for s in server.seen] == ["/v1/chat/completions"]
    assert "logit_bias" not in server.posts[0].body


def test_openai_itself_gets_no_logit_bias() -> None:
    provider, bodies = openai_itself()
    complete(provider, HELLO, GenerationOptions(end_bias=2.0))
    assert len(bodies) == 1 and "logit_bias" not in bodies[0]


def test_the_key_is_sent_as_a_bearer_header(serve, providers) -> None:
    server = serve(sse(delta("ok", finish="stop")))
    complete(providers(server.url), HELLO)
    assert server.posts[0].headers["authorization"] == f"Bearer {KEY}"


def test_a_local_server_without_a_key_gets_no_authorization_header(serve, providers) -> None:
    server = serve(sse(delta("ok", finish="stop")))
    complete(providers(server.url, api_key=None), HELLO)
    assert "authorization" not in server.posts[0].headers


def test_the_model_is_discovered_from_the_server_once_on_first_request(serve, providers) -> None:
    server = serve(sse(delta("ok", finish="stop")))
    provider = providers(server.url, model=None)
    complete(provider, HELLO)
    complete(provider, HELLO)
    assert [(s.method, s.path) for s in server.seen].count(("GET", "/v1/models")) == 1
    assert [p.body["model"] for p in server.posts] == ["served-model", "served-model"]


def test_model_discovery_falls_back_to_default_when_the_server_lists_none(serve, providers) -> None:
    server = serve(sse(delta("ok", finish="stop")), models=body_json({"error": "no"}, 404))
    complete(providers(server.url, model=None), HELLO)
    assert server.posts[0].body["model"] == "default"


def test_azure_uses_the_deployment_url_api_version_and_api_key_header(
    serve, monkeypatch, empty_keyring
) -> None:
    server = serve(sse(delta("ok", finish="stop")))
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    endpoint = server.url.removesuffix("/v1")
    settings = AISettings(
        provider="azure",
        azure_endpoint=endpoint + "/",
        azure_deployment="my-gpt",
        azure_api_version="2024-10-21",
    )
    provider = OpenAIProvider.azure_from_settings(settings)
    try:
        complete(provider, HELLO, GenerationOptions(grammar="root ::= x"))
    finally:
        provider.close()
    (seen,) = server.posts
    assert provider.name == "azure"
    assert seen.path == "/openai/deployments/my-gpt/chat/completions?api-version=2024-10-21"
    assert seen.headers["api-key"] == KEY
    assert "authorization" not in seen.headers
    assert "grammar" not in seen.body


# -- settings ----------------------------------------------------------------------------------


def test_openai_without_a_key_is_an_error_naming_the_env_var(monkeypatch, empty_keyring) -> None:
    monkeypatch.delenv("MY_OPENAI_KEY", raising=False)
    with pytest.raises(ProviderError, match="MY_OPENAI_KEY"):
        OpenAIProvider.from_settings(AISettings(provider="openai", api_key_env="MY_OPENAI_KEY"))


def test_openai_defaults_to_its_base_url_and_a_small_model(monkeypatch, empty_keyring) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    provider = OpenAIProvider.from_settings(AISettings(provider="openai"))
    provider.close()
    assert provider.base_url == "https://api.openai.com/v1"
    assert provider.model == "gpt-4o-mini"


def test_a_local_server_needs_no_key_and_no_model(monkeypatch, empty_keyring) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings = AISettings(provider="openai", base_url="http://127.0.0.1:1/v1/")
    provider = OpenAIProvider.from_settings(settings)
    provider.close()
    assert provider.base_url == "http://127.0.0.1:1/v1"
    assert provider.model is None


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"azure_deployment": "d"}, "ai.azure_endpoint (or AZURE_OPENAI_ENDPOINT)"),
        ({"azure_endpoint": "https://x.openai.azure.com"}, "ai.azure_deployment"),
    ],
)
def test_azure_without_endpoint_or_deployment_names_the_setting(
    settings: dict[str, str], named: str
) -> None:
    with pytest.raises(ConfigError, match=named.replace("(", r"\(").replace(")", r"\)")):
        OpenAIProvider.azure_from_settings(AISettings(provider="azure", **settings))


def test_azure_without_a_key_names_the_env_var(monkeypatch, empty_keyring) -> None:
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    settings = AISettings(
        provider="azure", azure_endpoint="https://x.openai.azure.com", azure_deployment="d"
    )
    with pytest.raises(ProviderError, match="AZURE_OPENAI_API_KEY"):
        OpenAIProvider.azure_from_settings(settings)


# -- failures ----------------------------------------------------------------------------------


def test_refused_credentials_name_the_env_var_and_never_show_the_key(serve, providers) -> None:
    server = serve(body_json({"error": {"message": f"Incorrect API key provided: {KEY}"}}, 401))
    message = error_of(providers(server.url, api_key_env="MY_OPENAI_KEY"))
    assert message == (
        f"the model server at {server.url} refused the credentials (HTTP 401); check MY_OPENAI_KEY"
    )


def test_a_429_is_retried_honouring_retry_after_and_then_succeeds(serve, providers) -> None:
    server = serve(
        body_json({"error": {"message": "slow down"}}, 429, **{"Retry-After": "0"}),
        sse(delta("ls", finish="stop")),
    )
    response = complete(providers(server.url, max_retries=2), HELLO)
    assert response.text == "ls"
    assert len(server.posts) == 2
    assert providers.sleeps == [0.0]


def test_a_429_that_persists_is_reported_as_rate_limiting(serve, providers) -> None:
    server = serve(body_json({"error": {"message": "quota exceeded"}}, 429))
    message = error_of(providers(server.url, max_retries=2))
    assert "rate limiting" in message
    assert "after 2 retries" in message
    assert "quota exceeded" in message
    assert len(server.posts) == 3


def test_server_errors_are_retried_with_exponential_backoff_then_reported(serve, providers) -> None:
    server = serve(body_json({"error": {"message": "engine overloaded"}}, 500))
    message = error_of(providers(server.url, max_retries=3))
    assert len(server.posts) == 4
    assert providers.sleeps == [0.001, 0.002, 0.004]
    assert message == (
        f"the model server at {server.url} failed (HTTP 500) after 3 retries: engine overloaded"
    )


def test_a_missing_model_or_endpoint_mentions_the_model_and_url(serve, providers) -> None:
    server = serve(body_json({"error": {"message": "model not found"}}, 404))
    message = error_of(providers(server.url, model="nope"))
    assert "HTTP 404" in message
    assert "'nope'" in message
    assert server.url in message


def test_a_bad_request_shows_the_server_message(serve, providers) -> None:
    server = serve(Reply(400, [b"  unknown field\n grammar  "]))
    message = error_of(providers(server.url))
    assert message.endswith("rejected the request (HTTP 400): unknown field grammar")


def test_a_server_slower_than_the_timeout_is_reported_as_a_timeout(serve, providers) -> None:
    server = serve(Reply(stall=True))
    message = error_of(providers(server.url, timeout=0.5))
    assert message == (
        f"the model server at {server.url} did not answer within 0.5 s; "
        "raise ai.timeout or check the server"
    )


def test_connection_refused_says_the_server_is_unreachable_after_retrying(providers) -> None:
    url = f"http://127.0.0.1:{unused_port()}/v1"
    message = error_of(providers(url, max_retries=2))
    assert message == (
        f"cannot reach the model server at {url} (connection refused, after 2 retries); "
        "is it running? set ai.base_url or OPENAI_BASE_URL"
    )
    assert len(providers.sleeps) == 2


def test_malformed_sse_is_reported_as_a_malformed_reply(serve, providers) -> None:
    reply = Reply(parts=[b'data: {"choices": [\n\n'], headers={"Content-Type": "text/event-stream"})
    message = error_of(providers(serve(reply).url))
    assert message.startswith("malformed reply from the model server at ")


def test_an_empty_reply_is_malformed(serve, providers) -> None:
    reply = Reply(parts=[b"data: [DONE]\n\n"], headers={"Content-Type": "text/event-stream"})
    assert "malformed reply" in error_of(providers(serve(reply).url))


def test_an_error_event_in_the_stream_is_reported(serve, providers) -> None:
    server = serve(sse({"error": {"message": "context length exceeded"}}))
    message = error_of(providers(server.url))
    assert message.endswith("reported an error: context length exceeded")


def test_nothing_is_retried_once_text_has_been_streamed(serve, providers) -> None:
    server = serve(sse(delta("ls"), {"error": {"message": "boom"}}))
    provider = providers(server.url, max_retries=3)
    stream = provider.stream(HELLO, GenerationOptions())
    assert next(stream) == TextDelta("ls")
    with pytest.raises(ProviderError, match="boom"):
        next(stream)
    assert len(server.posts) == 1


def test_a_key_echoed_in_an_error_body_is_redacted(serve, providers) -> None:
    server = serve(body_json({"error": {"message": f"bad key {KEY} for org"}}, 502))
    message = error_of(providers(server.url))
    assert message.endswith("failed (HTTP 502): bad key *** for org")


def test_tool_call_fragments_without_an_index_are_joined_by_id(serve, providers) -> None:
    def frag(**fields: Any) -> dict[str, Any]:
        return delta(tool_calls=[fields])

    server = serve(
        sse(
            frag(id="a", function={"name": "run", "arguments": '{"x":'}),
            frag(function={"arguments": "1}"}),
            frag(id="b", function={"name": "peek", "arguments": "{}"}),
            delta(finish="tool_calls"),
        )
    )
    response = complete(providers(server.url), HELLO)
    assert response.tool_calls == (ToolCall("a", "run", '{"x":1}'), ToolCall("b", "peek", "{}"))


def test_the_registry_builds_this_provider_for_openai_settings(monkeypatch, empty_keyring) -> None:
    from conch.providers.base import create_provider

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    provider = create_provider(AISettings(provider="openai", base_url="http://127.0.0.1:1/v1"))
    provider.close()
    assert isinstance(provider, OpenAIProvider)
    assert isinstance(provider, Provider)
    assert provider.name == "openai"


# -- likelihood: a llama.cpp server scores a forced reply --------------------------------

SCORING = {
    "/apply-template": body_json({"prompt": "<|im_start|>user\nls<|im_end|>\n"}),
    "/tokenize": body_json({"tokens": [1718, 3542]}),
    "/completion": body_json(
        {"completion_probabilities": [{"logprob": -1.5}, {"logprob": -0.25}, {"logprob": -2.0}]}
    ),
}


def test_likelihood_forces_the_replys_tokens_and_sums_their_log_probabilities(
    serve, providers
) -> None:
    server = serve(body_json({}), routes=SCORING)
    ask = [Message("user", "ls")]
    assert providers(server.url).likelihood(ask, "list files") == pytest.approx(-3.75)
    seen = {s.path: s.body for s in server.seen}
    assert seen["/apply-template"] == {"messages": [{"role": "user", "content": "ls"}]}
    assert seen["/tokenize"] == {"content": "list files"}
    completion = seen["/completion"]
    assert completion["prompt"] == "<|im_start|>user\nls<|im_end|>\n"
    assert completion["grammar"] == "root ::= <[1718]> <[3542]>"  # these tokens, no others
    assert completion["n_probs"] == 1 and completion["n_predict"] == 4


def test_a_server_without_the_endpoints_cannot_score_and_is_asked_once(serve, providers) -> None:
    server = serve(body_json({}), routes={"/apply-template": body_json({"error": "no"}, 404)})
    provider = providers(server.url)
    assert provider.likelihood([Message("user", "ls")], "list files") is None
    assert provider.likelihood([Message("user", "ls")], "list files") is None
    assert [s.path for s in server.seen] == ["/apply-template"]


def test_tokens_are_counted_by_a_llama_cpp_servers_tokenizer(serve, providers) -> None:
    server = serve(body_json({}), routes=SCORING)
    assert providers(server.url).count_tokens("list files") == 2
    assert [(s.path, s.body) for s in server.seen] == [("/tokenize", {"content": "list files"})]


def test_a_server_without_a_tokenizer_is_asked_once(serve, providers) -> None:
    server = serve(body_json({}), routes={"/tokenize": body_json({"error": "no"}, 404)})
    provider = providers(server.url)
    assert provider.count_tokens("list files") is None
    assert provider.count_tokens("list files") is None
    assert [s.path for s in server.seen] == ["/tokenize"]
    assert providers("https://api.openai.com/v1").count_tokens("list files") is None


def test_a_dead_server_is_a_provider_error_when_scoring(providers) -> None:
    provider = providers(f"http://127.0.0.1:{unused_port()}/v1")
    with pytest.raises(ProviderError, match="could not score a reply"):
        provider.likelihood([Message("user", "ls")], "list files")


def test_openai_and_azure_are_never_asked_to_score(serve, providers) -> None:
    # OpenAI: no server behind the address would answer, so None proves none was asked.
    assert providers("https://api.openai.com/v1").likelihood([Message("user", "ls")], "x") is None
    server = serve(body_json({}), routes=SCORING)  # would score, if asked
    azure = providers(server.url, azure_api_version="2024-10-21")
    assert azure.likelihood([Message("user", "ls")], "x") is None
    assert server.seen == []


def test_a_gateway_that_refuses_the_endpoints_cannot_score(serve, providers) -> None:
    server = serve(body_json({}), routes={"/apply-template": body_json({"error": "no"}, 403)})
    assert providers(server.url).likelihood([Message("user", "ls")], "x") is None
