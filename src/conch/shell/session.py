"""``ShellSession``: ``conch shell`` as a library object.

One session holds what a shell holds (``conch.shell.parts.ShellParts``: the directory and
environment, the model and its context, the cost book, the saved session) and decides what
every input line does::

    session = ShellSession(loaded, choice, state=state, state_dir=state_dir,
                           approve=approve, edit=edit)
    for event in session.open(resume=False):
        render(event)
    for event in session.handle("why did that fail?"):
        render(event)

``handle`` routes the line (``conch.shell.meta.routed``) and carries it out as a stream of
``ShellEvent``s (``conch.shell.events``):

- a meta command runs its handler (``conch.shell.meta.run_meta``); ``:quit`` sets
  ``leaving``;
- a shell line runs live on the terminal (``ShellParts.run``); one that fails as a missing
  command does is offered to the model (``Question("ask_model")``), unless it was forced;
- plain language is, in autonomous mode, a goal for the agent (``conch.shell.auto``);
  otherwise it is classified once (``conch.shell.request.kind_of``: its task type, which
  picks the models that answer, and whether it asks for a command): a line that asks for a
  command goes to the one-shot pipeline (``conch.shell.asking.ask_command``) and any other
  line, or one forced to the model, is a conversational turn (``ask_model``). The commands
  and files either proposes are offered (``conch.shell.offer``): the session asks the front
  end through ``approve`` and ``edit`` and never prints, reads stdin or exits.

``open`` starts with the memory of earlier sessions in the directory
(``conch.shell.remember.recall``); with ``resume`` it takes up the last saved session: its
turns, the summary of the turns its window let go and the plan of its last ``:auto`` goal.
``:quit`` (and ``leave``, for Ctrl+D) writes the session's summary first.

Ctrl+C (``KeyboardInterrupt``, raised while the session works or thrown into the stream
while the front end renders an event) stops a model turn, a correction or a goal and the
stream goes on to say so; anywhere else it ends the stream, and the session stays usable.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from conch.shell.asking import ask_command, ask_model, not_found, offer_model
from conch.shell.auto import run_goal
from conch.shell.events import Said, ShellEvent
from conch.shell.meta import routed, run_meta
from conch.shell.parts import ShellParts
from conch.shell.remember import recall
from conch.shell.request import kind_of
from conch.shell.route import flip
from conch.shell.sessions import SavedSession, ShellSessionError

if TYPE_CHECKING:
    from conch.shell.preplan import Plan

__all__ = ["ShellSession"]


class ShellSession(ShellParts):
    """One ``conch shell``: see the module documentation; the constructor's arguments are
    ``ShellParts``'s. ``close`` releases the model and the MCP servers."""

    def open(self, resume: bool = False) -> Generator[ShellEvent, None, None]:
        """Take up the last saved session (``resume``) or start a new one, the model given
        the memory of earlier sessions here. A session that cannot be saved is a warning,
        and the shell runs unsaved; so is a model that ``shell.routing`` or
        ``shell.fallback`` names and the config does not have."""
        for problem in self.fallback.problems(self.loaded.settings):
            yield Said(f"{problem}; the active model answers instead", warning=True)
        yield from recall(self)
        yield from self._start(resume)

    def _start(self, resume: bool) -> Generator[ShellEvent, None, None]:
        try:
            if resume:
                last = SavedSession.last(self.state_dir)
                if last is not None:
                    turns = last.turns()
                    self.context.restore(turns)
                    self.earlier, self.plan = _kept(last.records())
                    self.saved = last
                    yield from self.save({"type": "resume", "cwd": self.state.cwd})
                    asked = sum(t.role == "user" for t in turns)
                    yield Said(f"resumed the shell session {last.path.name} ({asked} questions)")
                    return
                yield Said("no saved shell session yet; starting a new one")
            self.saved = SavedSession.create(self.state_dir, self.state.cwd, self.choice.name)
        except ShellSessionError as exc:
            yield Said(f"{exc}; this session is not saved", warning=True)

    def handle(self, line: str, flipped: bool = False) -> Generator[ShellEvent, None, None]:
        """Carry out one input line (``flipped``: sent the other way, Alt+Enter)."""
        sent = routed(line, self.known())
        if flipped:
            sent = flip(sent)
        if sent.target == "meta":
            yield from run_meta(self, sent.text)
        elif sent.target == "shell":
            ran = yield from self.run(sent.text)
            if not sent.forced and not_found(ran.exit_code, ran.output, ran.result.interrupted):
                yield from offer_model(self, sent.text)
        elif sent.target == "model":
            if self.autonomous:
                yield from run_goal(self, sent.text)
                return
            kind = kind_of(sent.text)
            if not sent.forced and kind.command:
                yield from ask_command(self, sent.text)
            else:
                yield from ask_model(self, sent.text, kind.task)
        elif sent.forced:
            yield Said(sent.reason)

    def leave(self) -> Generator[ShellEvent, None, None]:
        """The user leaves without ``:quit`` (Ctrl+D): as ``:quit`` does."""
        yield from run_meta(self, "quit")


def _kept(records: list[dict[str, Any]]) -> tuple[str, Plan | None]:
    """What a saved session last kept in the model's context besides its turns: the summary
    of the evicted turns and the plan of the last ``:auto`` goal (neither after a reset; a
    damaged plan is left out)."""
    from conch.shell.preplan import Plan

    earlier, plan = "", None
    for record in records:
        kind = record.get("type")
        if kind == "reset":
            earlier, plan = "", None
        elif kind == "earlier" and isinstance(record.get("summary"), str):
            earlier = record["summary"]
        elif kind == "plan":
            try:
                plan = Plan.from_dict(record.get("plan"))
            except ValueError:
                plan = None
    return earlier, plan
