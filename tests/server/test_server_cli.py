"""``conch serve`` on the command line: flags checked before anything loads, one-line
errors, a light ``--help``, and a real server process answering the openai client."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import openai
import pytest

from cliutil import CliResult
from conch.cli.agentargs import build_serve_parser
from conch.cli.help import render_help

Conch = Callable[..., CliResult]
START_SECONDS = 30.0


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--host", "0.0.0.0"], "refusing to listen on 0.0.0.0 without an API key"),
        (["--host", "0.0.0.0", "--api-key", ""], "the API key is empty"),
        (["hello", "world"], "`conch serve` takes no words"),
        (["--port", "70000"], "--port must be between 0 and 65535"),
        (["--timeout", "0"], "--timeout must be more than 0"),
        (["--mode", "full"], "--allow-dangerous"),
        (["--mode", "restricted"], "add --allow-bash"),
        (["--port", "x"], "invalid int value"),
    ],
)
def test_bad_serve_flags_are_one_line_errors(conch: Conch, argv: list[str], words: str) -> None:
    result = conch("serve", *argv)
    assert result.code == 2, result.err
    assert words in result.err
    assert result.err.count("\n") == 1 and "Traceback" not in result.err


def test_the_key_can_come_from_the_environment(
    conch: Conch, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the key set, the bind is allowed: what fails next is the port, taken here."""
    monkeypatch.setenv("CONCH_SERVER_API_KEY", "s3cret-key")
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = conch("serve", "--host", "0.0.0.0", "--port", str(port), "--provider", "scripted")
    assert result.code == 1
    assert f"cannot listen on 0.0.0.0:{port}" in result.err and "Traceback" not in result.err


def test_a_port_in_use_is_a_one_line_error(conch: Conch) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = conch("serve", "--port", str(port), "--provider", "scripted", "-q")
    assert result.code == 1
    assert result.err.strip() == f"conch: cannot listen on 127.0.0.1:{port}: Address already in use"


def test_serve_help_does_not_load_the_server_or_the_model() -> None:
    code = (
        "import sys\nfrom conch.cli.main import main\n"
        "try:\n    main(['serve', '--help'])\nexcept SystemExit:\n    pass\n"
        "print('HEAVY', [m for m in ('starlette', 'uvicorn', 'sse_starlette', 'conch.server.app',"
        " 'conch.agent.session', 'httpx', 'xllamacpp') if m in sys.modules])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert "HEAVY []" in out.stdout, out.stdout + out.stderr
    assert "--api-key" in out.stdout


@pytest.mark.parametrize(
    "flag",
    sorted(set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", build_serve_parser().format_help()))),
)
def test_every_serve_flag_is_documented_on_the_serve_page(flag: str) -> None:
    assert flag in render_help("serve"), f"{flag} is not documented in `conch help serve`"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """``conch serve`` as a user starts it, on the scripted provider; its base URL."""
    config = tmp_path / "config.yaml"
    config.write_text(
        "ai:\n  provider: scripted\n  script: ['Hello from conch serve.']\n", encoding="utf-8"
    )
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]
    env = {**os.environ, "CONCH_CONFIG": str(config)}
    process = subprocess.Popen(
        [sys.executable, "-m", "conch", "serve", "--port", str(port), "--sandbox", str(tmp_path)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            assert process.poll() is None, process.communicate()[1]
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "conch serve did not start"
                time.sleep(0.1)
        yield base
    finally:
        process.send_signal(signal.SIGINT)  # Ctrl+C
        _, err = process.communicate(timeout=20)
        assert process.returncode == 0, err


def test_conch_serve_answers_the_openai_client(served: str) -> None:
    client = openai.OpenAI(base_url=f"{served}/v1", api_key="unused", max_retries=0)
    [model] = client.models.list().data
    assert model.id == "scripted"
    reply = client.chat.completions.create(
        model=model.id, messages=[{"role": "user", "content": "hi"}]
    )
    assert reply.choices[0].message.content == "Hello from conch serve."
