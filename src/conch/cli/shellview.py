"""``conch shell`` on the terminal: the session's events drawn, its questions asked.

``conch.shell.session.ShellSession`` decides what a line does and streams events; this module
only shows them (``ShellView.render``: the reply on stdout as it streams, its code blocks
coloured by language on a terminal (``conch.shell.highlight.Highlighter``, ``shell.highlight``;
plain when stdout is no terminal or ``NO_COLOR`` is set), conch's lines dim on stderr, a
spinner while the session works, a command with its risk before it is offered, a proposed
file as a diff), writes each model turn's history-log entry (``conch.cli.agentlog.TurnLog``),
and asks what the session asks (``approve``: run a suggestion, ask the model after a missing
command, an agent's step, a typed yes for a halted one, write a proposed file; ``edit``: the
input line pre-filled).

``drive`` feeds a session's stream to ``render``; Ctrl+C while an event is drawn goes into
the session, which decides what it stops.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Generator, Iterable
from typing import TYPE_CHECKING

from conch.cli import ui
from conch.cli.agentlog import TurnLog
from conch.cli.agentview import TurnView, checklist_changes
from conch.cli.confirm import agent_approver
from conch.cli.environment import Environment
from conch.cli.status import ExitStatus, status_for
from conch.errors import NoOneToAsk
from conch.messages import TextDelta
from conch.shell.events import (
    CommandRan,
    CommandShown,
    FileShown,
    Help,
    Left,
    Listed,
    McpShown,
    Output,
    PlanChanged,
    Running,
    Said,
    ScreenCleared,
    ShellEvent,
    TurnEnded,
    TurnStarted,
    Working,
)

if TYPE_CHECKING:
    from conch.cli.shellinput import LineReader
    from conch.config.settings import LoadedSettings
    from conch.execute.checked import Answer
    from conch.shell.diffs import Change
    from conch.shell.events import Question
    from conch.shell.session import ShellSession

QUESTION = "Run it? [y]es, [e]dit, [n]o [n] "
NOT_FOUND_QUESTION = "conch: no such command; ask the model about this line instead? [y/N] "
HALT_QUESTION = "Type yes to run it; anything else refuses it: "
FILE_QUESTION = "Write it? [y/N] "
#: The colours of a diff's lines: added, removed, a hunk's head.
_DIFF_COLOURS = (("+", "32"), ("-", "31"), ("@@", "36"))
KEYS = (
    "A line whose first word is a command runs in the shell; anything else goes to the "
    "model. Alt+Enter sends a line the other way; Tab completes; Ctrl+R searches earlier "
    "lines. Ctrl+C stops a command or a reply; three in a row leave."
)


def drive(events: Generator[ShellEvent, None, None], render: Callable[[ShellEvent], None]) -> None:
    """Render every event of ``events``; a Ctrl+C while one is rendered is thrown into the
    stream (the session stops what it was doing and says so, or the stream ends with it)."""
    thrown: KeyboardInterrupt | None = None
    while True:
        try:
            event = next(events) if thrown is None else events.throw(thrown)
        except StopIteration:
            return
        thrown = None
        try:
            render(event)
        except KeyboardInterrupt as exc:
            thrown = exc


class ShellView:
    """Draws one shell's events on ``env`` and asks its questions. ``argv``: the command
    line, for the history log; ``loaded``: the settings; ``session`` and ``read`` are set
    once the session and the line reader exist."""

    def __init__(self, env: Environment, argv: list[str], loaded: LoadedSettings) -> None:
        self.env, self.argv, self.loaded = env, argv, loaded
        from conch.shell.highlight import Highlighter, color_wanted

        self.turns = TurnView(env, env.stdout)
        self.coloured = color_wanted(env.stdout_isatty, env.environ)
        self.highlighter = Highlighter(self.coloured and loaded.settings.shell.highlight)
        self._conversation = True  # the turn's reply comes through conch.shell.reply
        self.session: ShellSession | None = None
        self.read: LineReader | None = None
        self._log: TurnLog | None = None
        self._agent = agent_approver(env, self.turns.pause)

    # -- events ------------------------------------------------------------------------------

    def render(self, event: ShellEvent) -> None:
        """Show one event."""
        env = self.env
        if isinstance(event, Said):
            self.say(event.text, warning=event.warning)
        elif isinstance(event, Listed):
            self._lines(event.lines)
        elif isinstance(event, Help):
            self._lines((*event.lines, f"  {KEYS}"))
        elif isinstance(event, ScreenCleared):
            if env.stdout_isatty:
                env.stdout.write("\x1b[H\x1b[2J")
                env.stdout.flush()
        elif isinstance(event, Working):
            self.turns.begin(event.label)
        elif isinstance(event, TurnStarted):
            self._started(event)
        elif isinstance(event, TurnEnded):
            self._ended(event)
        elif isinstance(event, CommandShown):
            self.turns.pause()
            risk = event.verdict.risk.value
            command = event.command.replace("\n", "\n  ")  # a here-document, a loop
            ui.show_command(env, command, risk, event.notes, [event.heading])
        elif isinstance(event, Running):
            self.turns.pause()
            env.stdout.flush()
            env.stderr.flush()
        elif isinstance(event, Output):
            env.stdout.write(event.stdout)
            env.stderr.write(event.stderr)
        elif isinstance(event, PlanChanged):
            for line in checklist_changes(event.before, event.after):
                self.turns.line(line)
        elif isinstance(event, McpShown):
            from conch.cli.mcpuse import mcp_lines

            self._lines(mcp_lines(self.loaded.settings, event.servers))
        elif isinstance(event, FileShown):
            self._diff(event.change)
        elif not isinstance(event, (CommandRan, Left)):  # the model's and the agent's events
            if self._log is not None:
                self._log.on_event(event)
            if isinstance(event, TextDelta) and self._conversation and "```" in event.text:
                # A conversation's code blocks come whole (conch.shell.reply.ReplyFilter), so
                # each is coloured as it comes; an agent's reply streams as it is.
                event = TextDelta(self.highlighter.reply(event.text))
            self.turns.on_event(event)

    def say(self, text: str, *, warning: bool = False) -> None:
        """A ``conch:`` line on stderr, dim unless it is a ``warning``."""
        self.turns.pause()
        line = f"conch: {text}"
        self.env.stderr.write((line if warning else ui.paint(self.env, line, "2")) + "\n")
        self.env.stderr.flush()

    def _lines(self, lines: Iterable[str]) -> None:
        out = self.env.stdout
        out.write("".join(line + "\n" for line in lines))
        out.flush()

    def _diff(self, change: Change) -> None:
        """A proposed file: a heading, its unified diff (coloured on a terminal), and what
        stands against writing it."""
        self.turns.pause()
        heading = "the model proposes a new file:" if change.new else "the model proposes:"
        lines = [ui.paint(self.env, f"{heading} {change.summary}", "1")]
        for line in change.diff.splitlines():
            colour = next((c for mark, c in _DIFF_COLOURS if line.startswith(mark)), None)
            if line.startswith(("+++", "---")) or colour is None or not self.coloured:
                lines.append(line)
            else:
                lines.append(f"\x1b[{colour}m{line}\x1b[0m")
        if change.partial and not change.problem:
            lines.append(f"  - warning: {change.partial}")
        self._lines(lines)

    def _started(self, event: TurnStarted) -> None:
        self._conversation = event.kind != "goal"
        if event.kind == "goal":
            self.turns.line(ui.paint(self.env, f"conch: working toward: {event.text}", "1"))
        self.turns.begin()
        log = self._new_log()
        log.request, log.calls, log.notes = event.text, [], []
        log.started = time.monotonic()
        self._log = log

    def _ended(self, event: TurnEnded) -> None:
        from conch.agent.events import TurnFinished

        self.turns.on_event(TurnFinished(event.reply, 1, event.usage))
        log, self._log = self._log, None
        if log is None:
            return
        if event.interrupted:
            log.finish(ExitStatus.INTERRUPTED, "interrupted by the user (Ctrl+C)")
        elif event.error is not None:
            log.finish(status_for(event.error), str(event.error))
        else:
            log.finish(ExitStatus.OK)

    def _new_log(self) -> TurnLog:
        loaded = self.loaded
        if self.session is not None:  # the model answering now
            loaded = dataclasses.replace(loaded, settings=self.session.active_settings)
        return TurnLog(self.env, ["conch", *self.argv], loaded)

    # -- questions ---------------------------------------------------------------------------

    def approve(self, question: Question) -> Answer:
        """Ask what the session asks; NoOneToAsk when there is no terminal to ask on."""
        from conch.execute.checked import Answer

        env = self.env
        self.turns.pause()
        if question.kind == "agent":
            assert question.verdict is not None and question.confirmation is not None
            return self._agent(question.command, question.verdict, question.confirmation)
        if question.kind == "halt":
            return self._halt(question)
        if env.open_terminal() is None:
            raise NoOneToAsk(question.command)
        if question.kind == "ask_model":
            yes = ui.ask(env, NOT_FOUND_QUESTION, "yn", "n") == "y"
            return Answer.run() if yes else Answer.abort()
        if question.kind == "file":
            yes = ui.ask(env, FILE_QUESTION, "yn", "n") == "y"
            return Answer.run() if yes else Answer.abort()
        answer = ui.ask(env, QUESTION, "yen", "n")
        if answer == "y":
            return Answer.run()
        return Answer.edit(question.command) if answer == "e" else Answer.abort()

    def edit(self, command: str) -> str:
        """The input line pre-filled with ``command``: what the user sends ("" at the end
        of input)."""
        assert self.read is not None and self.session is not None
        try:
            return self.read(self.session.prompt(), command).text
        except EOFError:
            return ""

    def _halt(self, question: Question) -> Answer:
        from conch.execute.checked import Answer

        env, verdict = self.env, question.verdict
        assert verdict is not None
        heading = f"HALT: the agent wants to run a {verdict.risk} command:"
        ui.show_command(env, question.command, verdict.risk.value, verdict.reasons, [heading])
        terminal = env.open_terminal()
        if terminal is None:  # nobody to type yes: the library refuses it as unasked
            raise NoOneToAsk(question.command)
        env.stderr.write(HALT_QUESTION)
        env.stderr.flush()
        if terminal.readline().strip() == "yes":
            return Answer.run()
        env.stderr.write("  not run; the agent is told you said no\n")
        env.stderr.flush()
        return Answer.abort()
