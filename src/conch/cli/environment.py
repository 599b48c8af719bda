"""The streams, terminal facts and directories the CLI works with, injectable for tests."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TextIO


@dataclass
class Environment:
    """Where the CLI reads and writes. Tests build one with fake streams and TTY flags."""

    stdin: IO[str] = field(default_factory=lambda: sys.stdin)
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    stdin_isatty: bool = field(default_factory=lambda: _isatty(sys.stdin))
    stdout_isatty: bool = field(default_factory=lambda: _isatty(sys.stdout))
    stderr_isatty: bool = field(default_factory=lambda: _isatty(sys.stderr))
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    cwd: Path = field(default_factory=Path.cwd)
    # Where questions are asked: the controlling terminal even when stdin is a pipe.
    terminal: IO[str] | None = None
    terminal_checked: bool = False

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
