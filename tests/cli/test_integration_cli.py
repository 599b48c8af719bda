"""``conch integration``: the block shown, installed with the user's yes, replaced, removed;
one-line errors; and the one-shot command writing what it ran to ``CONCH_SHELL_HISTORY``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cliutil import CliResult, one_line_error, script
from conch.integration.shellcode import END, START

Conch = Callable[..., CliResult]
USER = "export EDITOR=vim\n"


def test_show_prints_the_block_with_its_markers(conch: Conch) -> None:
    result = conch("integration", "show", "bash")
    assert result.code == 0 and result.err == ""
    lines = result.out.splitlines()
    assert lines[0] == START and lines[-1] == END
    assert "bind -m emacs -x '\"\\ee\": __conch_line'" in result.out
    assert "complete -o bashdefault -F _shtab_conch conch" in result.out


def test_install_with_yes_adds_the_block_to_bashrc(conch: Conch, isolated_dirs: Path) -> None:
    bashrc = isolated_dirs / ".bashrc"
    bashrc.write_text(USER, encoding="utf-8")
    result = conch("integration", "install", "bash", "--yes")
    assert result.code == 0, result.err
    assert f"installed in {bashrc}" in result.out and "Alt+E" in result.out
    text = bashrc.read_text(encoding="utf-8")
    assert text.startswith(USER + START + "\n") and text.endswith(END + "\n")
    assert text[len(USER) :] == conch("integration", "show", "bash").out


def test_installing_twice_changes_nothing_and_another_key_replaces_the_block(
    conch: Conch, isolated_dirs: Path
) -> None:
    zshrc = isolated_dirs / ".zshrc"
    conch("integration", "install", "zsh", "--yes")
    first = zshrc.read_text(encoding="utf-8")
    again = conch("integration", "install", "zsh", "--yes")
    assert again.code == 0 and "already up to date" in again.out
    assert zshrc.read_text(encoding="utf-8") == first
    conch("integration", "install", "zsh", "--yes", "--key", "ctrl-g")
    text = zshrc.read_text(encoding="utf-8")
    assert text.count(START) == 1 and "'^G' __conch_line" in text and "'\\ee'" not in text


def test_uninstall_removes_exactly_the_block(conch: Conch, isolated_dirs: Path) -> None:
    config = isolated_dirs / ".config" / "fish" / "config.fish"
    config.parent.mkdir(parents=True)
    config.write_text("set -x A 1", encoding="utf-8")  # no newline at the end
    assert conch("integration", "install", "fish", "--yes").code == 0
    config.write_text(config.read_text(encoding="utf-8") + "set -x B 2\n", encoding="utf-8")
    result = conch("integration", "uninstall", "fish")
    assert result.code == 0 and f"removed from {config}" in result.out
    assert config.read_text(encoding="utf-8") == "set -x A 1\nset -x B 2\n"
    again = conch("integration", "uninstall", "fish")
    assert again.code == 0 and "nothing to remove" in again.out


def test_uninstall_where_there_is_no_file_creates_none(conch: Conch, isolated_dirs: Path) -> None:
    result = conch("integration", "uninstall", "bash")
    assert result.code == 0 and "nothing to remove" in result.out
    assert not (isolated_dirs / ".bashrc").exists()


def test_install_asks_on_the_terminal_and_shows_the_block(
    conch: Conch, isolated_dirs: Path
) -> None:
    bashrc = isolated_dirs / ".bashrc"
    result = conch("integration", "install", "bash", answers="y\n")
    assert result.code == 0, result.err
    assert f"this block goes into a new file, {bashrc}" in result.err
    assert f"  {START}\n" in result.err and f"Change {bashrc}? [y/N]" in result.err
    assert START in bashrc.read_text(encoding="utf-8")


@pytest.mark.parametrize("answer", ["n\n", "\n", ""])
def test_no_or_enter_at_the_question_leaves_the_file_alone(
    conch: Conch, isolated_dirs: Path, answer: str
) -> None:
    bashrc = isolated_dirs / ".bashrc"
    bashrc.write_text(USER, encoding="utf-8")
    result = conch("integration", "install", "bash", answers=answer)
    assert result.code == 4
    assert result.err.endswith(f"conch: {bashrc} left unchanged\n")
    assert bashrc.read_text(encoding="utf-8") == USER


def test_without_a_terminal_install_refuses_naming_yes(conch: Conch, isolated_dirs: Path) -> None:
    err = one_line_error(conch("integration", "install", "bash"), 4)
    assert "--yes" in err and "nothing changed" in err
    assert not (isolated_dirs / ".bashrc").exists()


def test_rc_names_another_file_relative_to_the_working_directory(
    conch: Conch, tmp_path: Path, isolated_dirs: Path
) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir(exist_ok=True)
    result = conch("integration", "install", "bash", "--yes", "--rc", "my.rc", cwd=cwd)
    assert result.code == 0, result.err
    assert START in (cwd / "my.rc").read_text(encoding="utf-8")
    assert not (isolated_dirs / ".bashrc").exists()
    home = conch("integration", "install", "zsh", "--yes", "--rc", "~/other.zsh")
    assert home.code == 0 and (isolated_dirs / "other.zsh").exists()


@pytest.mark.parametrize(
    ("argv", "code", "says"),
    [
        (["integration", "install", "tcsh", "--yes"], 2, "invalid choice: 'tcsh'"),
        (["integration", "install", "--yes"], 2, "required: shell"),
        (["integration", "remove", "bash"], 2, "invalid choice: 'remove'"),
        (["integration", "install", "bash", "--yes", "--key", "ctrl-c"], 2, "Ctrl+C interrupts"),
        (["integration", "show", "bash", "--key", "F5"], 2, "give Alt or Ctrl"),
        (["integration", "show", "bash", "--rc", "x"], 2, "--rc has no effect"),
        (["integration", "completions", "zsh", "--key", "alt-e"], 2, "--key has no effect"),
    ],
)
def test_bad_command_lines_are_one_line_usage_errors(
    conch: Conch, argv: list[str], code: int, says: str
) -> None:
    assert says in one_line_error(conch(*argv), code)


def test_an_rc_file_that_cannot_be_read_is_a_one_line_error(
    conch: Conch, isolated_dirs: Path
) -> None:
    (isolated_dirs / ".bashrc").mkdir()
    assert "is a directory" in one_line_error(conch("integration", "install", "bash", "--yes"), 1)
    (isolated_dirs / ".zshrc").write_bytes(b"\xff\xfe\n")
    assert "not UTF-8" in one_line_error(conch("integration", "uninstall", "zsh"), 1)


def test_a_broken_block_is_left_for_the_user_to_fix(conch: Conch, isolated_dirs: Path) -> None:
    bashrc = isolated_dirs / ".bashrc"
    bashrc.write_text(f"{USER}{START}\nmine\n", encoding="utf-8")
    err = one_line_error(conch("integration", "uninstall", "bash"), 1)
    assert "without its end marker" in err
    assert bashrc.read_text(encoding="utf-8") == f"{USER}{START}\nmine\n"


# -- what the one-shot command ran, for the shell's history -------------------------------------


@pytest.fixture
def shell_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The private file the shell integration's ``conch`` function makes."""
    path = tmp_path / "conch-history.test"
    path.touch(mode=0o600)
    monkeypatch.setenv("CONCH_SHELL_HISTORY", str(path))
    return path


def test_the_command_that_ran_is_appended_for_the_shell(
    conch: Conch, isolated_dirs: Path, shell_history: Path, tmp_path: Path
) -> None:
    script(isolated_dirs, "touch from-conch.txt")
    result = conch("make a file", answers="e\n")
    assert result.code == 0, result.err
    assert (tmp_path / "work" / "from-conch.txt").exists()
    assert shell_history.read_text(encoding="utf-8") == "touch from-conch.txt\n"


def test_the_user_s_edit_is_what_goes_to_the_shell_history(
    conch: Conch, isolated_dirs: Path, shell_history: Path
) -> None:
    script(isolated_dirs, "touch first.txt")
    result = conch("make a file", answers="m\ntouch second.txt\ne\n")
    assert result.code == 0, result.err
    assert shell_history.read_text(encoding="utf-8") == "touch second.txt\n"


@pytest.mark.parametrize(
    ("argv", "answers"),
    [
        (["-p", "make a file"], None),
        (["--json", "make a file"], None),
        (["make a file"], "a\n"),
        (["--no-history", "make a file"], "e\n"),
    ],
)
def test_nothing_that_did_not_run_or_asked_for_no_history_is_appended(
    conch: Conch, isolated_dirs: Path, shell_history: Path, argv: list[str], answers: str | None
) -> None:
    script(isolated_dirs, "touch nothing.txt")
    conch(*argv, answers=answers)
    assert shell_history.read_text(encoding="utf-8") == ""


def test_a_history_file_that_is_gone_is_a_warning_not_a_failure(
    conch: Conch, isolated_dirs: Path, shell_history: Path
) -> None:
    shell_history.unlink()
    script(isolated_dirs, "touch still-runs.txt")
    result = conch("make a file", answers="e\n")
    assert result.code == 0
    assert "conch: warning: CONCH_SHELL_HISTORY names" in result.err
    assert not shell_history.exists()
