"""``conch shell``: one terminal where your commands run as usual, plain language goes to
the model, and the model sees what just happened.

Each line is routed (``conch.shell.route``): a command runs in your shell on the terminal
(``ShellParts.run``), anything else is a model turn (``shellturn``) or, in autonomous mode,
a goal for the agent (``shellauto``), and ``:name`` is a meta command (``shellmeta``).
Ctrl+C stops what runs and returns to the prompt; three within two seconds leave at once.
"""

from __future__ import annotations

import argparse
import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conch.cli.environment import Environment
from conch.cli.parsing import USAGES, Parser, add_daemon_flag
from conch.cli.shellinput import Line, make_line_reader
from conch.cli.shellmeta import run_meta
from conch.cli.shellparts import ShellParts
from conch.cli.shellturn import ask_model, not_found, offer_model
from conch.cli.status import ExitStatus
from conch.errors import UsageError
from conch.shell.models import ModelChoice
from conch.shell.route import flip, route

if TYPE_CHECKING:
    from conch.config.settings import Settings

HISTORY_FILE = "shell_history"
# Model replies one goal of the autonomous mode (``:auto``) may take.
SHELL_STEPS = 20


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
    p.add_argument("--traceback", action="store_true", help="show tracebacks on errors")
    return p


def run_shell(args: argparse.Namespace, env: Environment) -> int:
    """``conch shell``: check the flags, load the settings (asking once about a project
    overlay not trusted yet), pick the model, then read lines until :quit or Ctrl+D."""
    from conch.cli.loading import load_for
    from conch.config.paths import Paths

    if args.max_steps < 1:
        raise UsageError(f"--max-steps must be 1 or more, not {args.max_steps}")
    loaded = load_for(
        argparse.Namespace(provider=args.provider, model=None, no_daemon=args.no_daemon), env
    )
    flags: dict[str, Any] = {
        "ai.provider": args.provider,
        "daemon.enabled": False if args.no_daemon else None,
    }
    choice = _choice(loaded.settings, args.model, flags)
    state_dir = Paths.default().state_dir
    parts = ShellParts(args, env, loaded, flags, choice, state_dir)
    try:
        _open_session(parts, args.resume)
        return ShellLoop(parts).run(state_dir / HISTORY_FILE)
    finally:
        parts.close()


def _choice(settings: Settings, name: str | None, flags: dict[str, Any]) -> ModelChoice:
    """The model ``--model`` (else ``shell.model``) names; with no ``models:`` section,
    ``--model`` sets ``ai.model`` as it does for ``conch chat``."""
    from conch.shell.models import choose_model, default_choice

    if name is None:
        return choose_model(settings, settings.shell.model, "shell.model")
    if settings.models:
        return choose_model(settings, name, "--model")
    settings.ai.model = name
    flags["ai.model"] = name
    return default_choice(settings.ai)


def _open_session(parts: ShellParts, resume: bool) -> None:
    """Take up the last saved session (``--continue``) or start a new one; a session that
    cannot be saved is a warning, and the shell runs unsaved."""
    from conch.shell.sessions import ShellSession, ShellSessionError

    try:
        if resume:
            last = ShellSession.last(parts.state_dir)
            if last is not None:
                turns = last.turns()
                parts.context.restore(turns)
                parts.session = last
                parts.save({"type": "resume", "cwd": parts.state.cwd})
                asked = sum(t.role == "user" for t in turns)
                parts.say(f"resumed the shell session {last.path.name} ({asked} questions)")
                return
            parts.say("no saved shell session yet; starting a new one")
        parts.session = ShellSession.create(parts.state_dir, parts.state.cwd, parts.choice.name)
    except ShellSessionError as exc:
        parts.warn(f"{exc}; this session is not saved")


class ShellLoop:
    """Reads lines and carries each one out, until :quit, Ctrl+D or three Ctrl+C."""

    def __init__(self, parts: ShellParts) -> None:
        self.parts = parts

    def run(self, history: Path) -> int:
        """The loop, with the input history in the file ``history``."""
        parts = self.parts
        parts.read = make_line_reader(parts.env, history, parts.state)
        parts.say(
            f"your commands run in {parts.state.shell}; plain language goes to "
            f"{parts.choice.name}. :help lists the meta commands; Ctrl+D leaves."
        )
        previous = signal.signal(signal.SIGINT, self._interrupted)
        try:
            return self._loop()
        finally:
            signal.signal(signal.SIGINT, previous)

    def _loop(self) -> int:
        parts = self.parts
        assert parts.read is not None
        while True:
            try:
                line = parts.read(parts.prompt())
            except EOFError:
                parts.env.stderr.write("\n")
                return ExitStatus.OK
            except KeyboardInterrupt:  # at the prompt: the line is gone, a new prompt
                if parts.interrupts.press():
                    return ExitStatus.INTERRUPTED
                continue
            try:
                if self.handle(line):
                    return ExitStatus.OK
            except KeyboardInterrupt:
                parts.view.pause()
                parts.env.stderr.write("\n")
                parts.say("interrupted")

    def handle(self, line: Line) -> bool:
        """Carry out one line; True when the shell should end."""
        parts = self.parts
        sent = route(line.text, parts.known())
        if line.flipped:
            sent = flip(sent)
        if sent.target == "meta":
            return run_meta(parts, sent.text)
        if sent.target == "shell":
            ran = parts.run(sent.text)
            if not_found(parts, ran) and not sent.forced:
                offer_model(parts, sent.text)
        elif sent.target == "model":
            if parts.autonomous:
                from conch.cli.shellauto import run_goal

                run_goal(parts, sent.text)
            else:
                ask_model(parts, sent.text)
        elif sent.forced:
            parts.say(sent.reason)
        return False

    def _interrupted(self, signum: int, frame: Any) -> None:
        """Ctrl+C outside the line editor (a reply, a question): stop it; the third within
        the window leaves at once."""
        if self.parts.interrupts.press():
            os.write(2, b"\nconch: three Ctrl+C: leaving now\n")
            os._exit(ExitStatus.INTERRUPTED)
        raise KeyboardInterrupt
