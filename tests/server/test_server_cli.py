"""``conch serve`` on the command line: flags checked before anything loads, one-line
errors, a light ``--help``, and a real server process that prints the URL to open, with a
fresh token, and answers the openai client only with it (or with none, under --no-auth)."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import openai
import pytest
from serverutil import SERVE_REPLY, serve_process

from cliutil import CliResult
from conch.cli.help import render_help
from conch.cli.servecmd import build_serve_parser

Conch = Callable[..., CliResult]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--host", "0.0.0.0"], "refusing to listen on 0.0.0.0 without an API key"),
        (["--host", "0.0.0.0", "--api-key", ""], "the API key is empty"),
        (["--host", "0.0.0.0", "--no-auth"], "--no-auth is only allowed on a loopback address"),
        (["--no-auth", "--api-key", "k"], "--no-auth turns the key off, but one is set"),
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


def _openai(base: str, key: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0)


def _ask(client: openai.OpenAI) -> str | None:
    [model] = client.models.list().data
    assert model.id == "scripted"
    reply = client.chat.completions.create(
        model=model.id, messages=[{"role": "user", "content": "hi"}]
    )
    return reply.choices[0].message.content


def test_conch_serve_prints_a_url_with_a_token_and_answers_only_with_it(tmp_path: Path) -> None:
    with serve_process(tmp_path) as served:
        token = parse_qs(urlsplit(served.printed).query)["token"][0]
        assert served.printed == f"{served.base}/?token={token}"
        assert len(token) >= 43
        with pytest.raises(openai.AuthenticationError):
            _openai(served.base, "unused").models.list()
        assert httpx.get(f"{served.base}/v1/models", timeout=10).status_code == 401
        assert _ask(_openai(served.base, token)) == SERVE_REPLY
        page = httpx.get(served.printed, timeout=10)
        assert page.status_code == 200 and "/static/chat.js" in page.text
    with serve_process(tmp_path) as again:
        assert again.printed != served.printed  # a fresh token at each start


def test_quiet_still_prints_the_url_with_its_token(tmp_path: Path) -> None:
    with serve_process(tmp_path, "-q") as served:
        assert len(served.lines) == 1 and "?token=" in served.printed


def test_a_key_the_user_gives_is_the_one_asked_for(tmp_path: Path) -> None:
    with serve_process(tmp_path, "--api-key", "my-own-key") as served:
        assert served.printed == f"{served.base}/"  # the key is not echoed
        with pytest.raises(openai.AuthenticationError):
            _openai(served.base, "unused").models.list()
        assert _ask(_openai(served.base, "my-own-key")) == SERVE_REPLY


def test_no_auth_serves_without_a_key_and_warns(tmp_path: Path) -> None:
    with serve_process(tmp_path, "--no-auth") as served:
        assert served.printed == f"{served.base}/"
        [warning] = [line for line in served.lines if "warning" in line]
        assert warning.startswith("conch serve: warning: --no-auth: any program")
        assert _ask(_openai(served.base, "unused")) == SERVE_REPLY
