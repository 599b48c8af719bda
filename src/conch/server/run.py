"""Run the server under uvicorn (``conch serve``), or in a thread (tests, benchmarks)."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from conch.errors import ConchError
from conch.server.app import create_app
from conch.server.config import ServerConfig
from conch.server.models import ModelTable


def server_for(
    config: ServerConfig, models: ModelTable, *, log_level: str = "info"
) -> uvicorn.Server:
    """A uvicorn server for ``config`` (UsageError when it has no key and may not go
    without one)."""
    app = create_app(config, models)
    settings = uvicorn.Config(
        app,
        host=config.host,
        port=config.port,
        log_level=log_level,
        access_log=log_level == "debug",
        timeout_graceful_shutdown=5,
        lifespan="on",
    )
    return uvicorn.Server(settings)


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host``:``port``; ConchError (one line) when it cannot."""
    try:
        return socket.create_server((host.strip("[]"), port), backlog=128)
    except OSError as exc:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        raise ConchError(f"cannot listen on {host}:{port}: {reason}") from None


def serve(
    config: ServerConfig,
    models: ModelTable,
    *,
    log_level: str = "info",
    sock: socket.socket | None = None,
) -> None:
    """Serve until interrupted (Ctrl+C or SIGTERM end it cleanly), on ``sock`` when given
    (from ``listen``; closed at the end); ConchError when the address cannot be had (in use,
    not this machine's)."""
    try:
        server = server_for(config, models, log_level=log_level)
        if sock is None:
            sock = listen(config.host, config.port)
        server.run(sockets=[sock])
    finally:
        if sock is not None:
            sock.close()


@contextmanager
def serving(
    config: ServerConfig, models: ModelTable, *, start_timeout_s: float = 30.0
) -> Iterator[uvicorn.Server]:
    """The server running in a thread of this process while the block runs; stopped after.
    RuntimeError when it did not start within ``start_timeout_s``."""
    server = server_for(config, models, log_level="warning")
    thread = threading.Thread(target=server.run, name="conch-serve", daemon=True)
    thread.start()
    deadline = time.monotonic() + start_timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError(f"the server did not start on {config.host}:{config.port}")
        time.sleep(0.02)
    try:
        yield server
    finally:
        server.should_exit = True
        thread.join(15)


def bound_port(server: uvicorn.Server) -> int:
    """The port a started server listens on (what port 0 turned into)."""
    for listener in server.servers:
        for sock in listener.sockets:
            port: int = sock.getsockname()[1]
            return port
    raise RuntimeError("the server is not listening")
