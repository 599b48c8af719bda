"""Who may use ``conch serve``: the holder of its key, even on loopback. The rule
(``conch.host.auth``), the middleware's headers, every API route refused without the key and
answered with it, the page and its files open, ``no_auth`` on loopback only."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import openai
import pytest
from serverutil import TOKEN, user
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient

from conch.agent.builtin import ToolOptions
from conch.errors import UsageError
from conch.host.auth import (
    RequireToken,
    check_access,
    is_loopback,
    loopback_names,
    new_token,
    server_key,
)
from conch.providers.scripted import ScriptedProvider
from conch.server.app import create_app
from conch.server.config import GIVE_KEY, ServerConfig
from conch.server.models import ModelTable
from conch.server.run import bound_port, serving

Client = Callable[..., TestClient]
API_ROUTES = [
    ("GET", "/v1/models"),
    ("GET", "/v1/tools"),
    ("POST", "/v1/chat/completions"),
    ("GET", "/v1/nothing"),
    ("GET", "/v2/anything"),
]


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("LOCALHOST", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.10", False),
        ("myhost.example", False),
        ("localhost.example", False),
    ],
)
def test_only_loopback_addresses_count_as_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_a_server_needs_a_key_everywhere_and_only_loopback_may_go_without() -> None:
    def check(host: str, key: str | None, no_auth: bool = False) -> None:
        check_access(host, key, no_auth=no_auth, give=GIVE_KEY)

    with pytest.raises(UsageError, match=r"refusing to listen on 0\.0\.0\.0 without an API key"):
        check("0.0.0.0", None)
    with pytest.raises(UsageError, match="the server has no API key"):
        check("127.0.0.1", None)
    with pytest.raises(UsageError, match="the API key is empty"):
        check("127.0.0.1", "  ")
    with pytest.raises(UsageError, match="--no-auth is only allowed on a loopback address"):
        check("0.0.0.0", None, no_auth=True)
    with pytest.raises(UsageError, match="drop one"):
        check("127.0.0.1", "s3cret-key", no_auth=True)
    check("0.0.0.0", "s3cret-key")
    check("127.0.0.1", "s3cret-key")
    check("::1", None, no_auth=True)


def test_the_rule_says_how_to_give_a_key() -> None:
    with pytest.raises(UsageError, match=r"give one with \$MY_KEY"):
        check_access("0.0.0.0", None, give="$MY_KEY")
    with pytest.raises(UsageError, match="give one with --api-key or CONCH_SERVER_API_KEY"):
        check_access("0.0.0.0", None, give=GIVE_KEY)


def test_a_server_key_is_the_given_one_or_on_loopback_a_made_token() -> None:
    assert server_key("0.0.0.0", "s3cret-key", no_auth=False, give="K") == ("s3cret-key", False)
    assert server_key("::1", None, no_auth=True, give="K") == (None, False)
    made = server_key("127.0.0.1", None, no_auth=False, give="K")
    assert made.made and made.key and re.fullmatch(r"[A-Za-z0-9_-]{43,}", made.key)
    with pytest.raises(UsageError, match=r"refusing to listen on 0\.0\.0\.0 without an API key"):
        server_key("0.0.0.0", None, no_auth=False, give="K")
    with pytest.raises(UsageError, match="the API key is empty; give a real one with K"):
        server_key("127.0.0.1", "", no_auth=False, give="K")


@pytest.mark.parametrize(
    ("host", "names"),
    [
        ("127.0.0.1", ["127.0.0.1", "localhost", "[::1]"]),
        ("::1", ["127.0.0.1", "localhost", "[::1]"]),
        ("LocalHost", ["127.0.0.1", "localhost", "[::1]"]),
        ("127.0.0.2", ["127.0.0.1", "localhost", "[::1]", "127.0.0.2"]),
        ("0:0:0:0:0:0:0:1", ["127.0.0.1", "localhost", "[::1]", "[0:0:0:0:0:0:0:1]"]),
    ],
)
def test_a_loopback_server_answers_to_this_machine_s_names(host: str, names: list[str]) -> None:
    assert loopback_names(host) == names


def test_a_made_token_is_long_url_safe_and_new_each_time() -> None:
    tokens = {new_token() for _ in range(20)}
    assert len(tokens) == 20
    for token in tokens:
        assert len(token) >= 43 and re.fullmatch(r"[A-Za-z0-9_-]+", token)


def test_an_app_without_a_key_or_no_auth_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="the server has no API key"):
        create_app(
            ServerConfig(tools=ToolOptions(root=tmp_path)),
            ModelTable.of({"m": ScriptedProvider.of()}),
        )


@pytest.mark.parametrize(("method", "path"), API_ROUTES)
def test_every_api_route_needs_the_key_on_loopback(
    client_for: Client, method: str, path: str
) -> None:
    client = client_for(ScriptedProvider.of("hi"))
    for headers in (
        {"Authorization": ""},
        {"Authorization": "Bearer "},
        {"Authorization": "Bearer nope"},
        {"Authorization": f"Basic {TOKEN}"},
        {"Authorization": f"Bearer {TOKEN}x"},
        {"Authorization": "", "X-API-Key": TOKEN[:-1]},
    ):
        response = client.request(method, path, headers=headers, json=user("hi"))
        assert response.status_code == 401, (headers, response.text)
        assert response.json()["error"]["code"] == "invalid_api_key"
        assert response.headers["www-authenticate"] == "Bearer"


def test_with_the_key_the_api_answers(client_for: Client) -> None:
    client = client_for(ScriptedProvider.of("Hello."))
    assert client.get("/v1/models").status_code == 200
    assert client.get("/v1/tools").status_code == 200
    reply = client.post("/v1/chat/completions", json=user("hi"))
    assert reply.status_code == 200 and reply.json()["choices"][0]["message"]["content"] == "Hello."
    assert client.get("/v1/nothing").status_code == 404
    by_header = client.get("/v1/models", headers={"Authorization": "", "X-API-Key": TOKEN})
    assert by_header.status_code == 200
    lower = client.get("/v1/models", headers={"Authorization": f"bearer  {TOKEN}"})
    assert lower.status_code == 200


@pytest.mark.parametrize("path", ["/", "/static/chat.js", "/static/chat.css", "/health"])
def test_the_page_its_files_and_health_need_no_key(client_for: Client, path: str) -> None:
    client = client_for(ScriptedProvider.of())
    assert client.get(path, headers={"Authorization": ""}).status_code == 200


def test_no_auth_on_loopback_answers_without_a_key(client_for: Client) -> None:
    client = client_for(ScriptedProvider.of("Open."), api_key=None, no_auth=True)
    response = client.post("/v1/chat/completions", json=user("hi"), headers={"Authorization": ""})
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["content"] == "Open."


def test_the_middleware_checks_only_what_is_not_public() -> None:
    async def hello(request: Request) -> Response:
        return PlainTextResponse("hello")

    inner = Starlette(routes=[Route("/open", hello), Route("/shut", hello)])
    app = RequireToken(inner, "k3y", public=lambda path: path == "/open")
    with TestClient(app) as client:
        assert client.get("/open").text == "hello"
        assert client.get("/shut").status_code == 401
        assert client.get("/shut", headers={"Authorization": "Bearer k3y"}).text == "hello"
        assert client.get("/shut", headers={"x-api-key": "k3y"}).text == "hello"
        # a wrong Bearer is not rescued by a right X-API-Key
        both = {"Authorization": "Bearer wrong", "X-API-Key": "k3y"}
        assert client.get("/shut", headers=both).status_code == 401
    with pytest.raises(ValueError):
        RequireToken(inner, "")


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


def test_a_loopback_server_answers_the_openai_client_only_with_the_token(
    server_for: Callable[..., str],
) -> None:
    base = server_for(ScriptedProvider.of("Tokened reply.")) + "/v1"
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=base, api_key="unused", max_retries=0).models.list()
    client = openai.OpenAI(base_url=base, api_key=TOKEN, max_retries=0)
    reply = client.chat.completions.create(
        model="test-model", messages=[{"role": "user", "content": "hi"}]
    )
    assert reply.choices[0].message.content == "Tokened reply."
