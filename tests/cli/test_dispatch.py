"""Which command line is a subcommand and which a request: the COMMANDS table decides."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest

import conch.cli.main as cli_main
from cliutil import CliResult, write_config
from conch.cli.environment import Environment
from conch.cli.main import COMMANDS, RESERVED, USAGE, build_parser, raw_main
from conch.errors import UsageError

Conch = Callable[..., CliResult]


@pytest.fixture
def scripted(isolated_dirs: Path) -> Path:
    """A config whose model answers ``ls`` to every request, dry runs off."""
    return write_config(
        isolated_dirs,
        "generation:\n  dry_run: false\nvalidation:\n  enabled: false\n"
        "ai:\n  provider: scripted\n  script:\n    - ls\n",
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["--print", "--", "run", "the", "tests"],
        ["-p", "-q", "--", "run", "the", "tests"],
        ["ask", "--print", "check", "the", "disk"],
        ["--print", "ask", "check", "the", "disk"],
        ["--print", "list", "the", "files"],
    ],
)
def test_requests_that_start_with_a_command_word_are_written_after_dashes_or_ask(
    conch: Conch, scripted: Path, argv: list[str]
) -> None:
    result = conch(*argv)
    assert result.code == 0, result.err
    assert result.out == "ls\n"


def test_a_reserved_word_is_a_usage_error_that_says_how_to_ask(
    conch: Conch, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every reserved word has become a subcommand; the rule stays for words kept later.
    word = "later"
    monkeypatch.setattr(cli_main, "RESERVED", (word,))
    result = conch(word, "the", "tests")
    assert result.code == 2
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
    assert f"`conch {word}` is not available" in result.err
    assert f"conch -- {word} the tests" in result.err
    assert f"conch ask {word} the tests" in result.err


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["--print", "run", "the", "tests"], "conch -- run the tests"),
        (["check", "the", "disk"], "conch -- check the disk"),
        (["daemon", "status", "of", "nginx"], "conch ask daemon status of nginx"),
        (["help", "me", "find", "big", "files"], "conch -- help me find big files"),
    ],
)
def test_a_command_word_written_plainly_is_a_usage_error_naming_both_ways(
    conch: Conch, argv: list[str], hint: str
) -> None:
    result = conch(*argv)
    assert result.code == 2
    assert result.err.startswith("conch: ") and result.err.count("\n") == 1
    assert hint in result.err


def test_the_subcommands_still_dispatch(conch: Conch, isolated_dirs: Path) -> None:
    assert set(COMMANDS) == {
        *("check", "daemon", "doctor", "help", "chat", "shell", "run", "serve", "mcp", "auth"),
        "integration",
    }
    checked = conch("check", "--json", "--", "ls", "-la")
    assert checked.code == 0 and '"decision": "allow"' in checked.out
    assert conch("help", "safety").out.startswith("SAFETY")
    assert conch("daemon", "status").code == 1  # not running: status says so


def test_usage_lists_every_subcommand_and_the_ways_to_ask() -> None:
    for command in COMMANDS.values():
        assert command.usage in USAGE
    assert "conch [OPTIONS] -- REQUEST..." in USAGE and "conch ask" in USAGE


def test_help_lists_each_subcommand_with_its_summary_and_the_reserved_words() -> None:
    text = build_parser().format_help()
    width = max(len(name) for name in COMMANDS) + 2
    for command in COMMANDS.values():
        assert f"  {command.name:<{width}}{command.summary}" in text
    assert ("Reserved for subcommands to come" in text) == bool(RESERVED)
    assert "conch -- run the tests" in text and "conch ask run the tests" in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_a_subcommand_is_the_handler_of_its_table_entry(conch: Conch) -> None:
    out = io.StringIO()
    assert COMMANDS["help"].run(["safety"], Environment(stdout=out, stderr=io.StringIO())) == 0
    assert out.getvalue() == conch("help", "safety").out


def test_raw_main_raises_the_usage_error_main_turns_into_exit_2() -> None:
    env = Environment(stdout=io.StringIO(), stderr=io.StringIO())
    with pytest.raises(UsageError, match="conch -- run the tests"):
        raw_main(["run", "the", "tests"], env)


def test_check_reports_what_safe_mode_runs_and_what_it_refuses(conch: Conch) -> None:
    assert conch("check", "--", "du -sh * | sort -h").code == 0
    assert conch("check", "--", 'for f in *.txt; do wc -l "$f"; done').code == 0
    assert conch("check", "--", "source env.sh").code == 3
    assert conch("check", "--tools", "du,sort", "--", "du -sh * | sort -h").code == 3
    allowed = conch("check", "--tools", "du,sort", "--allow-pipelines", "--", "du -sh * | sort -h")
    assert allowed.code == 0


# -- options anywhere on the line; `--` ends them ---------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["j.yaml", "-p", "names of users older than 30"],
        ["j.yaml", "names of users", "-p", "older than 30"],
        ["names", "-p", "of", "--no-history", "users", "older", "than", "30"],
        ["-p", "names of users older than 30", "-q"],
    ],
)
def test_options_are_accepted_anywhere_among_the_words(
    conch: Conch, scripted: Path, tmp_path: Path, argv: list[str]
) -> None:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "j.yaml").write_text(
        "meta_prompt: only ls\ntools:\n  - name: ls\n    config: list\n", encoding="utf-8"
    )
    result = conch(*argv, cwd=work)
    assert (result.code, result.out) == (0, "ls\n"), result.err


def test_after_dashes_every_word_is_a_word_however_it_looks() -> None:
    from conch.cli.parsing import parse_anywhere

    parsed = parse_anywhere(build_parser(), ["-p", "--peek", "a.json", "--", "-y", "-p", "--", "x"])
    assert parsed.words == ["-y", "-p", "--", "x"]
    assert (parsed.print_only, parsed.yes, parsed.peek) == (True, False, ["a.json"])


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--", "ls", "-la", "--json"],  # after `--`: the command's own flags
        ["check", "--", "ls", "-la"],
    ],
)
def test_check_keeps_the_flags_of_the_command_after_dashes(conch: Conch, argv: list[str]) -> None:
    result = conch(*argv)
    assert result.code == 0, result.err
    assert "ls -la" in result.out and not result.out.lstrip().startswith("{")


def test_subcommand_options_are_accepted_anywhere(conch: Conch, isolated_dirs: Path) -> None:
    # The words on both sides of an option are gathered (and here, unquoted, refused as such).
    run = conch("run", "list", "-q", "files")
    assert run.code == 2 and 'takes one instruction in quotes: conch run "list files"' in run.err
    chat = conch("chat", "-q", "hello", "--no-daemon")
    assert chat.code == 2 and "`conch chat` takes no words" in chat.err
    shown = conch("auth", "show", "--traceback", "openai")
    assert shown.code == 1 and shown.out.startswith("openai: no key")
    status = conch("daemon", "status", "--json")
    assert status.code == 1 and status.out.lstrip().startswith("{")
