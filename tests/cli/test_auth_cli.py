"""``conch auth set|show|remove``: keys into and out of a keyring (a file-backed one here,
never the real store), shown masked, never printed whole."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import keyring
import pexpect
import pytest
from keyring.backends import fail

from cliutil import CliResult, spawn_conch, write_config
from conch.config.credentials import forget_secret
from keyringutil import FILE_VARIABLE, FileKeyring

Conch = Callable[..., CliResult]
SECRET = "sk-test-0123456789abcdefWXYZ"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[FileKeyring]:
    previous = keyring.get_keyring()
    backend = FileKeyring(tmp_path / "keyring.json")
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)


def test_set_keeps_a_piped_key_in_the_keyring_and_shows_it_masked(
    conch: Conch, store: FileKeyring
) -> None:
    result = conch("auth", "set", "openai", stdin=SECRET + "\n")
    assert result.code == 0, result.err
    assert store.get_password("conch", "OPENAI_API_KEY") == SECRET
    assert result.out == (
        "openai: saved sk-…WXYZ (28 characters) in the system keyring "
        "(service conch, user OPENAI_API_KEY)\n"
    )
    assert SECRET not in result.out + result.err


def test_show_says_where_the_key_comes_from_and_never_prints_it(
    conch: Conch, store: FileKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.set_password("conch", "OPENAI_API_KEY", SECRET)
    shown = conch("auth", "show", "openai")
    assert shown.code == 0
    assert shown.out == (
        "openai: sk-…WXYZ (28 characters), from the system keyring "
        "(service conch, user OPENAI_API_KEY)\n"
    )
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment-9999")
    both = conch("auth", "show", "openai")
    assert both.out.splitlines() == [
        "openai: sk-…9999 (28 characters), from the environment variable OPENAI_API_KEY",
        "  (the keyring also holds one, sk-…WXYZ (28 characters); the environment wins)",
    ]
    assert SECRET not in both.out and "from-the-environment" not in both.out


def test_show_without_a_key_says_how_to_set_one_and_exits_1(
    conch: Conch, store: FileKeyring
) -> None:
    result = conch("auth", "show", "azure")
    assert result.code == 1
    assert result.out == (
        "azure: no key; set AZURE_OPENAI_API_KEY, or store one with: conch auth set azure\n"
    )


def test_remove_deletes_the_key_and_a_second_remove_finds_none(
    conch: Conch, store: FileKeyring
) -> None:
    store.set_password("conch", "OPENAI_API_KEY", SECRET)
    assert conch("auth", "remove", "openai").out == (
        "openai: removed the key from the system keyring\n"
    )
    assert store.get_password("conch", "OPENAI_API_KEY") is None
    again = conch("auth", "remove", "openai")
    assert again.code == 0
    assert again.out == "openai: no key in the system keyring; nothing to remove\n"


def test_a_named_model_uses_the_variable_its_settings_name(
    conch: Conch, store: FileKeyring, isolated_dirs: Path
) -> None:
    write_config(
        isolated_dirs,
        "models:\n  work:\n    provider: openai\n    api_key_env: WORK_KEY\n"
        "  tiny:\n    provider: local\n",
    )
    assert conch("auth", "set", "work", stdin=SECRET).code == 0
    assert store.get_password("conch", "WORK_KEY") == SECRET
    keyless = conch("auth", "set", "tiny", stdin=SECRET)
    assert keyless.code == 2
    assert keyless.err == "conch: model tiny uses the local provider, which needs no key\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["auth", "set", "nosuch"], "conch: unknown provider 'nosuch'; use openai, azure\n"),
        (["auth", "show", "local"], "conch: the local provider needs no API key\n"),
        (["auth", "set", "openai"], "conch: no key given; nothing was saved\n"),
    ],
)
def test_bad_requests_are_one_line_usage_errors(
    conch: Conch, store: FileKeyring, argv: list[str], message: str
) -> None:
    result = conch(*argv)
    assert result.code == 2
    assert result.err == message


def test_a_bad_action_is_a_usage_error(conch: Conch) -> None:
    result = conch("auth", "list", "openai")
    assert result.code == 2
    assert "argument action: invalid choice: 'list'" in result.err
    assert result.err.count("\n") == 1


@pytest.mark.parametrize("tty", [False, True])
def test_without_a_keyring_set_fails_in_one_line_before_asking_for_the_key(
    conch: Conch, tty: bool
) -> None:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())  # what keyring picks when there is no backend
    try:
        result = conch("auth", "set", "openai", stdin=SECRET, tty=tty, answers=SECRET + "\n")
    finally:
        keyring.set_keyring(previous)
    assert (result.code, result.out) == (1, "")
    assert result.err == (
        "conch: no system keyring to keep the key in (keyring.backends.fail.Keyring); set "
        "OPENAI_API_KEY in the environment instead, or install a keyring backend "
        "(`conch doctor` shows the keyring)\n"
    )
    assert "API key for" not in result.err  # nothing was asked


class _Refusing(FileKeyring):
    """A keyring that is there but refuses to keep anything (a locked store)."""

    def set_password(self, service: str, username: str, password: str) -> None:
        raise keyring.errors.KeyringLocked(f"the store is locked; not keeping {password}")


def test_a_keyring_that_refuses_the_key_fails_in_one_line_without_the_key(
    conch: Conch, tmp_path: Path
) -> None:
    previous = keyring.get_keyring()
    keyring.set_keyring(_Refusing(tmp_path / "keyring.json"))
    try:
        result = conch("auth", "set", "openai", stdin=SECRET)
    finally:
        keyring.set_keyring(previous)
    assert result.code == 1
    assert result.err.startswith("conch: cannot save the key in the system keyring: ")
    assert result.err.count("\n") == 1 and SECRET not in result.err


@pytest.fixture
def child_keyring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file a conch child process keeps its keys in (a file-backed keyring)."""
    path = tmp_path / "keyring.json"
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyringutil.FileKeyring")
    monkeypatch.setenv(FILE_VARIABLE, str(path))
    tests = str(Path(__file__).resolve().parents[1])
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [tests, os.environ.get("PYTHONPATH")]))
    )
    return path


def test_set_on_a_terminal_reads_the_key_without_echo(
    isolated_dirs: Path, tmp_path: Path, child_keyring: Path
) -> None:
    path = child_keyring
    child = spawn_conch(tmp_path, "auth", "set", "openai")
    child.expect_exact("API key for openai (OPENAI_API_KEY): ")
    child.send(SECRET + "\r")
    child.expect_exact("saved sk-…WXYZ (28 characters)")
    output = child.before
    child.expect(pexpect.EOF)
    output += child.before
    child.close()
    assert child.exitstatus == 0
    assert SECRET not in output
    assert FileKeyring(path).get_password("conch", "OPENAI_API_KEY") == SECRET


# -- a key asked for when a provider needs one ------------------------------------------------

AZURE_KEY = "azure-test-key-0123456789abcdef"


class _Azure(BaseHTTPRequestHandler):
    """A stand-in Azure OpenAI deployment: records each request's key, answers "hello"."""

    keys: ClassVar[list[str | None]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.keys.append(self.headers.get("api-key"))
        message = {"role": "assistant", "content": "hello"}
        body = {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def azure(isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[type[_Azure]]:
    """An Azure config pointing at the stand-in; no key in the environment."""
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    handler = type("Handler", (_Azure,), {"keys": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    write_config(
        isolated_dirs,
        "ai:\n  provider: azure\n"
        f"  azure_endpoint: http://127.0.0.1:{httpd.server_address[1]}\n"
        "  azure_deployment: d\n  max_retries: 0\n",
    )
    try:
        yield handler
    finally:
        forget_secret("AZURE_OPENAI_API_KEY")
        httpd.shutdown()
        httpd.server_close()
        thread.join(10)


def test_a_missing_key_is_asked_for_on_the_terminal_and_kept_in_the_keyring(
    isolated_dirs: Path, tmp_path: Path, child_keyring: Path, azure: type[_Azure]
) -> None:
    path = child_keyring
    child = spawn_conch(tmp_path, "chat", "-p", "say hello")
    child.expect_exact("API key for azure (AZURE_OPENAI_API_KEY, empty to stop): ")
    child.send(AZURE_KEY + "\r")
    child.expect_exact("saved azu…cdef (31 characters) in the system keyring")
    child.expect_exact("hello")
    output = child.before
    child.expect(pexpect.EOF)
    output += child.before
    child.close()
    assert child.exitstatus == 0, output
    assert AZURE_KEY not in output  # not echoed
    assert azure.keys == [AZURE_KEY]
    assert FileKeyring(path).get_password("conch", "AZURE_OPENAI_API_KEY") == AZURE_KEY


def test_a_key_the_keyring_cannot_keep_lasts_for_the_run_only(
    conch: Conch, azure: type[_Azure]
) -> None:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        result = conch("chat", "-p", "say hello", tty=True, answers=AZURE_KEY + "\n")
    finally:
        keyring.set_keyring(previous)
    assert result.code == 0, result.err
    assert result.out.strip() == "hello"
    assert "the key is kept for this run only" in result.err
    assert AZURE_KEY not in result.err + result.out
    assert azure.keys == [AZURE_KEY]


def test_without_a_terminal_no_key_is_asked_for_and_the_error_says_how_to_give_one(
    conch: Conch, azure: type[_Azure], store: FileKeyring
) -> None:
    result = conch("chat", "-p", "say hello")
    assert result.code != 0
    assert "Azure OpenAI needs an API key: set AZURE_OPENAI_API_KEY" in result.err
    assert "API key for azure" not in result.err
    assert azure.keys == []
