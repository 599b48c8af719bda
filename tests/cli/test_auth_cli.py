"""``conch auth set|show|remove``: keys into and out of a keyring (a file-backed one here,
never the real store), shown masked, never printed whole."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import keyring
import pexpect
import pytest
from keyring.backends import fail

from cliutil import CliResult, spawn_conch, write_config
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


def test_without_a_keyring_set_fails_in_one_line_without_the_key(conch: Conch) -> None:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        result = conch("auth", "set", "openai", stdin=SECRET)
    finally:
        keyring.set_keyring(previous)
    assert result.code == 1
    assert result.err.startswith("conch: cannot save the key in the system keyring: ")
    assert result.err.count("\n") == 1 and SECRET not in result.err


def test_set_on_a_terminal_reads_the_key_without_echo(
    isolated_dirs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "keyring.json"
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyringutil.FileKeyring")
    monkeypatch.setenv(FILE_VARIABLE, str(path))
    tests = str(Path(__file__).resolve().parents[1])
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [tests, os.environ.get("PYTHONPATH")]))
    )
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
