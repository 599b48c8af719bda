"""Meta commands as the shell parses them, and the prompt it shows."""

from __future__ import annotations

import pytest

from conch.shell.meta import META_COMMANDS, Meta, MetaError, meta_names, parse_meta
from conch.shell.prompt import display_cwd, prompt_text


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
    listed = " ".join(usage for usage, _ in META_COMMANDS)
    for name in names:
        if name not in (":exit", ":?"):
            assert name in listed, name


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
