"""The marked block in a shell's rc file: put in, replaced, taken out, and nothing else
touched; the rc file read and written safely."""

from __future__ import annotations

from pathlib import Path

import pytest

from conch.errors import InputError
from conch.integration.keys import parse_key
from conch.integration.rcfile import RcFile, current_block, with_block, without_block
from conch.integration.shellcode import END, START, build_block, rc_path

USER = "export EDITOR=vim\nalias ll='ls -l'\n"


def block(body: str = "echo conch\n") -> str:
    return f"{START}\n{body}{END}\n"


def test_the_block_goes_at_the_end_of_the_file() -> None:
    assert with_block(USER, block()) == USER + block()


def test_installing_twice_replaces_the_block_instead_of_adding_another() -> None:
    once = with_block(USER, block("old\n"))
    twice = with_block(once, block("new\n"))
    assert twice == USER + block("new\n")
    assert with_block(twice, block("new\n")) == twice


def test_a_block_in_the_middle_is_replaced_in_place() -> None:
    text = "first\n" + block("old\n") + "last\n"
    assert with_block(text, block("new\n")) == "first\n" + block("new\n") + "last\n"


def test_a_second_block_is_removed_when_the_first_is_replaced() -> None:
    text = "a\n" + block("one\n") + "b\n" + block("two\n") + "c\n"
    assert with_block(text, block("new\n")) == "a\n" + block("new\n") + "b\nc\n"


def test_uninstall_removes_exactly_the_block() -> None:
    text = "first\n" + block("x\ny\n") + "last\n"
    assert without_block(text) == "first\nlast\n"
    assert without_block(with_block(USER, block())) == USER


def test_uninstall_of_a_file_without_a_block_changes_nothing() -> None:
    assert without_block(USER) == USER
    assert current_block(USER) is None


def test_a_file_without_a_trailing_newline_gets_one_before_the_block() -> None:
    text = "export A=1"
    installed = with_block(text, block())
    assert installed == "export A=1\n" + block()
    assert without_block(installed) == "export A=1\n"


def test_an_empty_file_gets_the_block_alone() -> None:
    assert with_block("", block()) == block()
    assert without_block(block()) == ""


def test_crlf_lines_and_trailing_spaces_around_the_markers_are_still_markers() -> None:
    text = f"a\r\n{START} \r\nx\r\n{END}\r\nb\r\n"
    assert without_block(text) == "a\r\nb\r\n"


def test_a_start_marker_without_its_end_changes_nothing() -> None:
    text = f"a\n{START}\nsomething the user wrote\n"
    with pytest.raises(InputError, match="without its end marker"):
        with_block(text, block(), "~/.bashrc")
    with pytest.raises(InputError, match="line 2"):
        without_block(text)


def test_an_end_marker_without_a_start_changes_nothing() -> None:
    with pytest.raises(InputError, match="without"):
        without_block(f"a\n{END}\n")


def test_the_built_block_starts_and_ends_with_the_markers() -> None:
    text = build_block("bash", parse_key("alt-e"), "complete -F _c conch\n")
    lines = text.splitlines()
    assert lines[0] == START and lines[-1] == END
    assert "conch integration uninstall bash" in lines[1]
    assert "complete -F _c conch" in text
    assert current_block(USER + text) == text


def test_each_shell_has_its_own_rc_file(tmp_path: Path) -> None:
    home = tmp_path
    assert rc_path("bash", {}, home) == home / ".bashrc"
    assert rc_path("zsh", {}, home) == home / ".zshrc"
    assert rc_path("zsh", {"ZDOTDIR": "/z"}, home) == Path("/z/.zshrc")
    assert rc_path("fish", {}, home) == home / ".config" / "fish" / "config.fish"
    assert rc_path("fish", {"XDG_CONFIG_HOME": "/c"}, home) == Path("/c/fish/config.fish")


def test_a_missing_rc_file_reads_as_empty_and_is_created_private(tmp_path: Path) -> None:
    path = tmp_path / ".config" / "fish" / "config.fish"
    rc = RcFile.read(path)
    assert rc.text == "" and not rc.exists
    rc.write(with_block(rc.text, block()))
    assert path.read_text(encoding="utf-8") == block()
    assert path.stat().st_mode & 0o777 == 0o600


def test_writing_keeps_the_file_s_mode_and_leaves_no_temp_file(tmp_path: Path) -> None:
    home = tmp_path / "rc"
    home.mkdir()
    path = home / ".bashrc"
    path.write_text(USER, encoding="utf-8")
    path.chmod(0o644)
    rc = RcFile.read(path)
    rc.write(with_block(rc.text, block()))
    assert path.read_text(encoding="utf-8") == USER + block()
    assert path.stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in home.iterdir()) == [".bashrc"]


def test_a_linked_rc_file_is_changed_through_the_link(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "bashrc"
    real.write_text(USER, encoding="utf-8")
    link = tmp_path / ".bashrc"
    link.symlink_to(real)
    rc = RcFile.read(link)
    rc.write(with_block(rc.text, block()))
    assert link.is_symlink()
    assert real.read_text(encoding="utf-8") == USER + block()


def test_an_unreadable_rc_file_is_one_line_error(tmp_path: Path) -> None:
    directory = tmp_path / ".bashrc"
    directory.mkdir()
    with pytest.raises(InputError, match="is a directory"):
        RcFile.read(directory)
    binary = tmp_path / ".zshrc"
    binary.write_bytes(b"\xff\xfe not text\n")
    with pytest.raises(InputError, match="not UTF-8"):
        RcFile.read(binary)


def test_a_link_that_loops_is_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / ".bashrc"
    path.symlink_to(tmp_path / ".bashrc.d")
    (tmp_path / ".bashrc.d").symlink_to(path)
    with pytest.raises(InputError, match="cannot read"):
        RcFile.read(path)
