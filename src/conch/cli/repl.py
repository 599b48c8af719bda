"""Reading the chat REPL's input: prompt_toolkit on a real terminal (history file,
multi-line input, Ctrl+R), plain lines otherwise; and counting Ctrl+C presses.

prompt_toolkit is imported here only, when a REPL starts: ``conch --help`` never loads it.
"""

from __future__ import annotations

import sys
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from conch.cli.environment import Environment

PROMPT = "❯ "
CONTINUATION = "… "
# Three Ctrl+C presses within this many seconds leave conch at once.
FORCE_WINDOW_S = 2.0

Reader = Callable[[], str]


class Interrupts:
    """Ctrl+C presses: ``press`` says whether this one is the third within the window."""

    def __init__(
        self, window: float = FORCE_WINDOW_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.window, self.clock = window, clock
        self._times: deque[float] = deque(maxlen=3)

    def press(self) -> bool:
        """Count a press; True when it makes three within the window (force exit)."""
        now = self.clock()
        self._times.append(now)
        return len(self._times) == 3 and now - self._times[0] <= self.window


def make_reader(env: Environment, history: Path | None) -> Reader:
    """A function that reads one input (EOFError on Ctrl+D, KeyboardInterrupt on Ctrl+C).

    On the process's own terminal: prompt_toolkit, with ``history`` as its history file
    (None: kept in memory), Enter to send, Alt+Enter (or a line ending in ``\\``) for a
    new line, Ctrl+R to search earlier inputs. Anywhere else: one line of ``env.stdin``.
    """
    if (
        env.stdin_isatty
        and env.stdout_isatty
        and env.stdin is sys.stdin
        and env.stdout is sys.stdout
    ):
        return _prompt_toolkit_reader(env, history)
    return _plain_reader(env)


def _plain_reader(env: Environment) -> Reader:
    def read() -> str:
        env.stderr.write(PROMPT)
        env.stderr.flush()
        line = env.stdin.readline()
        if not line:
            raise EOFError
        text = line.rstrip("\n")
        while text.endswith("\\"):
            more = env.stdin.readline()
            if not more:
                break
            text = text[:-1] + "\n" + more.rstrip("\n")
        return text

    return read


def _prompt_toolkit_reader(env: Environment, history: Path | None) -> Reader:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.filters import is_searching
    from prompt_toolkit.formatted_text import ANSI
    from prompt_toolkit.history import FileHistory, History, InMemoryHistory
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    bindings = KeyBindings()

    @bindings.add("enter", filter=~is_searching)
    @bindings.add("c-j", filter=~is_searching)
    def _send(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.document.text_before_cursor.endswith("\\"):
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
        else:
            buffer.validate_and_handle()

    @bindings.add("escape", "enter", filter=~is_searching)
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    store: History = InMemoryHistory()
    if history is not None:
        history.parent.mkdir(parents=True, exist_ok=True)
        store = FileHistory(str(history))
    prompt = ANSI(f"\x1b[32m{PROMPT}\x1b[0m") if env.color else PROMPT
    session: PromptSession[str] = PromptSession(
        history=store,
        key_bindings=bindings,
        multiline=True,
        prompt_continuation=CONTINUATION,
    )

    def read() -> str:
        return session.prompt(prompt)

    return read
