"""Terminal output of the one-shot CLI: progress line, command display, questions."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

from conch.cli.environment import Environment
from conch.messages import Chunk

_RISK_COLOUR = {
    "read-only": "32",
    "writes": "33",
    "network": "33",
    "unknown": "35",
    "destructive": "31",
    "privileged": "31",
}


class Progress:
    """A one-line status on stderr (only on a terminal, and not with -q)."""

    def __init__(self, env: Environment, enabled: bool) -> None:
        self.env = env
        self.enabled = enabled and env.stderr_isatty
        self.tokens = 0
        self.started = 0.0
        self.label = ""
        self._shown = False

    def stage(self, label: str, fraction: float | None = None) -> None:
        """Show a stage such as 'loading model' (with a percentage when known)."""
        if not self.enabled:
            return
        text = f"conch: {label}" + (f" {fraction * 100:3.0f}%" if fraction is not None else "…")
        self._write(text)

    def start(self, label: str) -> None:
        """Begin counting streamed tokens for ``label``."""
        self.label = label
        self.tokens = 0
        self.started = time.monotonic()
        self.stage(label)

    def on_chunk(self, chunk: Chunk) -> None:
        """Count a streamed piece and refresh the rate."""
        if not self.enabled or not chunk.text:
            return
        self.tokens += 1
        elapsed = max(time.monotonic() - self.started, 1e-6)
        self._write(
            f"conch: {self.label} · {self.tokens} tokens  {self.tokens / elapsed:4.1f} tk/s"
        )

    def clear(self) -> None:
        """Erase the status line."""
        if self.enabled and self._shown:
            self.env.stderr.write("\r\x1b[2K")
            self.env.stderr.flush()
            self._shown = False

    def _write(self, text: str) -> None:
        self.env.stderr.write("\r\x1b[2K" + text)
        self.env.stderr.flush()
        self._shown = True


def paint(env: Environment, text: str, code: str) -> str:
    """``text`` in an ANSI colour when colour is on."""
    return f"\x1b[{code}m{text}\x1b[0m" if env.color else text


def show_command(
    env: Environment,
    command: str,
    risk: str,
    reasons: Sequence[str] = (),
    context_lines: Sequence[str] = (),
) -> None:
    """The confirmation display: config paths and request, the command, its risk and notes."""
    err = env.stderr
    for line in context_lines:
        err.write(paint(env, line, "2") + "\n")
    err.write(paint(env, "  " + command, "1") + "\n")
    err.write("  risk: " + paint(env, risk, _RISK_COLOUR.get(risk, "0")) + "\n")
    for reason in reasons:
        err.write(f"  - {reason}\n")
    err.flush()


def ask(env: Environment, question: str, choices: str, default: str) -> str:
    """Ask on the terminal; returns one of ``choices`` (lower-case letters). EOF -> default."""
    terminal = env.open_terminal()
    if terminal is None:
        return default
    while True:
        env.stderr.write(question)
        env.stderr.flush()
        line = terminal.readline()
        if not line:
            env.stderr.write("\n")
            return default
        answer = line.strip().lower()[:1] or default
        if answer in choices:
            return answer
        env.stderr.write(f"  please answer one of: {', '.join(choices)}\n")


def edit_command(env: Environment, command: str) -> str:
    """Let the user edit ``command`` (pre-filled when the terminal is stdin)."""
    if env.stdin_isatty and env.stdin is sys.stdin:
        try:
            import readline

            readline.set_startup_hook(lambda: readline.insert_text(command))
            try:
                return input("  edit> ").strip()
            finally:
                readline.set_startup_hook()
        except (ImportError, EOFError):
            return ""
    terminal = env.open_terminal()
    if terminal is None:
        return ""
    env.stderr.write(f"  current: {command}\n  new command> ")
    env.stderr.flush()
    return terminal.readline().strip()
