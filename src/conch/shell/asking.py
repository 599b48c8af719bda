"""Model turns of ``conch shell``: a conversation, or a command from the one-shot pipeline.

``ask_model`` is a conversational turn (``conch.shell.turns.model_turn``): the reply streams
without the command output the model made up, is kept in the context and the saved session,
its tokens are counted, and each command it suggests is offered (``conch.shell.offer``) in
order, after the one before it ran. ``ask_command`` serves a line that asks for a command
(``conch.shell.request.kind_of``) with the one-shot pipeline: the request joins the
conversation as a turn whose answer is the command's ``CMD:`` line, so a question after it
knows what was proposed, and the command is offered as the pipeline checked it; a reply
with no command in it at all makes the line a conversational turn instead.

Either way the turn's provider is ``ShellParts.provider_for`` the line's task type (the
active model, or a chain of models with ``shell.routing`` and ``shell.fallback``), and its
tokens are booked under the model that answered, with the estimate of its text for ``:cost
detail``. A conversational turn sees the system prompt ``ShellParts.refresh_system`` makes
(memory, the summary of evicted turns, the project's tree, the plan); the files its reply
proposes are shown as diffs and written on the user's yes (``conch.shell.offer.offer_file``)
before its commands are offered; the turns the window lets go are summarized
(``conch.shell.remember.evicted``).

Ctrl+C stops the turn and a failed turn is one line; the question then waits in the context
and joins the next one. After a typed line fails as a missing command does (``not_found``),
``offer_model`` asks whether to send it to the model instead.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING

from conch.errors import ConchError, ModelOutputError, NoOneToAsk
from conch.shell.context import CMD, output_tail
from conch.shell.cost import estimate
from conch.shell.events import Question, Said, ShellEvent, TurnEnded, TurnStarted
from conch.shell.offer import offer, offer_file, offer_proposal
from conch.shell.parts import ShellParts
from conch.shell.remember import evicted
from conch.shell.turns import Reply, model_turn

if TYPE_CHECKING:
    from conch.providers.base import Provider
    from conch.shell.routing import TaskType

__all__ = ["ask_command", "ask_model", "not_found", "offer_model"]

STOPPED = "stopped; the question joins your next one"


def ask_model(parts: ShellParts, text: str, task: TaskType = "question") -> Iterator[ShellEvent]:
    """One conversational turn about ``text`` (a line of type ``task``), then the files its
    reply proposes and its suggested commands offered."""
    yield TurnStarted("ask", text)
    parts.refresh_system()
    provider = parts.provider_for(task)
    before = parts.context.turns
    files = parts.settings.propose_files
    try:
        turn = model_turn(parts.context, provider, text, parts.options, parts.known(), files)
        reply = yield from turn
    except KeyboardInterrupt:
        yield TurnEnded("ask", text, interrupted=True)
        yield Said(STOPPED)
        return
    except ConchError as exc:
        yield TurnEnded("ask", text, error=exc)
        yield Said(f"{exc}; the question joins your next one", warning=True)
        return
    yield TurnEnded("ask", text, reply.text, reply.usage)
    if reply.dropped:
        lines = "a line" if reply.dropped == 1 else f"{reply.dropped} lines"
        yield Said(f"left out {lines} the model made up as command output (nothing ran)")
    answered = yield from _answered(parts, provider)
    yield from parts.save_turn(text, reply, answered)
    guess = estimate(parts.context.messages()[:-1], reply.text)
    yield from parts.count(reply.usage, "ask", model=answered, estimated=guess)
    yield from evicted(parts, reply.eviction, before)
    for file in reply.files:
        yield from offer_file(parts, file)
    for command in reply.commands:
        yield from offer(parts, command)


def ask_command(parts: ShellParts, text: str) -> Iterator[ShellEvent]:
    """A command for ``text`` from the one-shot pipeline, kept as a turn, then offered."""
    from conch.shell.request import command_request, served

    yield TurnStarted("command", text)
    service = parts.oneshot()
    parts.pipeline_on(parts.provider_for("command"))
    try:
        result, usage = yield from served(service.events(command_request(text, parts.state)))
    except KeyboardInterrupt:
        parts.context.ask(text)  # it waits, and joins the next question
        yield TurnEnded("command", text, interrupted=True)
        yield Said(STOPPED)
        return
    except ModelOutputError as exc:  # the model wrote no command: let it answer in words
        yield TurnEnded("command", text, error=exc)
        yield Said("no command came of it; asking the model to answer in words")
        yield from ask_model(parts, text, "command")
        return
    except ConchError as exc:
        parts.context.ask(text)
        yield TurnEnded("command", text, error=exc)
        yield Said(f"{exc}; the question joins your next one", warning=True)
        return
    finally:
        parts.pipeline_on(None)
    proposal = result.proposal
    if proposal is None:  # the request asked for a command: the pipeline always proposes one
        raise AssertionError("the one-shot pipeline proposed no command")
    answer = f"{CMD}{proposal.command}"
    before = parts.context.turns
    prompt = parts.context.ask(text)
    sent = parts.context.turns[-1].content
    parts.context.answer(answer)
    yield TurnEnded("command", text, answer, usage)
    reply = Reply(answer, sent, usage, prompt.eviction, (proposal.command,))
    answered = yield from _answered(parts, service.provider)  # the provider it asked
    yield from parts.save_turn(text, reply, answered)
    yield from parts.count(usage, "command", model=answered)
    yield from evicted(parts, prompt.eviction, before)
    yield from offer_proposal(parts, proposal)


def _answered(parts: ShellParts, provider: Provider) -> Generator[ShellEvent, None, str]:
    """The name of the model that answered on ``provider`` (a chain's ``answered_by``; the
    active model otherwise), said when it is not the active one. A generator that returns
    it."""
    answered = getattr(provider, "answered_by", None) or parts.choice.name
    if answered != parts.choice.name:
        yield Said(f"answered by {answered}")
    return answered


def not_found(exit_code: int, output: str, interrupted: bool = False) -> bool:
    """Whether a typed line failed as a missing command would (exit 127, or a non-zero exit
    that says "command not found"): worth offering to ask the model instead."""
    if interrupted:
        return False
    return exit_code == 127 or (exit_code != 0 and "command not found" in output_tail(output))


def offer_model(parts: ShellParts, line: str) -> Iterator[ShellEvent]:
    """After a missing command: ask whether to send ``line`` to the model; on yes, a
    conversational turn about it (the model sees the failure first)."""
    from conch.execute.checked import Choice

    try:
        answer = parts.approve(Question("ask_model", line))
    except NoOneToAsk:
        return
    if answer.choice is Choice.RUN:
        yield from ask_model(parts, line)
