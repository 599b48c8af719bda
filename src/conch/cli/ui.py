"""Terminal output of the one-shot CLI: progress line, command display, questions."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence

from conch.cli.environment import Environment
from conch.messages import Finished, ProviderEvent, Stage, TextDelta

_RISK_COLOUR = {
    "read-only": "32",
    "writes": "33",
    "network": "33",
    "unknown": "35",
    "destructive": "31",
    "privileged": "31",
}


SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_TICK_S = 0.1


def usage_report(prompt_tokens: int, completion_tokens: int, rate: float, n_ctx: int | None) -> str:
    """The summary shown when generation ends: ``● XX% / NNNN tokens  last: 00.0tk/s``.

    XX% is how full the context window is (left out when its size is unknown), NNNN the
    tokens in it (prompt and reply), and the last observed generation speed.
    """
    used = prompt_tokens + completion_tokens
    fill = f"{100 * used / n_ctx:.0f}% / " if n_ctx else ""
    return f"● {fill}{used} tokens  last: {rate:04.1f}tk/s"


class Progress:
    """A one-line spinner on stderr while conch waits, with live tokens/s while the model
    writes, and the usage report in its place when the model is done; ``clear`` erases the
    line, so nothing of it stays above what is shown next (the command, an answer).

    Silent unless stderr is a terminal (stdout may go to a pipe or a file: ``conch -p ... |
    xclip`` still shows what conch is doing), and with ``-q`` or ``NO_COLOR``.
    A background thread keeps the spinner turning while the model reads the prompt (no tokens
    arrive then); it stops with ``clear``.
    """

    def __init__(
        self,
        env: Environment,
        enabled: bool,
        n_ctx: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.env = env
        self.clock = clock
        self.enabled = enabled and env.stderr_isatty and "NO_COLOR" not in env.environ
        self.n_ctx = n_ctx
        self.tokens = 0
        self.started = 0.0
        self.first_token = 0.0
        self.label = ""
        self.fraction: float | None = None
        self.rate = 0.0
        self.usage: tuple[int, int] | None = None
        self._frame = 0
        self._shown = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def stage(self, label: str, fraction: float | None = None) -> None:
        """Show a stage such as 'loading model' (with a percentage when known)."""
        if not self.enabled:
            return
        with self._lock:
            if label != self.label:
                self.tokens = 0
            self.label, self.fraction = label, fraction
            self.usage = None
            self._draw()
        self._ensure_ticker()

    def start(self, label: str) -> None:
        """Begin a stage whose streamed tokens are counted (the rate restarts)."""
        with self._lock:
            self.label, self.fraction = label, None
            self.tokens = 0
            self.usage = None
            self.started = self.clock()
            self.first_token = 0.0
        if self.enabled:
            with self._lock:
                self._draw()
            self._ensure_ticker()

    def on_event(self, event: ProviderEvent) -> None:
        """Show a model event: a stage of loading, a streamed piece (counted, the rate
        refreshed), the usage at the end (the report, on the line until the next stage or
        ``clear``). Notes are the caller's."""
        if isinstance(event, Stage):
            self.stage(event.label, event.fraction)
        elif isinstance(event, Finished):
            usage = event.usage
            if usage.prompt_tokens or usage.completion_tokens:
                with self._lock:
                    self.usage = (usage.prompt_tokens, usage.completion_tokens)
                    if self.enabled:
                        self._draw()
        elif isinstance(event, TextDelta) and event.text:
            self._count()

    def _count(self) -> None:
        now = self.clock()
        with self._lock:
            if not self.first_token:
                self.first_token = now
            self.tokens += 1
            elapsed = now - self.first_token
            if self.tokens > 1 and elapsed > 0:
                self.rate = (self.tokens - 1) / elapsed
            if self.enabled:
                self._draw()

    def clear(self) -> None:
        """Stop the spinner and erase its line (the report with it): what comes next is
        written where the line was."""
        self._stop.set()
        ticker, self._ticker = self._ticker, None
        if ticker is not None and ticker.ident is not None:  # Ctrl+C may land before start
            ticker.join(timeout=1.0)
        self._stop.clear()
        if not self.enabled:
            return
        with self._lock:
            self.usage = None
            if self._shown:
                self.env.stderr.write("\r\x1b[2K")
                self._shown = False
            self.env.stderr.flush()

    def _ensure_ticker(self) -> None:
        if self._ticker is None:
            self._ticker = threading.Thread(target=self._tick, name="conch-spinner", daemon=True)
            self._ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(_TICK_S):
            with self._lock:
                if self.usage is None:  # the report stays as it is
                    self._frame += 1
                    self._draw()

    def _draw(self) -> None:
        """Redraw the line (the caller holds the lock)."""
        if self.usage is not None and self.rate >= 0.1:
            report = usage_report(*self.usage, self.rate, self.n_ctx)
            self.env.stderr.write("\r\x1b[2K" + paint(self.env, report, "34"))
            self.env.stderr.flush()
            self._shown = True
            return
        spinner = SPINNER[self._frame % len(SPINNER)]
        text = f"{spinner} {self.label}"
        if self.fraction is not None:
            text += f" {self.fraction * 100:3.0f}%"
        elif self.tokens:
            text += f" · {self.tokens} tokens  {self.rate:4.1f} tk/s"
        elif self.started:
            text += f" {self.clock() - self.started:4.1f}s"
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
