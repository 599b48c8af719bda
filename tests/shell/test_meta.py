"""Meta commands as the shell parses them, and the prompt it shows."""

from __future__ import annotations

import pytest

from conch.shell.meta import (
    META_COMMANDS,
    Meta,
    MetaCommand,
    MetaError,
    help_lines,
    meta_names,
    parse_meta,
    routed,
)
from conch.shell.prompt import display_cwd, prompt_text
from conch.shell.route import Target, route

KNOWN = frozenset({"ls", "make", "cat"})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("quit", Meta("quit")),
        ("q", Meta("quit")),
        ("help", Meta("help")),
        ("model fast", Meta("model", "fast")),
        ("model", Meta("model")),
        ("model   deep  ", Meta("model", "deep")),
        ("models", Meta("models")),
        ("history", Meta("history")),
        ("clear", Meta("clear")),
        ("reset", Meta("reset")),
        ("cost", Meta("cost")),
        ("config show", Meta("config", "show")),
        ("config show shell", Meta("config", "show shell")),
        ("auto", Meta("auto")),
        ("auto off", Meta("auto", "off")),
        ("auto tidy the build directory", Meta("auto", "tidy the build directory")),
        ("save", Meta("save")),
        ("save notes.md", Meta("save", "notes.md")),
        ("mcp", Meta("mcp")),
    ],
)
def test_a_meta_command_parses_to_its_name_and_argument(text: str, expected: Meta) -> None:
    assert parse_meta(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("frobnicate", "unknown meta command :frobnicate; :help lists them"),
        ("quit now", ":quit takes nothing after it (got 'now')"),
        ("q now", ":q takes nothing after it (got 'now')"),
        ("reset all", ":reset takes nothing after it (got 'all')"),
        ("config", "write :config show, or :config show SECTION (such as shell)"),
        ("config edit", "write :config show, or :config show SECTION (such as shell)"),
        ("config show a b", "write :config show, or :config show SECTION (such as shell)"),
    ],
)
def test_a_meta_command_that_does_not_fit_says_why_in_one_line(text: str, message: str) -> None:
    with pytest.raises(MetaError) as caught:
        parse_meta(text)
    assert str(caught.value) == message


def test_completion_offers_every_meta_command_and_help_lists_each_one() -> None:
    names = meta_names()
    for name in (":quit", ":q", ":model", ":models", ":history", ":exec", ":ask", ":help"):
        assert name in names
    for name in (":cost", ":config", ":auto", ":save", ":clear", ":reset", ":mcp"):
        assert name in names
    listed = " ".join(help_lines())
    for name in names:
        assert name in listed, name
    assert len(help_lines()) == len(META_COMMANDS)


def test_every_meta_command_has_a_handler_or_a_target() -> None:
    for row in META_COMMANDS:
        assert (row.handler is None) == (row.forces is not None), row.name
    assert {row.name for row in META_COMMANDS if row.forces} == {"exec", "ask"}


@pytest.mark.parametrize(
    ("line", "target", "text"),
    [
        (":exec list the files", "shell", "list the files"),
        (":exec   make", "shell", "make"),
        (":ask ls -la", "model", "ls -la"),
        (":ask why did that fail?", "model", "why did that fail?"),
    ],
)
def test_exec_and_ask_force_the_target_and_are_stripped(
    line: str, target: Target, text: str
) -> None:
    got = routed(line, KNOWN)
    assert (got.target, got.text, got.forced) == (target, text, True)
    assert got.reason == f"forced to the {target} by '{line.split()[0]}'"


def test_exec_and_ask_with_nothing_after_them_go_nowhere() -> None:
    for line in (":exec", ":ask  "):
        got = routed(line, KNOWN)
        assert (got.target, got.text, got.forced) == ("empty", "", True)
        assert got.reason == f"nothing after '{line.split()[0]}'"


def test_other_lines_route_as_the_router_says() -> None:
    assert routed(":model fast", KNOWN) == route(":model fast", KNOWN)
    assert routed("ls -la", KNOWN).target == "shell"
    assert routed(":frob x", KNOWN).target == "meta"


@pytest.mark.parametrize(
    ("cwd", "home", "shown"),
    [
        ("/home/ada", "/home/ada", "~"),
        ("/home/ada/project", "/home/ada", "~/project"),
        ("/home/ada/project", "/home/ada/", "~/project"),
        ("/home/adam/project", "/home/ada", "/home/adam/project"),
        ("/srv/data", "/home/ada", "/srv/data"),
        ("/srv/data", None, "/srv/data"),
        ("/etc", "/", "/etc"),
    ],
)
def test_the_working_directory_is_shown_with_a_tilde_for_home(
    cwd: str, home: str | None, shown: str
) -> None:
    assert display_cwd(cwd, home) == shown


def test_the_prompt_shows_the_directory_and_the_model_and_the_autonomous_badge() -> None:
    assert prompt_text("/home/ada/project", "/home/ada", "fast") == "~/project [conch:fast]$ "
    assert prompt_text("/home/ada/project", "/home/ada", "fast", autonomous=True) == (
        "~/project [conch:fast ⚡]$ "
    )


@pytest.mark.parametrize("row", META_COMMANDS, ids=lambda row: row.usage)
def test_every_meta_command_is_in_conch_help_shell_and_docs_shell_md(row: MetaCommand) -> None:
    from pathlib import Path

    from conch.cli.help import render_help

    page = render_help("shell")
    docs = (Path(__file__).parents[2] / "docs" / "shell.md").read_text(encoding="utf-8")
    for name in (row.name, *row.aliases):
        assert f":{name}" in page, f":{name} is not in `conch help shell`"
        assert f":{name}" in docs, f":{name} is not in docs/shell.md"
    written = f":{row.name} {row.arguments}".strip()
    assert written in page, f"{written} is not in `conch help shell`"
    assert written.replace("|", "\\|") in docs, f"{written} is not in docs/shell.md"
