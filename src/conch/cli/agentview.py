"""How an agent turn looks on the terminal: a spinner while the model thinks, the reply as
it streams, one dim line per tool call and per file checked, and a status line when the turn
is done. An instruction worked on one step per turn shows its plan first, then a line as
each step starts and as it ends (``plan_lines``).

Shared by ``conch chat`` and ``conch run``. Everything but the reply goes to stderr, so
stdout carries the answer alone when it is piped.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TextIO

from conch.cli import ui
from conch.cli.environment import Environment

if TYPE_CHECKING:
    from conch.agent.events import AgentEvent, Checked, PlanStarted, PlanStep, StepChanged
    from conch.messages import ToolCall, ToolResult
    from conch.tools import Tool
    from conch.tools.plan import PlanItem

ARGUMENT_WIDTH = 60
RESULT_WIDTH = 80
STEP_WIDTH = 100  # a step of the plan as it is listed
_MARKS = {"pending": " ", "in_progress": ">", "done": "x", "blocked": "!"}
_STEP_MARKS = {"pending": " ", "running": ">", "done": "x", "failed": "!"}


class TurnView:
    """Renders the events of agent turns.

    ``out``: where the reply streams (None: not streamed; the caller prints the answer).
    ``quiet``: no spinner, tool lines or status line. ``n_ctx``: the context window, for
    the status line. ``clock``: for the generation speed.
    """

    def __init__(
        self,
        env: Environment,
        out: TextIO | None,
        *,
        quiet: bool = False,
        n_ctx: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.env, self.out, self.quiet, self.n_ctx, self.clock = env, out, quiet, n_ctx, clock
        self.progress = ui.Progress(env, enabled=not quiet, clock=clock)
        self.usage: tuple[int, int] = (0, 0)
        self.rate = 0.0
        self._reply_started = 0.0
        self._first_text = 0.0
        self._pieces = 0
        self._open_line = False
        self._spinning: str | None = None

    # -- a turn ------------------------------------------------------------------------------

    def begin(self, label: str = "thinking") -> None:
        """A turn starts: the spinner turns until the first text or tool call."""
        self._open_line = False
        self._next_reply()
        self._spin(label)

    def on_event(self, event: AgentEvent) -> None:
        """Show one event of the turn."""
        from conch.agent.events import (
            Checked,
            PlanStarted,
            Pruned,
            StepChanged,
            ToolFinished,
            ToolStarted,
            TurnFinished,
        )
        from conch.messages import Finished, Note, Stage, TextDelta

        if isinstance(event, TextDelta):
            self._text(event.text)
        elif isinstance(event, Stage):
            self.progress.stage(event.label, event.fraction)
        elif isinstance(event, Finished):
            self._finished(event.usage.prompt_tokens, event.usage.completion_tokens)
        elif isinstance(event, ToolStarted):
            self._end_text()
            self._spin(f"running {event.call.name}")
        elif isinstance(event, ToolFinished):
            self.line(tool_line(event.call, event.result), dim=True)
            self._next_reply()
            self._spin("thinking")
        elif isinstance(event, Pruned):
            self.line(
                f"  (dropped {event.dropped} older messages to fit the context: "
                f"{event.tokens_before} -> {event.tokens_after} tokens)",
                dim=True,
            )
        elif isinstance(event, Checked | PlanStarted | StepChanged):
            for text in plan_lines(event):
                self.line(text, dim=True)
            if isinstance(event, StepChanged) and event.step.status == "running":
                self._next_reply()
                self._spin("thinking")  # the step's turn starts
        elif isinstance(event, Note):
            self.line(f"conch: note: {event.text}")
        elif isinstance(event, TurnFinished):
            self.pause()
            self._end_text()

    def pause(self) -> None:
        """Stop the spinner and erase it (before a question, a line, or the end)."""
        self._spinning = None
        self.progress.clear()

    def line(self, text: str, *, dim: bool = False) -> None:
        """A line on stderr, between the spinner's frames (nothing with ``quiet``)."""
        if self.quiet:
            return
        label = self._spinning
        self.pause()
        self._end_text()
        self.env.stderr.write((ui.paint(self.env, text, "2") if dim else text) + "\n")
        self.env.stderr.flush()
        if label:
            self._spin(label)

    def status(self, tokens: int) -> None:
        """The status line after a reply: context fill, tokens, last generation speed
        (only on a terminal, and only when the model generated something)."""
        self.pause()
        self._end_text()
        if self.quiet or not self.env.stderr_isatty or self.rate < 0.1:
            return
        report = ui.usage_report(tokens, 0, self.rate, self.n_ctx)
        self.env.stderr.write(ui.paint(self.env, report, "34") + "\n")
        self.env.stderr.flush()

    # -- inside ------------------------------------------------------------------------------

    def _spin(self, label: str) -> None:
        self._spinning = label
        self.progress.start(label)

    def _next_reply(self) -> None:
        self._reply_started = self.clock()
        self._first_text = 0.0
        self._pieces = 0

    def _text(self, text: str) -> None:
        if not text:
            return
        if not self._first_text:
            self._first_text = self.clock()
            self.pause()
        self._pieces += 1
        if self.out is not None:
            self.out.write(text)
            self.out.flush()
            self._open_line = not text.endswith("\n")

    def _finished(self, prompt: int, completion: int) -> None:
        if prompt or completion:
            self.usage = (prompt, completion)
        generated = completion or self._pieces
        start = self._first_text or self._reply_started
        elapsed = self.clock() - start
        if generated > 1 and elapsed > 0:
            self.rate = generated / elapsed

    def _end_text(self) -> None:
        if self._open_line and self.out is not None:
            self.out.write("\n")
            self.out.flush()
        self._open_line = False


def tool_line(call: ToolCall, result: ToolResult) -> str:
    """One line for a finished tool call: a mark, the call, the result's first line. A ``do``
    step gets three: the step, the command conch wrote with its trial run, and the output's
    first line."""
    mark = "✗" if result.is_error else "✓"
    lines = [line.strip() for line in result.content.splitlines() if line.strip()]
    if call.name == "do" and not result.is_error and len(lines) >= 2:
        command = lines[0].removeprefix("command: ")
        trial = lines[1].removeprefix("trial run on a copy: ")
        output = next(iter(lines[2:]), "")
        return "\n".join(
            [
                f"  {mark} {describe_call(call)}",
                f"      $ {_clip(command, RESULT_WIDTH)}",
                f"      trial run: {_clip(trial, RESULT_WIDTH)}",
                f"      → {_clip(output, RESULT_WIDTH) or '(no output)'}",
            ]
        )
    first = next(iter(lines), "")
    return f"  {mark} {describe_call(call)} → {_clip(first, RESULT_WIDTH) or '(no output)'}"


def plan_lines(event: Checked | PlanStarted | StepChanged) -> list[str]:
    """The lines for the plan of an instruction worked on one step per turn, and for a
    file checked before an answer: ``plan: 2 steps`` and the numbered steps; ``step 1 of
    2: Write count.py ...`` as a step starts, ``step 1 of 2 done`` (or ``failed: why``) as
    it ends; ``  check: result.txt exists, 1 line``."""
    from conch.agent.events import Checked, PlanStarted

    if isinstance(event, Checked):
        return [f"  check: {event.what} {event.detail}"]
    if isinstance(event, PlanStarted):
        count = len(event.steps)
        return [
            f"plan: {count} step{'' if count == 1 else 's'}",
            *(f"  {step.number}. {_clip(step.text, STEP_WIDTH)}" for step in event.steps),
        ]
    step = event.step
    where = f"step {step.number} of {event.of}"
    if step.status == "running":
        return [f"{where}: {_clip(step.text, RESULT_WIDTH)}"]
    why = f": {step.detail}" if step.status == "failed" and step.detail else ""
    return [f"{where} {step.status}{why}"]


def steps_summary(steps: Sequence[PlanStep]) -> list[str]:
    """The plan as it stands (``/plan`` in a chat): ``plan: 1 of 2 steps done``, then one
    ``[x] 1. text`` line a step (``[>]`` running, ``[!]`` failed, with why)."""
    if not steps:
        return []
    done = sum(step.status == "done" for step in steps)
    lines = [f"plan: {done} of {len(steps)} step{'' if len(steps) == 1 else 's'} done"]
    for step in steps:
        mark = _STEP_MARKS[step.status]
        why = f" (failed: {step.detail})" if step.status == "failed" and step.detail else ""
        lines.append(f"  [{mark}] {step.number}. {_clip(step.text, STEP_WIDTH)}{why}")
    return lines


def describe_call(call: ToolCall) -> str:
    """A tool call in a few words: ``bash`` shows its command, other tools their
    arguments as ``key=value``."""
    try:
        arguments = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return f"{call.name} {_clip(call.arguments, ARGUMENT_WIDTH)}"
    if not isinstance(arguments, dict):
        return f"{call.name} {_clip(str(arguments), ARGUMENT_WIDTH)}"
    if call.name == "bash" and isinstance(arguments.get("command"), str):
        return f"bash: {_clip(arguments['command'], ARGUMENT_WIDTH)}"
    if call.name == "do" and isinstance(arguments.get("step"), str):
        return f"do: {_clip(arguments['step'], ARGUMENT_WIDTH)}"
    parts = []
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        parts.append(f"{key}={_clip(text, 24)}")
    return _clip(" ".join([call.name, *parts]), ARGUMENT_WIDTH + len(call.name))


def tools_table(tools: Sequence[Tool], width: int = 78) -> str:
    """The tools as a two-column table: name, then its trigger (wrapped to ``width``)."""
    import textwrap

    column = max((len(t.name) for t in tools), default=0) + 2
    lines: list[str] = []
    for item in tools:
        wrapped = textwrap.wrap(item.trigger or "(no summary)", max(width - column - 2, 20))
        lines.append(f"  {item.name:<{column}}{wrapped[0]}")
        lines += [f"  {'':<{column}}{rest}" for rest in wrapped[1:]]
    return "\n".join(lines)


def checklist_changes(before: Sequence[PlanItem], after: Sequence[PlanItem]) -> list[str]:
    """The checklist lines worth showing after the plan changed from ``before`` to
    ``after``: the whole list when tasks were added or removed, else the tasks whose
    status, title or note changed."""
    if [i.id for i in before] != [i.id for i in after]:
        if not after:
            return ["plan: cleared"]
        return [checklist_summary(after), *(checklist_item(i) for i in after)]
    old = {i.id: i for i in before}
    return [checklist_item(i) for i in after if old.get(i.id) != i]


def checklist_item(item: PlanItem) -> str:
    """``[x] 2. title`` (with the note, where there is one)."""
    note = f" ({item.note})" if item.note else ""
    return f"  [{_MARKS.get(item.status, '?')}] {item.id}. {item.title}{note}"


def checklist_summary(items: Sequence[PlanItem]) -> str:
    """``plan: 2 of 5 done``."""
    done = sum(item.status == "done" for item in items)
    return f"plan: {done} of {len(items)} done"


def _clip(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
