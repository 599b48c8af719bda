"""The ASGI application: routes, the key, the caps, and OpenAI's error shape.

============================  ==============================================================
route                         what it answers
============================  ==============================================================
``POST /v1/chat/completions``  a turn of the agent, whole or streamed (server-sent events)
``GET /v1/models``             the models a request may name
``GET /v1/tools``              conch's own tools: name, description, JSON schema, trigger
``GET /health``                ``{"status": "ok"}`` (never needs the key)
``GET /``                      the web chat page (``/static/...``: its script and style)
============================  ==============================================================

Every other request needs the key (``conch.host.auth.RequireToken``), unless the operator
turned it off on loopback (``ServerConfig.no_auth``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from conch.errors import ConchError
from conch.host.auth import RequireToken, check_access, is_loopback, loopback_names
from conch.server.bridge import Bridge
from conch.server.chunks import Reply
from conch.server.config import GIVE_KEY, ServerConfig
from conch.server.models import ModelTable
from conch.server.turn import Extra, Outcome, open_session
from conch.server.wire import APIError, parse_request, too_large
from conch.version import __version__

PING_SECONDS = 15
PUBLIC_PATHS = frozenset({"/", "/health"})


@dataclass(slots=True)
class _State:
    config: ServerConfig
    models: ModelTable
    slots: asyncio.Semaphore
    tools: list[dict[str, Any]] | None = None
    bridges: set[Bridge] = field(default_factory=set)


def create_app(config: ServerConfig, models: ModelTable) -> Starlette:
    """The server's application for ``config``, answering with ``models`` (closed when the
    application shuts down). UsageError when ``config`` has no key and no ``no_auth``, or a
    bind that needs a key it lacks."""
    check_access(config.host, config.api_key, no_auth=config.no_auth, give=GIVE_KEY)
    state = _State(config, models, asyncio.Semaphore(config.caps.concurrent))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            for bridge in list(state.bridges):
                bridge.cancel()
            await run_in_threadpool(models.close)

    async def chat(request: Request) -> Response:
        return await _chat(state, request)

    async def list_models(request: Request) -> Response:
        data = [
            {"id": name, "object": "model", "created": 0, "owned_by": "conch"}
            for name in models.names
        ]
        return JSONResponse({"object": "list", "data": data})

    async def list_tools(request: Request) -> Response:
        if state.tools is None:
            state.tools = await run_in_threadpool(_tools, config)
        return JSONResponse({"object": "list", "data": state.tools})

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "version": __version__, "models": models.names})

    async def index(request: Request) -> Response:
        page = resources.files("conch.server").joinpath("static", "index.html")
        return HTMLResponse(page.read_text(encoding="utf-8"))

    routes = [
        Route("/", index),
        Route("/health", health),
        Route("/v1/models", list_models),
        Route("/v1/tools", list_tools),
        Route("/v1/chat/completions", chat, methods=["POST"]),
        Mount("/static", StaticFiles(packages=[("conch.server", "static")]), name="static"),
    ]
    middleware = []
    if config.api_key:
        middleware.append(Middleware(RequireToken, token=config.api_key, public=_public))
    if is_loopback(config.host):  # the Host header must name this machine
        hosts = loopback_names(config.host)
        middleware.insert(0, Middleware(TrustedHostMiddleware, allowed_hosts=hosts))
    return Starlette(
        routes=routes,
        middleware=middleware,
        exception_handlers={
            APIError: _api_error,
            HTTPException: _http_error,
            Exception: _internal_error,
        },
        lifespan=lifespan,
    )


def _public(path: str) -> bool:
    """The page, its files and ``/health`` need no key; every API route does."""
    return path in PUBLIC_PATHS or path.startswith("/static/")


async def _chat(state: _State, request: Request) -> Response:
    caps = state.config.caps
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise APIError(415, "send the request as JSON (Content-Type: application/json)")
    raw = await _body(request, caps.body_bytes)
    chat = parse_request(raw, caps)
    try:
        session, model = await run_in_threadpool(open_session, chat, state.config, state.models)
    except ConchError as exc:  # the model cannot be opened (a missing key, a bad setting)
        raise APIError(502, str(exc), kind="server_error", code="model_error") from None
    events = state.config.events if chat.events is None else chat.events
    reply = Reply(model, include_usage=chat.include_usage, events=events, progress=chat.progress)
    bridge = Bridge(session, chat, caps.timeout_s, state.slots)
    if chat.stream:

        async def closed(message: Any) -> None:
            bridge.cancel()

        return EventSourceResponse(
            _stream(state, bridge, reply),
            ping=PING_SECONDS,
            sep="\n",
            client_close_handler_callable=closed,
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    outcome = await _whole(state, bridge, reply, request)
    return JSONResponse(reply.whole(outcome))


async def _body(request: Request, limit: int) -> bytes:
    """The request body, refused (413) as soon as it is over ``limit`` bytes."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large(f"the request body ({declared} bytes)", f"{limit} bytes")
    parts: list[bytes] = []
    size = 0
    async for part in request.stream():
        size += len(part)
        if size > limit:
            raise too_large("the request body", f"{limit} bytes")
        parts.append(part)
    return b"".join(parts)


async def _stream(state: _State, bridge: Bridge, reply: Reply) -> AsyncIterator[str]:
    state.bridges.add(bridge)
    try:
        yield _json(reply.start())
        async for item in bridge.items():
            if isinstance(item, str):
                yield _json(reply.text(item))
            elif isinstance(item, Extra):
                chunk = reply.extra(item)
                if chunk is not None:
                    yield _json(chunk)
            elif isinstance(item, Outcome):
                for chunk in reply.end(item):
                    yield _json(chunk)
            else:
                yield _json(item.body())
        yield "[DONE]"
    finally:
        bridge.cancel()
        state.bridges.discard(bridge)


async def _whole(state: _State, bridge: Bridge, reply: Reply, request: Request) -> Outcome:
    """Run the turn to its end; a client that goes away meanwhile stops it."""

    async def watch() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass
        bridge.cancel()

    watcher = asyncio.create_task(watch())
    state.bridges.add(bridge)
    try:
        async for item in bridge.items():
            if isinstance(item, Extra):
                reply.extra(item)
            elif isinstance(item, Outcome):
                return item
            elif isinstance(item, APIError):
                raise item
        raise APIError(499, "the client closed the request", code="client_closed")
    finally:
        watcher.cancel()
        bridge.cancel()
        state.bridges.discard(bridge)


def _tools(config: ServerConfig) -> list[dict[str, Any]]:
    """conch's own tools as the agent gets them, with their triggers."""
    from conch.agent.builtin import default_tools
    from conch.agent.lookup import lookup_tool

    tools = default_tools(config.tools)
    tools.append(lookup_tool(lambda: tools))
    return [{**t.spec.to_openai(), "trigger": t.trigger} for t in tools]


def _json(body: dict[str, Any]) -> str:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, APIError)
    return JSONResponse(exc.body(), exc.status)


async def _internal_error(request: Request, exc: Exception) -> Response:
    error = APIError(500, f"internal error: {type(exc).__name__}", kind="server_error")
    return JSONResponse(error.body(), 500)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    kind = "not_found" if exc.status_code == 404 else "invalid_request_error"
    error = APIError(exc.status_code, str(exc.detail), kind=kind)
    return JSONResponse(error.body(), exc.status_code, exc.headers)
