"""A plain-language line of ``conch shell`` that asks for a command, served by the one-shot
pipeline (``conch.command.oneshot.OneShot``, the call ``conch "request"`` makes).

The conversational reply of a small model is a weak source of commands; the one-shot
pipeline is the measured one: worked examples, answers reviewed, candidates dry-run among
the real files, a repair when the chosen one fails, validation, the policy's verdict. So a
line the router sent to the model goes there when ``kind_of`` says it asks for a command
(``LineKind.command``, which ``conch.shell.session.ShellSession.handle`` reads):

1. its task type is ``command`` (``kind_of``: ``conch.shell.routing.task_type``, the one
   classification of the line, which also picks the models that answer it): not a question
   (``conch.command.intent.classify``; a question stays a conversation: its answer is
   prose, with suggestions checked as ``conch.shell.check`` checks them), and not ``code``
   (written or explained in the conversation, where a file can be proposed as a diff);
2. it stands on its own: the one-shot request carries neither the conversation nor what
   just ran, so a line that points back at them (*it*, *them*, *again*, *the output*,
   *that* on its own...) stays a conversation;
3. it reads as a request, not as a statement, a greeting or a reply (*my name is*, *thanks*,
   *and now?*), and it is one line without code (pasted material is for the conversation).

Lines the user forced to the model (``> TEXT``, ``? TEXT``, ``:ask TEXT``, Alt+Enter) and
the offer after a missing command are conversations whatever they say: the user asked to
talk to the model.

The request is judged as the shell runs commands (``conch.shell.turns.shell_policy``: the
user's own shell, so shell syntax is allowed), in the shell's directory and environment.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from conch.messages import Finished, Note, Stage, Usage
from conch.shell.events import ShellEvent, Working
from conch.shell.turns import shell_policy

if TYPE_CHECKING:
    from conch.command.oneshot import OneShotRequest, OneShotResult
    from conch.command.proposal import PipelineEvent
    from conch.shell.routing import TaskType
    from conch.shell.state import ShellState

__all__ = ["LineKind", "command_request", "kind_of", "served"]

# Words that open a statement about the user or the conversation, a greeting, a reply, or a
# follow-up: the conversation's, not a request for a command.
_OPENERS = frozenset(
    str.split(
        "i i'm im i've i'd i'll me my mine we we're our us you you're your he she they they're "
        "their there there's it it's its this that that's these those "
        "hi hello hey thanks thank thx ok okay yes yeah yep no nope sure great cool nice good "
        "fine bye goodbye sorry hmm wow oh ah well help "
        "and but so then now also or too"
    )
)
# Words in front of a request that change nothing about it.
_FILLER = frozenset({"please", "conch", "pls", "kindly"})
# Words that point back at the conversation or at what just ran.
_POINTS_BACK = re.compile(
    r"\b(?:it|its|them|those|these|same|again|instead|above|previous|earlier)\b"
    r"|\bthis\b(?! (?:machine|computer|system|box|server|host|directory|dir|folder|repo"
    r"|repository|project|shell|week|month|year|morning|afternoon|evening)\b)"
    r"|\bthat\b(?= *$| (?:again|one|command|output|error|result|file|did|does|do|was|is"
    r"|print|prints|printed|fail|fails|failed|means?|meant|says?|said|shows?|showed"
    r"|returned|gave)\b)"
    r"|\b(?:did|does|do|is|was|run|rerun|fix|explain|undo|repeat|about|of|with|after"
    r"|like) that\b"
    r"|\bthe (?:output|error|errors|result|failure|last command|previous command)\b"
)
_WORD = re.compile(r"[a-z']+")


@dataclass(frozen=True, slots=True)
class LineKind:
    """What a line for the model is: its ``task`` type (``question``, ``command`` or
    ``code``: ``conch.shell.routing.task_type``, which picks the models that answer it)
    and whether the one-shot pipeline serves it (``command``: a ``command`` task that
    stands on its own and reads as a request)."""

    task: TaskType
    command: bool


def kind_of(text: str) -> LineKind:
    """The one classification of a line for the model: its task type (one call of
    ``conch.command.intent.classify``, inside ``task_type``) and, from it, whether it asks
    for a command (the rules are the module's; a ``code`` line is a conversation: code is
    written and explained in prose and files, not in one command line)."""
    from conch.shell.routing import task_type

    task = task_type(text)
    return LineKind(task, task == "command" and _stands_alone(text))


def _stands_alone(text: str) -> bool:
    """One line without code that reads as a request and points back at nothing."""
    line = text.strip()
    if not line or "\n" in line or "```" in line:
        return False
    lower = line.lower().replace("\u2019", "'")
    words = _WORD.findall(lower)
    while words and words[0] in _FILLER:
        words.pop(0)
    if not words or words[0] in _OPENERS:
        return False
    return not _POINTS_BACK.search(lower)


def command_request(text: str, state: ShellState) -> OneShotRequest:
    """The one-shot request for ``text``: a command (the shell has decided it is not a
    question), for the shell's directory and environment, judged as the shell runs it."""
    from conch.command.oneshot import OneShotRequest, Want

    return OneShotRequest(
        text, Path(state.cwd), dict(state.env), want=Want.COMMAND, policy=shell_policy(state.cwd)
    )


def served(
    events: Generator[PipelineEvent, None, OneShotResult],
) -> Generator[ShellEvent, None, tuple[OneShotResult, Usage]]:
    """The pipeline's events as the shell shows them: its steps as what the session is
    ``Working`` on, the model's stages and notes. The text of each generation is not shown
    (the command is, once it is chosen and checked). Returns the result and the tokens of
    every reply added up. Leaving early (Ctrl+C) ends the pipeline."""
    from conch.command.proposal import Step

    spent = Usage()
    try:
        while True:
            try:
                event = next(events)
            except StopIteration as stop:
                return stop.value, spent
            if isinstance(event, Step):
                yield Working(event.label)
            elif isinstance(event, (Stage, Note)):
                yield event
            elif isinstance(event, Finished):
                spent = Usage(
                    spent.prompt_tokens + event.usage.prompt_tokens,
                    spent.completion_tokens + event.usage.completion_tokens,
                )
    finally:
        events.close()
