"""The code conch puts in bash, zsh and fish: valid in each shell (checked by the shell
itself), the chosen key bound, conch called in a form that always reads the line as a
request, and the completions of conch's command line in it."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

import requires
from cliutil import CliResult, script
from conch.cli.main import COMMANDS, PARSERS, completion_parser
from conch.integration.completion import completion_script
from conch.integration.keys import parse_key
from conch.integration.shellcode import SHELLS, build_block, shell_code

# How each shell checks a script's syntax without running it.
SYNTAX = {
    "bash": ["bash", "-n"],
    "zsh": ["zsh", "-n"],
    "fish": ["fish", "--no-execute"],
}
NEEDS = {"bash": (), "zsh": ("zsh",), "fish": ("fish",)}


def shells() -> list[object]:
    return [pytest.param(s, marks=requires.needs(*NEEDS[s])) if NEEDS[s] else s for s in SHELLS]


@pytest.mark.parametrize("shell", shells())
@pytest.mark.parametrize("key", ["alt-e", "ctrl-x"])
def test_the_shown_block_is_valid_shell(
    shell: str, key: str, conch: Callable[..., CliResult], tmp_path: Path
) -> None:
    result = conch("integration", "show", shell, "--key", key)
    assert result.code == 0, result.err
    path = tmp_path / f"block.{shell}"
    path.write_text(result.out, encoding="utf-8")
    checked = subprocess.run(
        [*SYNTAX[shell], str(path)], capture_output=True, text=True, timeout=30, check=False
    )
    assert checked.returncode == 0, checked.stderr
    assert parse_key(key).for_shell(shell) in result.out


@pytest.mark.parametrize("shell", shells())
def test_the_completions_alone_are_valid_shell(
    shell: str, conch: Callable[..., CliResult], tmp_path: Path
) -> None:
    result = conch("integration", "completions", shell)
    assert result.code == 0, result.err
    path = tmp_path / f"completions.{shell}"
    path.write_text(result.out, encoding="utf-8")
    checked = subprocess.run(
        [*SYNTAX[shell], str(path)], capture_output=True, text=True, timeout=30, check=False
    )
    assert checked.returncode == 0, checked.stderr


@pytest.mark.parametrize("shell", SHELLS)
def test_the_completions_know_every_subcommand_and_its_flags(shell: str) -> None:
    text = completion_script(completion_parser(), shell)
    flags = ("print", "allow-bash", "rc", "key")
    written = [f"-l {flag}" if shell == "fish" else f"--{flag}" for flag in flags]
    for word in (*COMMANDS, *written, "install", "exit-codes"):
        assert word in text, f"{word} is not completed in {shell}"
    assert "AUTOMATICALLY GENERATED" not in text  # shtab's copy-me header is dropped


def test_every_subcommand_s_parser_is_known_to_the_completions() -> None:
    assert set(COMMANDS) - {"help", "check"} == set(PARSERS)


def test_the_zsh_completions_register_only_when_compinit_has_run() -> None:
    text = completion_script(completion_parser(), "zsh")
    assert "compdef _shtab_conch conch" in text
    # shtab's own ending would call the completion function while the rc file loads.
    assert '_shtab_conch "$@"' not in text


@requires.needs("zsh")
def test_the_zsh_completions_load_in_a_shell_with_and_without_compinit(tmp_path: Path) -> None:
    path = tmp_path / "completions.zsh"
    path.write_text(completion_script(completion_parser(), "zsh"), encoding="utf-8")
    for setup in ("", "autoload -Uz compinit && compinit -u -D; "):
        loaded = subprocess.run(
            ["zsh", "-f", "-c", f"{setup}source {path} && echo loaded"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert loaded.stdout.strip() == "loaded" and loaded.stderr == "", loaded.stderr


@pytest.mark.parametrize("shell", SHELLS)
def test_the_key_sends_the_line_after_a_double_dash(shell: str) -> None:
    code = shell_code(shell, parse_key("alt-e"))
    calls = re.findall(r"command conch (--print --quiet --command --) ", code)
    assert len(calls) == 1


def test_a_line_that_looks_like_flags_or_a_subcommand_is_still_a_request(
    conch: Callable[..., CliResult], isolated_dirs: Path
) -> None:
    # What the key sends: the line as one word after the flags and `--`.
    for line in ("--version", "-rf the build directory", "run the tests", "help"):
        script(isolated_dirs, "ls -1")
        result = conch("--print", "--quiet", "--command", "--", line)
        assert (result.code, result.out, result.err) == (0, "ls -1\n", ""), line


def test_the_block_names_the_key_it_binds() -> None:
    text = build_block("zsh", parse_key("ctrl-x"))
    assert "Ctrl+X sends the command line to conch" in text
    assert "bindkey -M emacs '^X' __conch_line" in text
