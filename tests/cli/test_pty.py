"""The confirmation flow in a real pseudo-terminal, as a user at a keyboard sees it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pexpect

from cliutil import spawn_conch, write_config
from conch.config.paths import Paths
from conch.storage.history import History


def _script(home: Path, *replies: str) -> None:
    lines = "".join(f"    - {json.dumps(r)}\n" for r in replies)
    write_config(home, f"ai:\n  provider: scripted\n  script:\n{lines}")


def test_execute_at_the_prompt_runs_the_command(isolated_dirs: Path, tmp_path: Path) -> None:
    _script(isolated_dirs, "touch from-a-terminal.txt")
    child = spawn_conch(tmp_path, "make a file")
    child.expect_exact("touch from-a-terminal.txt")
    child.expect_exact("[E]xecute, [D]escribe, [M]odify, [A]bort?")
    child.sendline("e")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (tmp_path / "from-a-terminal.txt").exists()


def test_modify_prefills_the_command_for_editing(isolated_dirs: Path, tmp_path: Path) -> None:
    _script(isolated_dirs, "touch first.txt")
    child = spawn_conch(tmp_path, "make a file")
    child.expect_exact("[A]bort?")
    child.sendline("m")
    child.expect_exact("edit> ")
    # The line is pre-filled with the command: erase "first.txt" and type another name.
    child.send("\b" * len("first.txt") + "second.txt\r")
    child.expect_exact("[A]bort?")
    child.sendline("e")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (tmp_path / "second.txt").exists() and not (tmp_path / "first.txt").exists()


def test_ctrl_c_at_the_prompt_exits_130_and_is_recorded(
    isolated_dirs: Path, tmp_path: Path
) -> None:
    _script(isolated_dirs, "touch never.txt")
    child = spawn_conch(tmp_path, "make a file")
    child.expect_exact("[A]bort?")
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert not (tmp_path / "never.txt").exists()
    entry = History(Paths.default().state_dir).latest()
    assert entry is not None and entry.exit_code == 130 and not entry.executed


def test_piped_stdin_still_asks_on_the_terminal(isolated_dirs: Path, tmp_path: Path) -> None:
    _script(isolated_dirs, "touch piped.txt")
    (tmp_path / "err.log").write_text("Error: something\n", encoding="utf-8")
    child = pexpect.spawn(
        "/bin/sh",
        ["-c", f"cat err.log | {sys.executable} -m conch 'fix it'"],
        cwd=str(tmp_path),
        env=dict(os.environ),
        encoding="utf-8",
        timeout=30,
    )
    child.expect_exact("[A]bort?")
    child.sendline("e")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (tmp_path / "piped.txt").exists()
