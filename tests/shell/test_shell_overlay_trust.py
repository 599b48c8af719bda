"""The project overlay (``.conch.yaml``) when ``conch shell`` starts: trust is pinned to the
file's content, so a changed file is asked about again, in this process with the answers
read from a stream and on a real pseudo-terminal."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pexpect
import pytest

from cliutil import CliResult, spawn_conch, write_config

Conch = Callable[..., CliResult]

PROMPT = "[conch:scripted]$"
START_S = 10  # a new process: imports and the user's aliases
STEP_S = 5


def show_shell(conch: Conch, answers: str | None) -> CliResult:
    """``conch shell`` showing its ``shell`` settings, ``answers`` on its terminal (None: no
    terminal at all)."""
    result = conch("shell", stdin=":config show shell\n", answers=answers)
    assert result.code == 0, result.err
    return result


def test_a_changed_overlay_is_asked_about_again_and_a_no_pins_nothing(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    write_config(isolated_dirs, "ai:\n  provider: scripted\n")
    overlay = tmp_path / "work" / ".conch.yaml"
    overlay.write_text("shell:\n  max_turns: 6\n", encoding="utf-8")
    question = f"Trust project config {overlay}? [y/N] "

    trusted = show_shell(conch, "y\n")
    assert question in trusted.err
    assert f"shell.max_turns = 6  (project overlay {overlay})" in trusted.out

    unchanged = show_shell(conch, "")
    assert "Trust project config" not in unchanged.err
    assert f"shell.max_turns = 6  (project overlay {overlay})" in unchanged.out

    overlay.write_text("shell:\n  max_turns: 8\n", encoding="utf-8")
    refused = show_shell(conch, "n\n")
    assert question in refused.err
    assert "shell.max_turns = 40  (default)" in refused.out  # neither the old nor the new one

    asked_again = show_shell(conch, "y\n")
    assert question in asked_again.err
    assert f"shell.max_turns = 8  (project overlay {overlay})" in asked_again.out

    pinned = show_shell(conch, "")
    assert "Trust project config" not in pinned.err
    assert f"shell.max_turns = 8  (project overlay {overlay})" in pinned.out


def test_a_changed_overlay_with_no_terminal_to_ask_on_is_ignored_with_a_note(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    write_config(isolated_dirs, "ai:\n  provider: scripted\n")
    overlay = tmp_path / "work" / ".conch.yaml"
    overlay.write_text("shell:\n  max_turns: 6\n", encoding="utf-8")
    assert "Trust project config" in show_shell(conch, "y\n").err
    overlay.write_text("shell:\n  max_turns: 8\n", encoding="utf-8")
    result = show_shell(conch, None)
    assert f"conch: ignoring project config {overlay} (not trusted yet;" in result.err
    assert "shell.max_turns = 40  (default)" in result.out


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal prompt_toolkit knows, no cursor position requests, a plain bash."""
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setenv("PROMPT_TOOLKIT_NO_CPR", "1")
    monkeypatch.setenv("SHELL", "/bin/bash")


def start(work: Path, question: str) -> tuple[pexpect.spawn, bool]:
    """``conch shell`` in ``work`` on a pseudo-terminal, until its trust ``question`` or its
    prompt; the shell, and whether it asked."""
    child = spawn_conch(work, "shell")
    child.timeout = STEP_S
    asked = child.expect_exact([question, PROMPT], timeout=START_S) == 0
    return child, asked


def quit_shell(child: pexpect.spawn) -> int:
    child.send(":quit\r")
    child.expect(pexpect.EOF)
    child.close()
    status: int = child.exitstatus
    return status


def test_on_a_terminal_the_question_comes_back_after_the_overlay_changes(
    isolated_dirs: Path, tmp_path: Path, terminal: None
) -> None:
    write_config(isolated_dirs, "ai:\n  provider: scripted\n")
    work = tmp_path / "project"
    work.mkdir()
    overlay = work / ".conch.yaml"
    overlay.write_text("shell:\n  max_turns: 6\n", encoding="utf-8")
    question = f"Trust project config {overlay}? [y/N] "

    first, asked = start(work, question)
    try:
        assert asked, "the first start did not ask about the overlay"
        first.send("y\r")
        first.expect_exact(PROMPT)
        assert quit_shell(first) == 0
    finally:
        first.close(force=True)

    second, asked = start(work, question)
    try:
        assert not asked, "the overlay was asked about again though it had not changed"
        assert quit_shell(second) == 0
    finally:
        second.close(force=True)

    overlay.write_text("shell:\n  max_turns: 8\n", encoding="utf-8")
    third, asked = start(work, question)
    try:
        assert asked, "the changed overlay was not asked about again"
        third.send("y\r")
        third.expect_exact(PROMPT)
        third.send(":config show shell\r")
        third.expect_exact(f"shell.max_turns = 8  (project overlay {overlay})")
        third.expect_exact(PROMPT)
        assert quit_shell(third) == 0
    finally:
        third.close(force=True)
