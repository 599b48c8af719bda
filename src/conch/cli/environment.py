"""The streams, terminal facts and directories the CLI works with, injectable for tests."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO, TextIO


class Environment:
    """Where the CLI reads and writes. Tests build one with fake streams and TTY flags.

    A plain class rather than a dataclass: ``dataclasses`` (and the ``inspect`` it imports)
    would be most of the import time of ``conch --help``.
    """

    def __init__(
        self,
        stdin: IO[str] | None = None,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
        stdin_isatty: bool | None = None,
        stdout_isatty: bool | None = None,
        stderr_isatty: bool | None = None,
        environ: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        terminal: IO[str] | None = None,
        terminal_checked: bool = False,
    ) -> None:
        self.stdin: IO[str] = sys.stdin if stdin is None else stdin
        self.stdout: TextIO = sys.stdout if stdout is None else stdout
        self.stderr: TextIO = sys.stderr if stderr is None else stderr
        self.stdin_isatty = _isatty(sys.stdin) if stdin_isatty is None else stdin_isatty
        self.stdout_isatty = _isatty(sys.stdout) if stdout_isatty is None else stdout_isatty
        self.stderr_isatty = _isatty(sys.stderr) if stderr_isatty is None else stderr_isatty
        self.environ: Mapping[str, str] = dict(os.environ) if environ is None else environ
        self.cwd = Path.cwd() if cwd is None else cwd
        # Where questions are asked: the controlling terminal even when stdin is a pipe.
        self.terminal = terminal
        self.terminal_checked = terminal_checked

    def open_terminal(self) -> IO[str] | None:
        """A readable terminal for questions, or None when there is none (CI, cron, pipes)."""
        if self.terminal is not None or self.terminal_checked:
            return self.terminal
        self.terminal_checked = True
        if self.stdin_isatty:
            self.terminal = self.stdin
            return self.terminal
        try:
            self.terminal = open("/dev/tty", encoding="utf-8")  # noqa: SIM115 - lives with the process
        except OSError:
            self.terminal = None
        return self.terminal

    @property
    def color(self) -> bool:
        """Whether to use colour on stderr."""
        return self.stderr_isatty and "NO_COLOR" not in self.environ


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):
        return False
