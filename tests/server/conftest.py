"""Fixtures for ``conch serve``: the app in-process, and a real uvicorn on 127.0.0.1, both
with the key ``serverutil.TOKEN`` (the in-process client sends it by itself)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from serverutil import AUTH, TOKEN
from starlette.testclient import TestClient

from conch.agent.builtin import ToolOptions
from conch.providers.base import Provider
from conch.server.app import create_app
from conch.server.config import ServerConfig
from conch.server.models import ModelTable
from conch.server.run import bound_port, serving


def config_for(root: Path, **changes: object) -> ServerConfig:
    """A loopback config on a free port, with the key ``TOKEN`` and conch's tools in ``root``
    (bash on, no audit)."""
    tools = ToolOptions(root=root, bash=True, audit=False, evaluate=False)
    config = ServerConfig(port=0, api_key=TOKEN, tools=tools)
    return replace(config, **changes)  # type: ignore[arg-type]


@pytest.fixture
def client_for(tmp_path: Path) -> Iterator[Callable[..., TestClient]]:
    """``client_for(provider, **config changes)``: the app in-process, its lifespan run; every
    request carries the key."""
    opened: list[TestClient] = []

    def make(provider: Provider, **changes: object) -> TestClient:
        app = create_app(config_for(tmp_path, **changes), ModelTable.of({"test-model": provider}))
        client = TestClient(app, base_url="http://127.0.0.1", headers=AUTH)
        client.__enter__()
        opened.append(client)
        return client

    yield make
    for client in opened:
        client.__exit__(None, None, None)


@pytest.fixture
def server_for(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """``server_for(provider, **config changes)``: a real uvicorn in a thread; its base URL
    (requests send ``AUTH``)."""
    stack: list[object] = []

    def start(provider: Provider, **changes: object) -> str:
        config = config_for(tmp_path, **changes)
        running = serving(config, ModelTable.of({"test-model": provider}))
        server = running.__enter__()
        stack.append(running)
        return f"http://127.0.0.1:{bound_port(server)}"

    yield start
    for running in reversed(stack):
        running.__exit__(None, None, None)  # type: ignore[attr-defined]
