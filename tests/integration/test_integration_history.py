"""The commands conch ran, appended to the file ``CONCH_SHELL_HISTORY`` names, for the shell
integration's ``conch`` function to put in the shell's own history."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from conch.errors import ConchError
from conch.integration.history import SHELL_HISTORY_VARIABLE, append_ran


def test_each_command_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "history"
    path.touch()
    environ = {SHELL_HISTORY_VARIABLE: str(path)}
    assert append_ran(environ, "ls -1")
    assert append_ran(environ, "  du -sh .  \n")
    assert path.read_text(encoding="utf-8") == "ls -1\ndu -sh .\n"


def test_nothing_is_written_without_the_variable(tmp_path: Path) -> None:
    assert not append_ran({}, "ls")
    assert not append_ran({SHELL_HISTORY_VARIABLE: ""}, "ls")


def test_a_command_that_spans_lines_is_left_out(tmp_path: Path) -> None:
    path = tmp_path / "history"
    path.touch()
    environ = {SHELL_HISTORY_VARIABLE: str(path)}
    assert not append_ran(environ, "for f in *; do\n  echo $f\ndone")
    assert not append_ran(environ, "echo a\recho b")
    assert not append_ran(environ, "   ")
    assert path.read_text(encoding="utf-8") == ""


def test_a_missing_file_is_never_created(tmp_path: Path) -> None:
    path = tmp_path / "gone"
    with pytest.raises(ConchError, match="cannot be written"):
        append_ran({SHELL_HISTORY_VARIABLE: str(path)}, "ls")
    assert not path.exists()


def test_a_link_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_text("", encoding="utf-8")
    link = tmp_path / "link"
    link.symlink_to(target)
    with pytest.raises(ConchError, match="CONCH_SHELL_HISTORY"):
        append_ran({SHELL_HISTORY_VARIABLE: str(link)}, "ls")
    assert target.read_text(encoding="utf-8") == ""


def test_a_directory_or_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    with pytest.raises(ConchError, match="CONCH_SHELL_HISTORY"):
        append_ran({SHELL_HISTORY_VARIABLE: str(tmp_path)}, "ls")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ConchError, match="CONCH_SHELL_HISTORY"):
        append_ran({SHELL_HISTORY_VARIABLE: str(fifo)}, "ls")


def test_a_socket_is_not_a_file(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        with pytest.raises(ConchError, match="CONCH_SHELL_HISTORY"):
            append_ran({SHELL_HISTORY_VARIABLE: str(path)}, "ls")
