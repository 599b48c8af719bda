"""The agent loop: ask the model, run the tools it calls, feed back the results, repeat.

``Agent.run`` is a generator: it yields the provider's events and the agent's own
(``conch.agent.events``) as they happen, and returns the visible reply. It ends on an answer;
or with ``IterationLimit`` after ``Limits.max_iterations`` model replies; or with
``LoopDetected`` when the model keeps repeating a call it was told would not run again.
Nothing a tool does stops it: an unknown tool, bad arguments and a tool that raises all come
back to the model as text it can act on. Whatever ends a turn early (Ctrl+C, a closed
stream, a provider error), the conversation is left valid: every call has its result, and an
assistant message says why the turn ended.

Before it accepts an answer the loop checks two things, once each per turn: that no tool
call's failure stands (``Unresolved``: small models give up on the first error, or answer
an earlier question after it), and that the files the instruction asks for exist
(``conch.agent.outputs``: small models answer in words when the result was wanted in a file).
When a check fails the answer is held back and the model told. Each look at those files is
streamed as a ``Checked`` event per file: when it holds an answer back, and once more when
an answer is accepted. An answer accepted while a refusal or a failure stands, and that does
not say so, gets a line saying which and why.

Models with native tool calls get the tools' specs and answer with ``ToolCall`` events.
Models without them (``json_steps``) get one JSON object per reply, constrained by
``step_schema`` where the provider honours it, and read leniently by ``parse_step``
otherwise; only the answer's text is streamed to the user.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from conch import sanitize
from conch.agent.act import suits_a_command
from conch.agent.conversation import Conversation
from conch.agent.evaluate import LEGACY_NAMES
from conch.agent.events import (
    AgentEvent,
    IterationLimit,
    LoopDetected,
    ToolFinished,
    ToolStarted,
    TurnFinished,
)
from conch.agent.outputs import (
    checks,
    empty_note,
    expected_outputs,
    missing_note,
    still_empty,
    still_missing,
)
from conch.agent.results import DEFAULT_CAP, capped, ran_by
from conch.agent.steps import resolve_it
from conch.agent.toolcalls import AnswerStream, parse_step, step_schema
from conch.errors import EMPTY_REPLY, ModelOutputError
from conch.messages import (
    Finished,
    GenerationOptions,
    Message,
    TextDelta,
    ToolCall,
    ToolResult,
    Usage,
)
from conch.providers.base import Provider
from conch.tools import ToolRegistry

INTERRUPTED = "[interrupted by the user]"
ACT_TOOL = "do"  # conch.agent.act: a step in plain language, acted on by the pipeline
REFUSING_TOOLS = frozenset({"bash"})  # their errors include refusals
REFUSED = "CommandRefused:"  # how a refusal by the policy or the user starts, from any tool
RETRY = (
    "The last tool call failed, so the task is not done yet. Fix the call (for example, read "
    "the file first and copy its exact text) or use another tool, then answer."
)
_EDIT_EXAMPLE = " (for example, read the file first and copy its exact text)"
EDITING_TOOLS = frozenset({"fs_edit", "fs"})  # a failed edit is fixed by reading the file first
# Tools that only look: a failure of one stands only while it is the turn's last call.
LOOKING_TOOLS = frozenset(
    {"fs_read", "fs_list", "fs_glob", "fs_grep", "fs_diff", "tool_lookup", "datetime"}
    | {"web_fetch", "web_search", "plan"}
)
# Words of an answer that already says something was refused or failed.
_SPEAKS_OF_FAILURE = re.compile(
    r"refus|declin|denied|not allowed|fail|error|could ?n[o']?t|can ?n[o']?t|unable|"
    r"did ?n[o']?t|will ?not|won't|wo?uld ?n[o']?t|nothing was|was not|were not|wasn't|"
    r"weren't|not (?:been )?(?:deleted|done|run|do)\b",
    re.IGNORECASE,
)
_NOTE_CHARS = 200
_NOTE_LINES = 3
_ERROR_CHARS = 600  # of a failed call's error, said again with the retry note


@dataclass(frozen=True, slots=True)
class Limits:
    """How far one turn may go.

    ``max_iterations``: model replies per turn. ``max_result_chars``: what the model reads of
    one tool result. ``max_repeats``: how often one call (same tool, same arguments) runs in
    a turn; a further repeat is not run and the model is told so. ``max_blocked``: how many
    such refused repeats are forgiven before the turn ends with ``LoopDetected``.
    ``max_retries``: how often, in a turn, an answer given while a failed tool call stands
    (``Unresolved.standing``) is held back and the model asked to try again instead (small
    models tend to give up on the first error and answer with it). ``max_output_checks``: how often, in a turn, an answer
    given while a file the instruction asks for is missing is held back (``Agent.root``).
    """

    max_iterations: int = 10
    max_result_chars: int = DEFAULT_CAP
    max_repeats: int = 2
    max_blocked: int = 1
    max_retries: int = 1
    max_output_checks: int = 1


@dataclass(slots=True)
class _Reply:
    text: str = ""
    calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)


@dataclass(slots=True)
class Agent:
    """One model, its tools, and how a turn runs.

    ``json_steps``: the model writes tool calls as JSON text instead of native calls.
    ``budget``: the tokens the conversation may take before it is pruned (None: never).
    ``aliases``: legacy tool names and the tools they stand for (``python3`` -> ``evaluate``).
    ``root``: the directory the file tools work in, where the files an instruction asks for
    are looked for before an answer is accepted (None: no such check). ``act_first``: where
    ``do`` is offered, a new instruction goes to it as the turn's first step, before the
    model is asked (``conch.agent.act``); the model reads what it did and goes on from there.
    """

    provider: Provider
    tools: ToolRegistry
    options: GenerationOptions = field(default_factory=lambda: GenerationOptions(max_tokens=1024))
    json_steps: bool = False
    limits: Limits = field(default_factory=Limits)
    budget: int | None = None
    aliases: Mapping[str, str] = field(default_factory=lambda: dict(LEGACY_NAMES))
    root: Path | None = None
    act_first: bool = False

    def run(
        self, conversation: Conversation, instruction: str | None
    ) -> Generator[AgentEvent, None, str]:
        """Add ``instruction`` to ``conversation`` and work on it until there is an answer
        (None: work on the conversation as it stands, which ends with a user message or
        with the results of tool calls)."""
        if instruction is not None:
            conversation.add_request(instruction)
        request = conversation.request_text()
        root = self.root or Path()  # read only where files are wanted, which takes a root
        wanted = (
            expected_outputs(instruction, root)
            if self.root is not None and instruction is not None
            else ()
        )
        seen: Counter[tuple[str, str]] = Counter()
        blocked = 0
        retries = 0
        looked = 0  # answers held back for the files asked for
        unresolved = Unresolved()
        usage = Usage()
        partial: list[str] = []
        try:
            first = self.act_first and instruction is not None and ACT_TOOL in self.tools
            if first and instruction is not None and suits_a_command(instruction):
                step = " ".join(sanitize.text(instruction).split())
                step = resolve_it(step, conversation.earlier_request)
                call = ToolCall("call_0", ACT_TOOL, json.dumps({"step": step}))
                conversation.add(Message("assistant", "", tool_calls=(call,)))
                seen[_key(call)] += 1
                yield from self._call(call, 0, conversation)
            for iteration in range(1, self.limits.max_iterations + 1):
                if self.budget is not None:
                    pruned = conversation.prune(self.budget)
                    if pruned is not None:
                        yield pruned
                partial.clear()
                standing = unresolved.standing()
                retry = bool(standing) and retries < self.limits.max_retries
                missing: tuple[str, ...] = ()
                empty: tuple[str, ...] = ()
                if not retry and wanted and looked < self.limits.max_output_checks:
                    missing = still_missing(wanted, root)
                    empty = () if missing else still_empty(wanted, root)
                hold = retry or bool(missing) or bool(empty)
                reply = yield from self._reply(conversation, iteration, partial, hold)
                usage = Usage(
                    usage.prompt_tokens + reply.usage.prompt_tokens,
                    usage.completion_tokens + reply.usage.completion_tokens,
                )
                if not reply.calls and hold:  # an answer that cannot stand yet: once more
                    conversation.add(Message("assistant", reply.text))
                    if retry:
                        retries += 1
                        note = retry_note(request, standing)
                    else:
                        looked += 1
                        note = missing_note(missing) if missing else empty_note(empty)
                        yield from checks(wanted, root, held=True)
                    conversation.add(Message("user", note))
                    continue
                if not reply.calls and not reply.text.strip():
                    # Nothing to show and nothing to do: a failed reply, not an answer.
                    raise ModelOutputError(EMPTY_REPLY)
                if not reply.calls:
                    text = reply.text
                    note = unresolved.note(text)
                    if note:  # the answer must say what did not happen, and why
                        text = f"{text.rstrip()}\n{note}"
                        yield TextDelta(f"\n{note}")
                    conversation.add(Message("assistant", text))
                    if wanted:  # what the answer leaves behind, whether it passed or not
                        yield from checks(wanted, root)
                    yield TurnFinished(text, iteration, usage)
                    return text
                calls = tuple(self._canonical(call) for call in reply.calls)
                conversation.add(Message("assistant", reply.text, tool_calls=calls))
                for call in calls:
                    key = _key(call)
                    repeated = seen[key] >= self.limits.max_repeats
                    if repeated:
                        blocked += 1
                        note = _repeat_note(call, seen[key])
                        yield from self._call(call, iteration, conversation, note)
                    else:  # a repeat not run changes nothing: its result stands
                        seen[key] += 1
                        unresolved.record((yield from self._call(call, iteration, conversation)))
                    if blocked > self.limits.max_blocked:
                        conversation.close_turn("[stopped: the same tool call kept repeating]")
                        raise LoopDetected(call)
            limit = self.limits.max_iterations
            conversation.close_turn(f"[stopped: no final answer within {limit} model replies]")
            raise IterationLimit(limit)
        except (KeyboardInterrupt, GeneratorExit):
            conversation.close_turn(_with_note("".join(partial), INTERRUPTED))
            raise
        except BaseException as exc:
            conversation.close_turn(_with_note("".join(partial), f"[stopped: {exc}]"))
            raise

    def _call(
        self,
        call: ToolCall,
        iteration: int,
        conversation: Conversation,
        refusal: str | None = None,
    ) -> Generator[AgentEvent, None, ToolFinished]:
        """Run ``call`` (or, with ``refusal``, answer it with that error unrun), add its
        result to ``conversation``, and announce both; the finished call."""
        yield ToolStarted(call, iteration)
        started = time.monotonic()
        if refusal is not None:
            result = ToolResult(call.id, call.name, refusal, True)
        else:
            result = self.tools.call(call)
        fitted = capped(result, self.limits.max_result_chars)
        conversation.add(fitted.result.to_message())
        finished = ToolFinished(
            call,
            fitted.result,
            fitted.truncated,
            fitted.original_size,
            time.monotonic() - started,
            ran_by(result),
        )
        yield finished
        return finished

    def _reply(
        self, conversation: Conversation, iteration: int, partial: list[str], hold: bool = False
    ) -> Generator[AgentEvent, None, _Reply]:
        """One model reply, streamed: its visible text and the calls it makes. With ``hold``,
        the text is not streamed (it may be sent back); the caller shows it if it stands."""
        specs = self.tools.specs()
        json_mode = self.json_steps and bool(specs)
        options = (
            replace(self.options, json_schema=step_schema(specs)) if json_mode else self.options
        )
        offered = None if json_mode or not specs else specs
        answer = AnswerStream() if json_mode else None
        raw: list[str] = []
        calls: list[ToolCall] = []
        usage = Usage()
        messages = conversation.wire(json_steps=json_mode)
        for event in self.provider.stream(messages, options, offered):
            if isinstance(event, TextDelta):
                raw.append(event.text)
                visible = event.text if answer is None else answer.feed(event.text)
                if visible and not hold:
                    partial.append(visible)
                    yield TextDelta(visible)
            elif isinstance(event, ToolCall):
                calls.append(event)  # announced as ToolStarted once it is checked
            else:
                if isinstance(event, Finished):
                    usage = event.usage
                yield event
        text = "".join(raw)
        known = [spec.name for spec in specs] + list(self.aliases)
        prefix = f"call_{iteration}"
        if answer is not None:
            step = parse_step(text, known, prefix)
            if step.calls:
                return _Reply("", step.calls, usage)
            reply = step.answer or ""
            if answer.shown and not reply.startswith(answer.shown):
                reply = answer.shown  # a step cut short: what could be read of it
            rest = reply[len(answer.shown) :]
            if rest and not hold:
                partial.append(rest)
                yield TextDelta(rest)
            return _Reply(reply, (), usage)
        if not calls and specs:
            # A model that wrote its call as text instead of a native call.
            step = parse_step(text, known, prefix)
            if step.calls and all(call.name in known for call in step.calls):
                return _Reply("", step.calls, usage)
        return _Reply(text, tuple(calls), usage)

    def _canonical(self, call: ToolCall) -> ToolCall:
        target = self.aliases.get(call.name)
        if call.name not in self.tools and target is not None and target in self.tools:
            return ToolCall(call.id, target, call.arguments)
        return call


def refused(tool: str, content: str) -> bool:
    """Whether a tool's error is a refusal (by the safety policy, the execution mode or the
    user), which is their word and not a mistake to fix."""
    return tool in REFUSING_TOOLS or content.removeprefix("Error: ").startswith(REFUSED)


@dataclass(slots=True)
class Unresolved:
    """The tool calls of a turn that did not do what they were for: refusals (the policy's or
    the user's word, which stand), and failures, by tool, that no later success of the same
    tool made good. A failure stands (``standing``) when its tool acts (writes, deletes,
    runs) or when it was the last call."""

    failures: dict[str, ToolFinished] = field(default_factory=dict)
    refusals: dict[tuple[str, str], ToolFinished] = field(default_factory=dict)
    last: ToolFinished | None = None  # the last call, when it failed

    def record(self, finished: ToolFinished) -> None:
        """Take the outcome of one call that ran into account."""
        name = finished.call.name
        self.last = None
        if not finished.result.is_error:
            self.failures.pop(name, None)
        elif refused(name, finished.result.content):
            self.refusals[_key(finished.call)] = finished
        else:
            self.failures[name] = self.last = finished

    def standing(self) -> list[ToolFinished]:
        """The failures worth another try: those of tools that act, and the last call's."""
        stand = [f for name, f in self.failures.items() if name not in LOOKING_TOOLS]
        if self.last is not None and self.last not in stand:
            stand.append(self.last)
        return stand

    def note(self, answer: str) -> str:
        """Lines for an answer that does not say what was refused or failed: which tool,
        refused or failed, and why. Empty when there is nothing to add."""
        if _SPEAKS_OF_FAILURE.search(answer):
            return ""
        stand = [*self.refusals.values(), *self.standing()][:_NOTE_LINES]
        return "\n".join(_outcome(finished) for finished in stand)


def _outcome(finished: ToolFinished) -> str:
    """``[fs_delete was refused: the user refused it; nothing was done.]``: the tool, and
    the first sentence of its error."""
    content = finished.result.content.removeprefix("Error: ")
    name = finished.call.name
    was = "was refused" if refused(name, content) else "failed"
    reason = re.sub(r"^[A-Za-z]+(?:Error|Refused|Sandbox|Exception): ", "", content)
    reason = " ".join(reason.removeprefix(f"{name}: ").split())
    first = re.split(r"(?<=\.)\s", reason, maxsplit=1)[0]
    return f"[{name} {was}: {sanitize.one_line(first, _NOTE_CHARS)}]"


def retry_note(request: str | None, failures: Sequence[ToolFinished]) -> str:
    """What the model is told when it answers while a failure stands: which tool failed and
    what its error said, and that the request, named again, is not done yet (a small model
    otherwise answers an earlier question, or takes a hint for the answer)."""
    names = list(dict.fromkeys(f.call.name for f in failures))
    note = RETRY.replace("The last tool call failed", f"The last {' and '.join(names)} call failed")
    if not EDITING_TOOLS.intersection(names):  # reading first helps an edit, not the rest
        note = note.replace(_EDIT_EXAMPLE, "")
    if request:
        asked = sanitize.one_line(request, _NOTE_CHARS)
        note = note.replace("the task is not done yet", f'"{asked}" is not done yet')
    said = [
        sanitize.one_line(f.result.content.removeprefix("Error: "), _ERROR_CHARS) for f in failures
    ]
    return note + "".join(f"\nIts error: {text}" for text in said)


def _key(call: ToolCall) -> tuple[str, str]:
    try:
        arguments = json.dumps(json.loads(call.arguments or "{}"), sort_keys=True)
    except json.JSONDecodeError:
        arguments = call.arguments
    return call.name, arguments


def _repeat_note(call: ToolCall, times: int) -> str:
    return (
        f"Not run: you already called {call.name} with exactly these arguments {times} times "
        "in this task, and the result would be the same. Use the result you have, try "
        "something different, or give your answer."
    )


def _with_note(text: str, note: str) -> str:
    return f"{text.rstrip()}\n{note}" if text.strip() else note
