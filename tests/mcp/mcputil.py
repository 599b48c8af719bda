"""Helpers for the MCP tests: a config for the scripted model, a free port, a server process
that is waited for by its first line, the fake MCP server's command line, and the SDK's
client over streamable HTTP with a key."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

FAKE_SERVER = Path(__file__).with_name("fake_server.py")
CONCH = Path(sys.executable).with_name("conch")

# The scripted model answers every request with ``rm notes.txt``; dry runs, the review and
# validation are off so the one reply is the command.
SCRIPTED_CONFIG = """\
ai:
  provider: scripted
  script: ["rm notes.txt"]
generation:
  dry_run: false
  review: 1
validation:
  enabled: false
"""


def write_config(home: Path, text: str) -> Path:
    path = home / ".config" / "conch" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def fake_server(*flags: str) -> list[str]:
    """The command line of the fake MCP server with ``flags``."""
    return [sys.executable, str(FAKE_SERVER), *flags]


@contextmanager
def running(argv: list[str], ready: str, cwd: Path, timeout: float = 60) -> Iterator[str]:
    """``argv`` as a process, once a line of its stderr contains ``ready`` (that line is
    yielded); stopped at the end."""
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        seen: list[str] = []
        line = ""
        while ready not in line:
            line = process.stderr.readline()
            if not line:
                raise AssertionError(f"{argv} ended before saying {ready!r}: {''.join(seen)}")
            seen.append(line)
        yield line
    finally:
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()


def wait_for_port(port: int, timeout: float = 30) -> None:
    """Until something listens on 127.0.0.1:``port`` (bounded by ``timeout``)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@contextmanager
def listening(argv: list[str], port: int, cwd: Path) -> Iterator[None]:
    """``argv`` as a process, once something listens on ``port``; stopped at the end."""
    process = subprocess.Popen(argv, cwd=cwd, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port)
        yield
    finally:
        process.terminate()
        process.wait(30)


def printed_token(line: str) -> str:
    """The token in ``conch mcp --http``'s line ``... send Authorization: Bearer TOKEN``."""
    return line.rsplit("Authorization: Bearer ", 1)[1].strip()


@asynccontextmanager
async def http_client(url: str, key: str | None) -> AsyncIterator[Client]:
    """The official SDK's client on streamable HTTP at ``url``, sending ``key`` (if any) as
    ``Authorization: Bearer``."""
    headers = {"Authorization": f"Bearer {key}"} if key else None
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client
