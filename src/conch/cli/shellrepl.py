"""``conch shell`` on the terminal: the subcommand, and the loop that reads lines.

What a line does is the library's (``conch.shell.session.ShellSession``); this module parses
the flags, loads the settings, builds the session with the terminal's callbacks
(``conch.cli.shellview.ShellView``: events drawn, questions asked), then reads lines
(``conch.cli.shellinput``) and hands each to the session until :quit, Ctrl+D (which the
session takes as :quit) or three Ctrl+C within two seconds.
"""

from __future__ import annotations

import argparse
import codecs
import io
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO, cast

from conch.cli.configflag import add_config_flag
from conch.cli.environment import Environment
from conch.cli.parsing import USAGES, Parser, add_daemon_flag
from conch.cli.repl import Interrupts
from conch.cli.shellinput import Line, make_line_reader
from conch.cli.shellview import ShellView, drive
from conch.cli.status import ExitStatus
from conch.errors import UsageError
from conch.shell.parts import SHELL_STEPS

if TYPE_CHECKING:
    from conch.config.settings import LoadedSettings
    from conch.mcp.client import McpServers
    from conch.providers.base import Provider
    from conch.shell.models import ModelChoice
    from conch.shell.session import ShellSession

HISTORY_FILE = "shell_history"


def build_shell_parser() -> argparse.ArgumentParser:
    """The parser of ``conch shell``."""
    p = Parser(
        prog="conch shell",
        usage=USAGES["shell"],
        description="A shell where your commands run as usual and plain language goes to "
        "the model, which sees what just happened.",
        epilog="`conch help shell` has the routing rules, the meta commands and the keys.",
    )
    p.add_argument("words", nargs="*", help=argparse.SUPPRESS)
    p.add_argument(
        "--continue",
        dest="resume",
        action="store_true",
        help="take up the last shell session again",
    )
    p.add_argument(
        "--max-steps",
        type=int,
        default=SHELL_STEPS,
        metavar="N",
        help=f"model replies one :auto goal may take (default: {SHELL_STEPS})",
    )
    model = p.add_argument_group("model")
    model.add_argument("--provider", metavar="NAME", help="override ai.provider")
    model.add_argument(
        "--model",
        metavar="NAME",
        help="a model of the models: section (with none configured: override ai.model)",
    )
    add_daemon_flag(model)
    add_config_flag(model)
    p.add_argument("--traceback", action="store_true", help="show tracebacks on errors")
    return p


def run_shell(args: argparse.Namespace, env: Environment) -> int:
    """``conch shell``: check the flags, load the settings (asking once about a project
    overlay not trusted yet), pick the model, then read lines until :quit or Ctrl+D."""
    from conch.cli.loading import load_for
    from conch.config.paths import Paths
    from conch.shell.models import starting_model
    from conch.shell.session import ShellSession
    from conch.shell.state import ShellState

    if args.max_steps < 1:
        raise UsageError(f"--max-steps must be 1 or more, not {args.max_steps}")
    loaded = load_for(
        argparse.Namespace(provider=args.provider, model=None, no_daemon=args.no_daemon), env
    )
    flags: dict[str, Any] = {
        "ai.provider": args.provider,
        "daemon.enabled": False if args.no_daemon else None,
    }
    choice = starting_model(loaded.settings, args.model, flags)
    paths = Paths.default()
    state = ShellState.of_user(env.environ, str(env.cwd))
    view = ShellView(env, list(args.argv), loaded)
    keys = _keys(env)
    try:
        session = ShellSession(
            loaded,
            choice,
            state=state,
            state_dir=paths.state_dir,
            approve=view.approve,
            edit=view.edit,
            open_model=_model_opener(loaded, env),
            open_mcp=_mcp_opener(loaded, env, paths.state_dir, view),
            environ=env.environ,
            flags=flags,
            max_steps=args.max_steps,
            keys=keys,
            out=_output(env),
            cache_dir=paths.cache_dir,
            pinned=args.model is not None,
        )
        view.session = session
        try:
            drive(session.open(args.resume), view.render)
            return ShellLoop(session, view).run(paths.state_dir / HISTORY_FILE)
        finally:
            session.close()
    finally:
        if keys is not None:
            os.close(keys)


def _model_opener(loaded: LoadedSettings, env: Environment) -> Any:
    """Opens a model as the other front ends do, asking first for an API key a named model
    needs and does not have."""

    def open_model(choice: ModelChoice) -> Provider:
        from conch.cli.authcmd import ask_for_missing_key
        from conch.daemon import open_provider

        if choice.named:
            ask_for_missing_key(choice.ai, env)
        return open_provider(choice.ai, loaded.settings.daemon)

    return open_model


def _mcp_opener(loaded: LoadedSettings, env: Environment, state_dir: Path, view: ShellView) -> Any:
    """Starts the configured MCP servers; one that cannot start is a warning."""

    def open_mcp() -> McpServers | None:
        from conch.cli.mcpuse import connect_mcp

        warn = lambda text: view.say(text, warning=True)  # noqa: E731
        return connect_mcp(loaded.settings, env.environ, state_dir, warn)

    return open_mcp


class ShellLoop:
    """Reads lines and hands each to the session, until :quit, Ctrl+D or three Ctrl+C."""

    def __init__(self, session: ShellSession, view: ShellView) -> None:
        self.session, self.view = session, view
        self.interrupts = Interrupts()

    def run(self, history: Path) -> int:
        """The loop, with the input history in the file ``history``."""
        session, view = self.session, self.view
        read = make_line_reader(view.env, history, session.state, session.names.listed)
        view.read = read
        view.say(
            f"your commands run in {session.state.shell}; plain language goes to "
            f"{session.choice.name}. :help lists the meta commands; Ctrl+D leaves."
        )
        previous = signal.signal(signal.SIGINT, self._interrupted)
        try:
            return self._loop()
        finally:
            signal.signal(signal.SIGINT, previous)

    def _loop(self) -> int:
        view = self.view
        assert view.read is not None
        while True:
            try:
                line = view.read(self.session.prompt())
            except EOFError:  # Ctrl+D: as :quit (the session's summary first)
                view.env.stderr.write("\n")
                try:
                    drive(self.session.leave(), view.render)
                except KeyboardInterrupt:
                    view.turns.pause()
                return ExitStatus.OK
            except KeyboardInterrupt:  # at the prompt: the line is gone, a new prompt
                if self.interrupts.press():
                    return ExitStatus.INTERRUPTED
                continue
            try:
                if self.handle(line):
                    return ExitStatus.OK
            except KeyboardInterrupt:
                view.turns.pause()
                view.env.stderr.write("\n")
                view.say("interrupted")

    def handle(self, line: Line) -> bool:
        """Carry out one line; True when the shell should end."""
        drive(self.session.handle(line.text, line.flipped), self.view.render)
        return self.session.leaving

    def _interrupted(self, signum: int, frame: Any) -> None:
        """Ctrl+C outside the line editor (a reply, a question): stop it; the third within
        the window leaves at once."""
        if self.interrupts.press():
            os.write(2, b"\nconch: three Ctrl+C: leaving now\n")
            os._exit(ExitStatus.INTERRUPTED)
        raise KeyboardInterrupt


def _output(env: Environment) -> BinaryIO | None:
    """Where shell lines write: the process's stdout itself, or a text stream in its place."""
    if env.stdout is sys.stdout:
        return None
    return cast(BinaryIO, _TextSink(env.stdout))


def _keys(env: Environment) -> int | None:
    """Where a shell line's keys come from: the process's terminal (None: the default), or
    nowhere when the shell does not read one (its input lines are not a program's keys)."""
    if env.stdin is sys.stdin and env.stdin_isatty:
        return None
    return os.open(os.devnull, os.O_RDONLY)


class _TextSink(io.RawIOBase):
    """A binary stream that decodes what it is given into a text stream."""

    def __init__(self, out: TextIO) -> None:
        super().__init__()
        self._text = out
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self._text.write(self._decoder.decode(chunk))
        return len(chunk)

    def flush(self) -> None:
        self._text.flush()
