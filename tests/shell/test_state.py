"""The state ``conch shell`` keeps between lines: in-process builtins, aliases, the user's shell."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from conch.shell.state import Outcome, ShellState, find_shell, load_aliases, parse_aliases


def make_state(tmp_path: Path, **env: str) -> ShellState:
    home = tmp_path / "home"
    (home / "docs").mkdir(parents=True, exist_ok=True)
    (tmp_path / "work" / "src").mkdir(parents=True, exist_ok=True)
    environ = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env}
    return ShellState.from_environment(environ, cwd=str(tmp_path / "work"))


def run(state: ShellState, line: str) -> Outcome:
    outcome = state.builtin(line)
    assert outcome is not None, f"{line!r} was not handled in-process"
    return outcome


def fake_shell(tmp_path: Path, body: str) -> str:
    script = tmp_path / "fakeshell"
    script.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    script.chmod(0o755)
    return str(script)


# cd


def test_cd_to_an_absolute_directory_persists_and_updates_pwd_and_oldpwd(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    outcome = run(state, f"cd {tmp_path / 'home'}")
    assert outcome == Outcome(f"cd {tmp_path / 'home'}", 0)
    assert state.cwd == str(tmp_path / "home")
    assert state.env["PWD"] == str(tmp_path / "home")
    assert state.oldpwd == state.env["OLDPWD"] == str(tmp_path / "work")


def test_cd_to_a_relative_directory_and_back_up(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    assert run(state, "cd src").exit_code == 0
    assert state.cwd == str(tmp_path / "work" / "src")
    assert run(state, "cd ../..").exit_code == 0
    assert state.cwd == str(tmp_path)


def test_cd_without_arguments_goes_home(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    run(state, "cd")
    assert state.cwd == str(tmp_path / "home")


@pytest.mark.parametrize(("line", "where"), [("cd ~", "home"), ("cd ~/docs", "home/docs")])
def test_cd_expands_the_tilde_with_the_states_home(tmp_path: Path, line: str, where: str) -> None:
    state = make_state(tmp_path)
    assert run(state, line).exit_code == 0
    assert state.cwd == str(tmp_path / where)


def test_cd_dash_returns_to_oldpwd_and_prints_it_like_bash(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    run(state, "cd src")
    outcome = run(state, "cd -")
    assert outcome.output == f"{tmp_path / 'work'}\n"
    assert state.cwd == str(tmp_path / "work")
    assert state.oldpwd == str(tmp_path / "work" / "src")


def test_cd_expands_variables_from_the_states_environment(tmp_path: Path) -> None:
    state = make_state(tmp_path, TARGET=str(tmp_path / "home"))
    run(state, "cd $TARGET/docs")
    assert state.cwd == str(tmp_path / "home" / "docs")


def test_cd_to_a_missing_directory_fails_like_bash_and_stays(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    outcome = run(state, "cd nowhere")
    assert outcome.exit_code == 1
    assert outcome.error == "cd: nowhere: No such file or directory\n"
    assert state.cwd == str(tmp_path / "work")


def test_cd_to_a_file_is_not_a_directory(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    (tmp_path / "work" / "notes.txt").write_text("x", encoding="utf-8")
    outcome = run(state, "cd notes.txt")
    assert (outcome.exit_code, outcome.error) == (1, "cd: notes.txt: Not a directory\n")


def test_cd_dash_without_oldpwd_and_cd_with_two_arguments_fail(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    assert run(state, "cd -") == Outcome("cd -", 1, error="cd: OLDPWD not set\n")
    assert run(state, "cd a b") == Outcome("cd a b", 1, error="cd: too many arguments\n")
    assert state.cwd == str(tmp_path / "work")


# export, unset


def test_export_sets_several_variables(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    assert run(state, "export A=1 B='two words'").exit_code == 0
    assert (state.env["A"], state.env["B"]) == ("1", "two words")


def test_export_of_a_bare_name_succeeds_without_a_value(tmp_path: Path) -> None:
    state = make_state(tmp_path, A="kept")
    assert run(state, "export A NEW").exit_code == 0
    assert state.env["A"] == "kept"
    assert "NEW" not in state.env


def test_export_expands_variables_and_appends(tmp_path: Path) -> None:
    state = make_state(tmp_path, BASE="/opt")
    run(state, "export TOOL=$BASE/tool")
    run(state, "export TOOL+=/bin")
    assert state.env["TOOL"] == "/opt/tool/bin"


def test_export_rejects_an_invalid_name(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    outcome = run(state, "export 1A=2")
    assert (outcome.exit_code, outcome.error) == (1, "export: `1A=2': not a valid identifier\n")


def test_listing_the_environment_is_left_to_the_shell_which_gets_the_same(
    tmp_path: Path,
) -> None:
    state = make_state(tmp_path)
    assert state.builtin("export") is None
    assert state.builtin("export -p") is None


def test_unset_removes_variables(tmp_path: Path) -> None:
    state = make_state(tmp_path, A="1", B="2")
    assert run(state, "unset A B MISSING").exit_code == 0
    assert "A" not in state.env
    assert "B" not in state.env


def test_export_and_unset_with_other_options_are_left_to_the_shell(tmp_path: Path) -> None:
    state = make_state(tmp_path, A="1")
    assert state.builtin("export -n A") is None
    assert state.builtin("unset -f myfunc") is None
    assert state.env["A"] == "1"


# alias, unalias


def test_alias_defines_lists_and_shows_aliases(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    assert run(state, "alias ll='ls -l' gs='git status'").exit_code == 0
    assert state.aliases == {"ll": "ls -l", "gs": "git status"}
    assert run(state, "alias").output == "alias gs='git status'\nalias ll='ls -l'\n"
    assert run(state, "alias ll").output == "alias ll='ls -l'\n"


def test_alias_listing_quotes_single_quotes_like_bash(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    run(state, """alias say="echo it's" """)
    assert run(state, "alias say").output == "alias say='echo it'\\''s'\n"


def test_alias_of_an_unknown_name_fails(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    assert run(state, "alias nope") == Outcome("alias nope", 1, error="alias: nope: not found\n")


def test_unalias_removes_an_alias_and_fails_for_an_unknown_one(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    state.aliases.update({"ll": "ls -l", "la": "ls -a"})
    assert run(state, "unalias ll").exit_code == 0
    assert state.aliases == {"la": "ls -a"}
    outcome = run(state, "unalias ll")
    assert (outcome.exit_code, outcome.error) == (1, "unalias: ll: not found\n")
    run(state, "unalias -a")
    assert state.aliases == {}


# alias expansion


def test_the_first_word_of_a_line_is_expanded_when_it_is_an_alias(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    state.aliases.update({"ll": "ls -l", "g": "git"})
    assert state.expand_alias("ll /tmp") == "ls -l /tmp"
    assert state.expand_alias("  ll") == "  ls -l"
    assert state.expand_alias("ll; echo ll") == "ls -l; echo ll"
    assert state.expand_alias("echo ll") == "echo ll"
    assert state.expand_alias("llama run") == "llama run"
    assert state.expand_alias('"ll" /tmp') == '"ll" /tmp'
    assert state.expand_alias("ll$X") == "ll$X"


def test_alias_expansion_is_one_level(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    state.aliases.update({"a": "b --x", "b": "c"})
    assert state.expand_alias("a 1") == "b --x 1"


# lines that are not handled in-process


@pytest.mark.parametrize(
    "line",
    [
        "cd src && make",
        "cd src; ls",
        "cd src || true",
        "cd src | cat",
        "cd src > out.txt",
        "export A=1; env",
        "export A=1 &",
        "(cd src)",
        "cd src\nls",
        "cd 'src",
        '"cd" src',
        "ls src",
        "",
    ],
)
def test_a_line_that_is_not_one_builtin_alone_is_left_to_the_shell(
    tmp_path: Path, line: str
) -> None:
    state = make_state(tmp_path)
    before = (state.cwd, dict(state.env), dict(state.aliases))
    assert state.builtin(line) is None
    assert (state.cwd, state.env, state.aliases) == before


def test_a_builtin_whose_words_the_shell_cannot_expand_is_left_to_the_shell(
    tmp_path: Path,
) -> None:
    state = make_state(tmp_path)
    assert state.builtin("cd $(exit 3)") is None
    assert state.cwd == str(tmp_path / "work")


# the user's shell and aliases


def test_aliases_are_loaded_from_the_users_interactive_shell(tmp_path: Path) -> None:
    shell = fake_shell(
        tmp_path,
        """[ "$1" = "-ic" ] && [ "$2" = alias ] || exit 1
echo "Welcome, don't panic"
echo "alias ll='ls -l'"
echo "alias gs='git status --short'"
echo "la='ls -A'"
""",
    )
    assert load_aliases(shell) == {"ll": "ls -l", "gs": "git status --short", "la": "ls -A"}


def test_alias_loading_failures_give_no_aliases(tmp_path: Path) -> None:
    assert load_aliases(fake_shell(tmp_path, "echo \"alias ll='ls -l'\"; exit 1")) == {}
    assert load_aliases(str(tmp_path / "missing-shell")) == {}


def test_alias_loading_gives_up_after_its_timeout(tmp_path: Path) -> None:
    shell = fake_shell(tmp_path, "echo \"alias ll='ls -l'\"; sleep 30")
    started = time.monotonic()
    assert load_aliases(shell, timeout=0.3) == {}
    assert time.monotonic() - started < 5


def test_parse_aliases_reads_bash_and_zsh_listings() -> None:
    text = "alias ll='ls -l'\nalias q='echo '\\''hi'\\'''\nzz=zoxide\nnot an alias\n"
    assert parse_aliases(text) == {"ll": "ls -l", "q": "echo 'hi'", "zz": "zoxide"}


def test_the_users_shell_comes_from_shell_with_fallbacks(tmp_path: Path) -> None:
    shell = fake_shell(tmp_path, "exit 0")
    assert find_shell({"SHELL": shell}) == shell
    fallback = "/bin/bash" if os.access("/bin/bash", os.X_OK) else "/bin/sh"
    assert find_shell({}) == fallback
    assert find_shell({"SHELL": str(tmp_path / "gone")}) == fallback
    assert find_shell({"SHELL": "zsh"}) == fallback  # not a path


def test_the_state_starts_from_a_copy_of_the_environment(tmp_path: Path) -> None:
    environ = {"HOME": str(tmp_path), "A": "1"}
    state = ShellState.from_environment(environ, cwd=str(tmp_path))
    state.env["A"] = "2"
    assert environ["A"] == "1"
    assert state.env["PWD"] == state.cwd == str(tmp_path)
    assert state.aliases == {}
