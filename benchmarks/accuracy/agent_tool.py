"""conch's agent as a tool under test: ``conch-agent``, several steps where ``conch`` takes one.

Is an agent that can look around, try commands and correct itself better at writing one command
than the one-shot pipeline? For each request, ``conch.Session`` works in a throwaway copy of
the task's file tree with ``do`` offered first, ``bash`` in full-autonomous mode, the file
tools, ``plan`` and ``datetime`` (as ``conch run --act --allow-dangerous``, less ``evaluate``
and the audit log; no web), the harness's model server at temperature 0 and at most
``MAX_REPLIES`` model replies. The request is the instruction; the guidance after the system
prompt (``AGENT_GUIDANCE``) asks for the one command that does it, says the agent may try
commands first, and asks for the command alone. With ``act_first`` the request goes to ``do``
(the one-shot pipeline, which writes, dry-runs and runs a command) before the model is asked.
The answer is then judged like any other tool's command, taken from the reply by the bare
baselines' rule (``generators.command_from_reply``), or, when the reply repeats what a ``do``
step printed, that step's command (``repeated_command``); an agent
that stops without an answer (an error, the iteration limit, a repeated call, an empty reply)
is an extraction failure.

Where the agent works: a plain temporary copy of the task's tree, not the harness's bubblewrap
with the tree as ``/``. The agent runs its commands itself, through conch's own runner, and
that runner cannot be pointed at another root without changing conch. Its own containment is
enough for a throwaway copy: in full-autonomous mode every command that runs is judged by the
safety policy, every path it names must resolve inside the sandbox root (the copy), and it runs
under bubblewrap with only that root writable, without conch's secrets and without the network
unless it is a network program (with no sandbox usable, nothing runs: such commands are
refused, no one being asked). ``do``'s trial runs are conch's dry runs: read-only, then in a
throwaway copy of the directory. The harness's fixture trees and the copies it judges in are
never the agent's: each request gets a copy of its own, deleted afterwards, and the judged runs
start from the untouched tree.

What the agent sees differs from the judged runs in three ways, said here so the comparison is
read fairly. The copy is not ``/``: the instruction says the directory stands for the root (a
path ``/a/b`` in a request is ``a/b`` there), since the policy refuses absolute paths outside
the copy; the judged run's working directory is the tree's ``/``, so an answer with either
spelling does the same there. The agent's commands do not see the task's variables
(``FILES=...``) or ``HOME=/root``. And the busybox fixture's requests are tried with this
machine's GNU userland, where ``conch`` is told of busybox (``conch_tool.task_platform``).

Per task the row records ``agent``: the requests made of the model (``model_calls``: the loop's
replies and those the pipeline makes inside ``do``; ``likelihoods``: answers scored for
review), the loop's own ``replies``, the ``tool_calls`` and each call in brief; the task's
``seconds`` are the agent's whole turn, as the other tools record their time.
"""

from __future__ import annotations

import re
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.accuracy.candidate import Candidate, Task
from benchmarks.accuracy.fixtures import copy_tree, load_fixture, materialise, remove_tree
from benchmarks.accuracy.generators import PROVIDER_ERROR, command_from_reply, make_provider
from benchmarks.common import log
from conch.agent.builtin import ToolOptions
from conch.agent.events import AgentError, AgentEvent, ToolFinished, ToolStarted
from conch.agent.loop import Limits
from conch.agent.session import Session
from conch.errors import ConchError, ProviderError
from conch.messages import Finished, GenerationOptions, Message, ProviderEvent, ToolSpec
from conch.policy import ExecutionMode
from conch.providers.base import Provider

if TYPE_CHECKING:
    from conch.config.settings import Settings

NAME = "conch-agent"
MAX_REPLIES = 6  # model replies of the agent's loop per request
REPLY_TOKENS = 1024  # per reply, as the agent benchmark gives conch's agent
# What the agent is told besides the request, after its system prompt: the request alone is
# the instruction, so ``do`` (given it first) hands the pipeline the request and nothing else.
# No word asks for a file to be produced (``conch.agent.outputs``).
AGENT_GUIDANCE = (
    "Each request asks for one shell command. Work out the one shell command that does the "
    "request in this directory. This directory stands for the root directory /: a path /a/b "
    "in the request is a/b here. You may look around and try commands first; they run on a "
    "scratch duplicate of the files, so nothing is kept. Answer with the final command only: "
    "one line, no explanation, not its output."
)
# A line conch's loop adds to an answer given while a tool call's refusal or failure stands
# (``conch.agent.loop._outcome``): the loop's note, not part of the model's answer.
_LOOP_NOTE = re.compile(r"\[[A-Za-z_][\w.-]* (?:was refused|failed): .*\]")
_EXCERPT = 300


@dataclass(frozen=True, slots=True)
class AgentCandidate(Candidate):
    """The agent's answer with what it took: model and tool calls (see the module docs)."""

    agent: dict[str, Any] | None = None


def instruction_for(request: str) -> str:
    """What the agent is told for ``request``: the request itself (``AGENT_GUIDANCE`` is in
    its system prompt)."""
    return request.strip()


def repeated_command(answer: str, done: Sequence[tuple[str, str]]) -> str | None:
    """The command of the last ``do`` step (``done``: its command and what it printed) whose
    output ``answer`` repeats, or, when ``answer`` is prose (its first word starts no
    command), of the last ``do`` step: a small model asked for the command often answers
    with what the command printed, or says what it did, and the command that did it is then
    its answer."""
    said = " ".join(answer.split())
    if not said:
        return None
    for command, output in reversed(done):
        if " ".join(output.split()) == said and " ".join(command.split()) != said:
            return command
    words = said.split()
    if done and not _a_program(words[0]):  # prose ("hello world printed."): what it did
        return done[-1][0]
    return None


def _a_program(word: str) -> bool:
    """Whether ``word`` can start a command line: a program on PATH, a builtin or keyword of
    bash, a path, or a variable assignment."""
    import shutil

    from conch.shell.route import BUILTINS

    word = word.strip("`'\"")
    return (
        shutil.which(word) is not None
        or word in BUILTINS
        or word in ("for", "if", "while", "until", "case", "[[")
        or "/" in word
        or "=" in word
        or word.startswith(("$", "(", "{", "!"))
    )


def agent_tools(root: Path, settings: Settings | None = None) -> ToolOptions:
    """The agent's tools, confined to ``root``: ``do`` offered first, ``bash`` in
    full-autonomous mode, the file tools, ``plan`` and ``datetime``; no ``evaluate``, web or
    audit log. ``settings`` configure ``do``'s pipeline (None: conch's defaults)."""
    return ToolOptions(
        root=root,
        bash=True,
        mode=ExecutionMode.FULL,
        act=True,
        evaluate=False,
        web=False,
        audit=False,
        settings=settings,
    )


def answer_text(reply: str) -> str:
    """The model's answer in ``reply``, without the lines conch's loop appends to say that a
    tool call was refused or failed (``[bash was refused: ...]``)."""
    lines = reply.rstrip().split("\n")
    while len(lines) > 1 and _LOOP_NOTE.fullmatch(lines[-1].strip()):
        lines.pop()
    return "\n".join(lines)


class CountingProvider:
    """The harness's provider, counted for one request: every reply asked of the model (the
    agent loop's and the one-shot pipeline's inside ``do``) and every likelihood asked. The
    provider is shared by every request, so ``close`` leaves it open; anything else is the
    provider's own (``native_tool_calls``, ``count_tokens``)."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner
        self.name = inner.name
        self.replies = 0
        self.likelihoods = 0

    def stream(
        self,
        messages: Sequence[Message],
        options: GenerationOptions,
        tools: Sequence[ToolSpec] | None = None,
    ) -> Iterator[ProviderEvent]:
        self.replies += 1
        return self.inner.stream(messages, options, tools)

    def likelihood(self, messages: Sequence[Message], reply: str) -> float | None:
        self.likelihoods += 1
        return self.inner.likelihood(messages, reply)

    def close(self) -> None:
        """Nothing: the provider belongs to the generator, not to one request."""

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet (copying, unpickling): no provider to ask
            raise AttributeError(name)
        return getattr(self.inner, name)


class AgentLog:
    """An ``on_event`` callback that counts the loop's model replies and tool calls and keeps
    each call in brief (tool, arguments, whether it failed, the start of its result)."""

    def __init__(self) -> None:
        self.replies = 0
        self.tool_calls = 0
        self.calls: list[dict[str, Any]] = []
        self.done: list[tuple[str, str]] = []  # each do step that ran: command, output

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, Finished):  # one per model reply of the loop (do's are not here)
            self.replies += 1
        elif isinstance(event, ToolStarted):
            self.tool_calls += 1
        elif isinstance(event, ToolFinished):
            if event.call.name == "do" and not event.result.is_error:
                ran = _do_output(event.result.content)
                if ran is not None:
                    self.done.append(ran)
            self.calls.append(
                {
                    "tool": event.call.name,
                    "arguments": event.call.arguments[:_EXCERPT],
                    "error": event.result.is_error,
                    "result": event.result.content[:_EXCERPT],
                }
            )


def _do_output(result: str) -> tuple[str, str] | None:
    """The command and the output of a ``do`` result ("command: ...", "trial run on a copy:
    ...", the output, "[exit code N]"), None when it is not one."""
    lines = result.split("\n")
    if len(lines) < 2 or not lines[0].startswith("command: "):
        return None
    output = [line for line in lines[2:] if not line.startswith("[exit code ")]
    return lines[0].removeprefix("command: "), "\n".join(output)


class AgentGenerator:
    """conch's agent, one turn per request in a throwaway copy of the task's tree.

    ``provider``: the model (default: the harness's provider for ``base_url``, shared by every
    request). ``settings``: ``do``'s pipeline settings (None: conch's defaults). ``scratch``:
    where the copies are made (None: the system's temporary directory). ``roots``: the
    harness's fixture trees by fixture id (filled in by the harness); a tree it lacks is
    built from the fixture's data.
    """

    name = NAME

    def __init__(
        self,
        base_url: str,
        model: str | None,
        *,
        provider: Provider | None = None,
        settings: Settings | None = None,
        scratch: Path | None = None,
    ) -> None:
        self.provider = provider if provider is not None else make_provider(base_url, model)
        self.settings = settings
        self.scratch = scratch
        self.roots: dict[int, Path] = {}

    def generate(self, task: Task) -> Candidate:
        parent = Path(tempfile.mkdtemp(prefix="conch-accuracy-agent-", dir=self.scratch))
        try:
            tree = parent / "tree"
            root = self.roots.get(task.fs)
            if root is not None:
                copy_tree(root, tree)
            else:
                materialise(load_fixture(task.fs), tree)
            return self.ask(task, tree)
        finally:
            remove_tree(parent)

    def session(self, tree: Path, provider: Provider) -> Session:
        """The agent for one request, working in ``tree``."""
        return Session(
            provider,
            tools=agent_tools(tree, self.settings),
            options=GenerationOptions(temperature=0.0, max_tokens=REPLY_TOKENS),
            limits=Limits(max_iterations=MAX_REPLIES),
            act_first=True,
        ).system_append(AGENT_GUIDANCE)

    def ask(self, task: Task, tree: Path) -> AgentCandidate:
        """One turn of the agent on ``task`` in ``tree``; its answer as a candidate."""
        counted = CountingProvider(self.provider)
        session = self.session(tree, counted)
        events = AgentLog()
        reply: str | None = None
        error: str | None = None
        started = time.monotonic()
        try:
            reply = session.chat(instruction_for(task.nl), on_event=events)
        except AgentError as exc:  # the iteration limit, a repeated call
            error = f"the agent stopped: {exc}"
        except ProviderError as exc:  # the server: not cached, asked again on resume
            error = f"{PROVIDER_ERROR}{exc}"
        except ConchError as exc:  # an empty reply, a reply that could not be read
            error = f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # anything else ends this request, not the run
            error = f"{type(exc).__name__}: {exc}"
            log(f"{NAME} #{task.index}: {error}")
        finally:
            session.close()
        seconds = time.monotonic() - started
        counts = {
            "model_calls": counted.replies,
            "likelihoods": counted.likelihoods,
            "replies": events.replies,
            "tool_calls": events.tool_calls,
            "calls": events.calls,
        }
        if reply is None:
            return AgentCandidate(None, "", seconds, error=error, agent=counts)
        text = answer_text(reply)
        found = command_from_reply(repeated_command(text, events.done) or text, seconds, True)
        return AgentCandidate(
            found.command, reply, seconds, error=found.error, refused=found.refused, agent=counts
        )
