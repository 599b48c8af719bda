"""A subset of the fault matrix against a real llama.cpp server on 127.0.0.1 (the embedded
model behind benchmarks/engine.py): a timeout, the server killed mid-answer, and the
server gone. Each is one line, exit 5 and a history entry, as against the fake server."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from fault_server import closed_port
from report import record

from cliutil import CliResult, write_config
from conch.config.paths import Paths
from conch.providers.local.model_files import embedded_model_path
from conch.storage.history import History

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: benchmarks/
from benchmarks.engine import SCRIPT as ENGINE_SERVER

pytestmark = pytest.mark.e2e

Conch = Callable[..., CliResult]


@pytest.fixture(scope="module")
def real_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    model = embedded_model_path(Paths.default().cache_dir)
    port = closed_port()
    log_path = tmp_path_factory.mktemp("engine") / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, str(ENGINE_SERVER), "--model", str(model), "--port", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        else:
            pytest.fail("the engine server did not start: " + log_path.read_text()[-2000:])
        yield url, process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(10)


def _config(home: Path, url: str, timeout: float) -> None:
    write_config(
        home,
        f"ai:\n  provider: openai\n  base_url: {url}\n  model: m\n  max_retries: 0\n"
        f"  timeout: {timeout}\n",
    )


def _one_line_exit_5(result: CliResult, words: tuple[str, ...], case: str) -> None:
    entry = History(Paths.default().state_dir).latest()
    record("faults-e2e", case, code=result.code, message=result.err.strip())
    assert result.code == 5, result.err
    assert result.err.startswith("conch: ") and result.err.count("\n") == 1
    assert "Traceback" not in result.err
    assert any(w in result.err for w in words), result.err
    assert entry is not None and entry.exit_code == 5


def test_a_real_server_slower_than_the_timeout(
    real_server: tuple[str, subprocess.Popen[bytes]], conch: Conch, isolated_dirs: Path
) -> None:
    _config(isolated_dirs, real_server[0], 0.05)
    result = conch("chat", "-p", "write a long story about the sea")
    _one_line_exit_5(result, ("did not answer within", "cannot reach"), "timeout")


def test_a_real_server_killed_mid_answer_then_gone(
    real_server: tuple[str, subprocess.Popen[bytes]], conch: Conch, isolated_dirs: Path
) -> None:
    url, process = real_server
    _config(isolated_dirs, url, 60)
    killer = threading.Timer(3.0, process.kill)
    killer.start()
    result = conch("chat", "-p", "write a long story about the sea, in ten paragraphs")
    killer.join()
    words = ("cut off before it ended", "failed", "did not answer")
    _one_line_exit_5(result, words, "killed-mid-answer")
    process.wait(10)
    _one_line_exit_5(conch("--print", "list files"), ("cannot reach",), "gone")
