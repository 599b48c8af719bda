"""End-to-end fixtures: the real embedded model, and llama.cpp's own HTTP server over it."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conch.config.paths import Paths
from conch.daemon.client import stop_service
from conch.daemon.location import Location
from conch.providers.local.model_files import embedded_model_path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: benchmarks/
from benchmarks.engine import SCRIPT as ENGINE_SERVER

SERVER_START_SECONDS = 60.0


def model_cache_dir() -> Path:
    """conch's own cache dir, so the 1.1 GB model is assembled once per machine, not per run."""
    return Paths.default().cache_dir


@pytest.fixture(scope="session")
def embedded_model() -> Path:
    """The assembled embedded GGUF (assembled on first use, then reused)."""
    return embedded_model_path(model_cache_dir())


@pytest.fixture(scope="module")
def runtime_dir() -> Iterator[Path]:
    """A private runtime dir for one test module: the model service started by its first
    test stays warm for the others, and is stopped at the end."""
    directory = Path(tempfile.mkdtemp(prefix="conch-rt-"))
    try:
        yield directory
    finally:
        saved = os.environ.get("XDG_RUNTIME_DIR")
        os.environ["XDG_RUNTIME_DIR"] = str(directory)
        try:
            with contextlib.suppress(Exception):
                stop_service(Location.default())
        finally:
            if saved is None:
                del os.environ["XDG_RUNTIME_DIR"]
            else:
                os.environ["XDG_RUNTIME_DIR"] = saved
        shutil.rmtree(directory, ignore_errors=True)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def engine_server(embedded_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL (``http://127.0.0.1:PORT/v1``) of an OpenAI-compatible llama.cpp server."""
    port = free_port()
    log_path = tmp_path_factory.mktemp("engine-server") / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                str(ENGINE_SERVER),
                "--model",
                str(embedded_model),
                "--port",
                str(port),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_ready(process, f"http://127.0.0.1:{port}", log_path)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def wait_until_ready(process: subprocess.Popen[bytes], base: str, log_path: Path) -> None:
    """Poll ``/v1/models`` until it answers 200 (it answers 503 while the model loads)."""
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log = log_path.read_text(encoding="utf-8", errors="replace")
            pytest.fail(f"engine server exited with {process.returncode}:\n{log[-2000:]}")
        try:
            if httpx.get(f"{base}/v1/models", timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    log = log_path.read_text(encoding="utf-8", errors="replace")
    pytest.fail(f"engine server not ready after {SERVER_START_SECONDS:.0f} s:\n{log[-2000:]}")
