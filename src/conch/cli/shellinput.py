"""Reading the lines of ``conch shell``: prompt_toolkit on a real terminal, plain lines from
anywhere else (pipes, tests).

On a terminal: a history file (Up, Down, Ctrl+R), Tab completion (meta commands after a
colon, command names for the first word, paths relative to the shell's directory for the
others), a line pre-filled for editing, and Alt+Enter to send the line the other way (to the
model when it would run, to the shell when it would go to the model).

prompt_toolkit is imported here only, when a shell starts: ``conch --help`` never loads it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from conch.cli.environment import Environment
from conch.shell.complete import CommandNames, path_completions, word_kind
from conch.shell.meta import meta_names
from conch.shell.state import ShellState

if TYPE_CHECKING:
    from prompt_toolkit.completion import CompleteEvent, Completion
    from prompt_toolkit.document import Document


@dataclass(frozen=True, slots=True)
class Line:
    """One line read: its text, and whether Alt+Enter sent it (the other way)."""

    text: str
    flipped: bool = False


class LineReader(Protocol):
    """Reads one line after ``prompt``, pre-filled with ``default``; EOFError on Ctrl+D (or
    the end of input), KeyboardInterrupt on Ctrl+C."""

    def __call__(self, prompt: str, default: str = "") -> Line: ...


def on_terminal(env: Environment) -> bool:
    """Whether the shell reads the process's own terminal (prompt_toolkit can run)."""
    return (
        env.stdin_isatty
        and env.stdout_isatty
        and env.stdin is sys.stdin
        and env.stdout is sys.stdout
    )


def make_line_reader(
    env: Environment,
    history: Path | None,
    state: ShellState,
    names: Callable[[], Iterable[str]] | None = None,
) -> LineReader:
    """The reader for ``env``: prompt_toolkit with ``history`` as its file (None: kept in
    memory) and completion from ``state`` on the process's terminal (command names from
    ``names``: by default ``conch.shell.complete.CommandNames.listed`` of ``state``); plain
    lines of ``env.stdin`` otherwise (the prompt on stderr)."""
    if on_terminal(env):
        return _terminal_reader(env, history, state, names or CommandNames(state).listed)
    return _PlainReader(env)


class _PlainReader:
    def __init__(self, env: Environment) -> None:
        self.env = env

    def __call__(self, prompt: str, default: str = "") -> Line:
        if default:
            self.env.stderr.write(f"  edit (an empty line keeps it): {default}\n")
        self.env.stderr.write(prompt)
        self.env.stderr.flush()
        line = self.env.stdin.readline()
        if not line:
            raise EOFError
        text = line.rstrip("\n")
        return Line(text if text.strip() or not default else default)


def _terminal_reader(
    env: Environment, history: Path | None, state: ShellState, names: Callable[[], Iterable[str]]
) -> LineReader:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.completion import Completer
    from prompt_toolkit.filters import is_searching
    from prompt_toolkit.history import FileHistory, History, InMemoryHistory
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    class ShellCompleter(Completer):
        def get_completions(
            self, document: Document, complete_event: CompleteEvent
        ) -> Iterator[Completion]:
            before = document.text_before_cursor
            word = document.get_word_before_cursor(WORD=True)
            kind = word_kind(before)
            if kind == "meta":
                choices: Iterable[str] = meta_names()
            elif kind == "command":
                choices = names()
            else:
                choices = path_completions(word, state.cwd, state.home())
            yield from _completions(word, choices)

    bindings = KeyBindings()
    flipped = [False]

    @bindings.add("escape", "enter", filter=~is_searching)
    def _other_way(event: KeyPressEvent) -> None:
        flipped[0] = True
        event.current_buffer.validate_and_handle()

    store: History = InMemoryHistory()
    if history is not None:
        try:
            history.parent.mkdir(parents=True, exist_ok=True)
            store = FileHistory(str(history))
        except OSError:
            env.stderr.write(f"conch: warning: no input history: cannot create {history}\n")
    session: PromptSession[str] = PromptSession(
        history=store,
        key_bindings=bindings,
        completer=ShellCompleter(),
        complete_while_typing=False,
    )

    def read(prompt: str, default: str = "") -> Line:
        flipped[0] = False
        text = session.prompt(prompt, default=default)
        return Line(text, flipped[0])

    return read


def _completions(word: str, choices: Iterable[str]) -> Iterator[Completion]:
    from prompt_toolkit.completion import Completion

    for choice in choices:
        if choice.startswith(word):
            yield Completion(choice, start_position=-len(word))
