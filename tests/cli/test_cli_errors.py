"""Bad input and failing servers give one clear line and a non-zero exit, never a traceback."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from cliutil import CliResult, write_config
from conch.config.paths import Paths
from conch.storage.history import History

Conch = Callable[..., CliResult]


class _Handler(BaseHTTPRequestHandler):
    mode = "401"
    release = threading.Event()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.mode == "slow":
            self.release.wait(10)
        body = b'{"error": {"message": "Incorrect API key provided: sk-secret-123"}}'
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def server() -> Iterator[tuple[str, type[_Handler]]]:
    handler = type("Handler", (_Handler,), {"release": threading.Event()})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", handler
    finally:
        handler.release.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(10)


def _one_line(result: CliResult) -> None:
    assert result.err.count("\n") == 1, result.err
    assert "Traceback" not in result.err


def test_missing_config_named_by_conch_config(
    conch: Conch, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONCH_CONFIG", "/nonexistent/conch.yaml")
    result = conch("--print", "list files")
    assert result.code == 1
    assert "/nonexistent/conch.yaml" in result.err
    _one_line(result)


def test_invalid_config_names_file_line_and_key(conch: Conch, isolated_dirs: Path) -> None:
    path = write_config(isolated_dirs, "ai:\n  provider: scripted\n  retries: 3\n")
    result = conch("--print", "list files")
    assert result.code == 1
    assert result.err.startswith(f"conch: {path}:3: ai.retries: unknown key")
    _one_line(result)


def test_every_invalid_key_in_the_config_is_reported_with_its_line(
    conch: Conch, isolated_dirs: Path
) -> None:
    path = write_config(
        isolated_dirs,
        "ai:\n  provider: scripted\n  temperature: banana-string\n"
        "history:\n  max_bytes: lots\n\ngeneration:\n  candidatse: 2\n",
    )
    result = conch("--print", "list files")
    assert result.code == 1
    assert "Traceback" not in result.err
    assert result.err.splitlines() == [
        f"conch: 3 problems in {path}:",
        f"  {path}:3: ai.temperature: Input should be a valid number, unable to parse string "
        "as a number",
        f"  {path}:5: history.max_bytes: Input should be a valid integer, unable to parse "
        "string as an integer",
        f"  {path}:8: generation.candidatse: unknown key; check its spelling against "
        "`conch help config`",
    ]


def test_unknown_provider_is_a_config_error(conch: Conch, isolated_dirs: Path) -> None:
    write_config(isolated_dirs, "ai:\n  provider: nosuch\n")
    result = conch("--print", "list files")
    assert result.code == 1
    assert "unknown provider 'nosuch'" in result.err
    _one_line(result)


def test_rejected_credentials_are_exit_5_and_never_echo_the_key(
    conch: Conch, server: tuple[str, type[_Handler]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, handler = server
    handler.mode = "401"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    result = conch("--provider", "openai", "--print", "list files")
    assert result.code == 5
    assert "401" in result.err and "OPENAI_API_KEY" in result.err
    assert "sk-secret-123" not in result.err
    _one_line(result)
    entry = History(Paths.default().state_dir).latest()
    assert entry is not None and entry.exit_code == 5
    assert "sk-secret-123" not in str(entry)


def test_timeout_is_exit_5_with_the_setting_to_change(
    conch: Conch, server: tuple[str, type[_Handler]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, handler = server
    handler.mode = "slow"
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("CONCH_TIMEOUT", "0.5")
    write_config(Path.home(), "ai:\n  provider: openai\n  model: m\n  max_retries: 0\n")
    result = conch("--print", "list files")
    assert result.code == 5
    assert "did not answer within" in result.err
    _one_line(result)


def test_dead_server_is_exit_5(
    conch: Conch, isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    write_config(isolated_dirs, "ai:\n  provider: openai\n  model: m\n  max_retries: 0\n")
    result = conch("--print", "list files")
    assert result.code == 5
    assert "cannot reach the model server" in result.err
    _one_line(result)


def test_keyboard_interrupt_exits_130_and_is_recorded(conch: Conch, isolated_dirs: Path) -> None:
    from conch.providers import ScriptedProvider, register_provider

    register_provider("interrupting", lambda s: ScriptedProvider.of(KeyboardInterrupt()))
    write_config(isolated_dirs, "ai:\n  provider: interrupting\n")
    result = conch("--print", "list files")
    assert result.code == 130
    assert result.err == "conch: interrupted\n"
    entry = History(Paths.default().state_dir).latest()
    assert entry is not None and entry.exit_code == 130
    assert "interrupted" in str(entry.notes)


def test_internal_errors_are_one_line_with_a_hint(conch: Conch, isolated_dirs: Path) -> None:
    from conch.providers import ScriptedProvider, register_provider

    register_provider("buggy", lambda s: ScriptedProvider.of(RuntimeError("boom")))
    write_config(isolated_dirs, "ai:\n  provider: buggy\n")
    result = conch("--print", "list files")
    assert result.code == 1
    assert "internal error: RuntimeError: boom" in result.err and "--traceback" in result.err
    _one_line(result)
