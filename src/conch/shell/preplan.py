"""The plan of an ``:auto`` goal: a short TASK list asked once, then worked through a step at
a time.

``ask_plan`` asks the planner model (``shell.planner``: a larger or remote model may plan
while the small local one carries the steps out) for the goal's steps, one line each in a
strict small format, ``TASK: <step>``. ``task_lines`` reads them robustly: the format as
asked, and what a small model writes instead (a numbered or bulleted list, ``Step 1:``,
bold and backticks around the words), at most ``MAX_STEPS`` steps of at most
``STEP_CHARS`` characters each; a reply with none is a ``ModelOutputError``.

A ``Plan`` holds the goal and its steps, each ``pending``, ``running``, ``done``,
``failed`` or ``skipped``: ``next`` starts the next pending step, ``done`` and
``failed`` end it (with a note of what happened). The context window slides and the plan
must not slide with it: ``as_context`` is a short block to send with every turn (the goal,
every step and its state), and ``to_dict``/``from_dict`` keep it in the saved session.
``step_prompt`` is what the executing model is told for the step at hand.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from conch.errors import ModelOutputError
from conch.messages import GenerationOptions, Message, Usage
from conch.providers.base import EventCallback, Provider, complete

__all__ = [
    "MAX_STEPS",
    "PLANNER_PROMPT",
    "PLAN_TOKENS",
    "STEP_CHARS",
    "Plan",
    "Planned",
    "Status",
    "Step",
    "ask_plan",
    "plan_grammar",
    "task_lines",
]

Status = Literal["pending", "running", "done", "failed", "skipped"]
_STATUSES: tuple[Status, ...] = get_args(Status)
#: The most steps a plan has, characters a step has, and tokens the planner may write.
MAX_STEPS = 8
STEP_CHARS = 160
PLAN_TOKENS = 256
TAG = "[plan]"

PLANNER_PROMPT = (
    "Break the user's goal into at most {steps} short steps that a shell assistant can carry "
    "out one at a time, in order. Answer only with one line per step, each beginning with "
    'exactly "TASK: ". No other text.'
)
_TASK = re.compile(r"^\s*(?:[-*•]\s*|\d+[.)]\s*)?\**TASK\s*\d*\**\s*[:.)-]\**\s*(?P<t>.+)$", re.I)
_LISTED = re.compile(
    r"^\s*(?:\*\*step\s+\d+\s*[:.)-]?\*\*|step\s+\d+\s*[:.)-]|\d+[.)]|[-*•](?=\s))\s*(?P<t>.+)$",
    re.I,
)
_MARKS = {"pending": " ", "running": ">", "done": "x", "failed": "!", "skipped": "-"}


def plan_grammar(steps: int = MAX_STEPS) -> str:
    """A GBNF grammar for a TASK list of one to ``steps`` lines (honoured by llama.cpp
    engines, ignored by other providers)."""
    rest = "".join(" line?" for _ in range(max(steps, 1) - 1))
    return f'root ::= line{rest}\nline ::= "TASK: " [^\\n]+ "\\n"'


def task_lines(text: str, steps: int = MAX_STEPS) -> list[str]:
    """The steps of a planner's reply: its ``TASK:`` lines, or when it has none, the items
    of its numbered or bulleted list; cleaned (bold, backticks around the whole, runs of
    spaces), each once, at most ``steps`` of at most ``STEP_CHARS`` characters."""
    lines = text.replace("\r\n", "\n").split("\n")
    found = [m.group("t") for line in lines if (m := _TASK.match(line))]
    if not found:
        found = [m.group("t") for line in lines if (m := _LISTED.match(line))]
    cleaned = [_clean(step) for step in found]
    return list(dict.fromkeys(step for step in cleaned if step))[:steps]


@dataclass(slots=True)
class Step:
    """One step: what to do, its state, and a note of what happened (the command that ran,
    why it failed)."""

    text: str
    status: Status = "pending"
    note: str = ""


@dataclass(slots=True)
class Plan:
    """A goal and its steps, worked through in order."""

    goal: str
    steps: list[Step] = field(default_factory=list)

    @classmethod
    def of(cls, goal: str, steps: Iterable[str]) -> Plan:
        return cls(goal, [Step(text) for text in steps])

    @property
    def current(self) -> Step | None:
        """The step that is running, if one is."""
        return next((step for step in self.steps if step.status == "running"), None)

    @property
    def finished(self) -> bool:
        """No step is left pending or running."""
        return all(step.status not in ("pending", "running") for step in self.steps)

    @property
    def ok(self) -> bool:
        """Finished with no step failed."""
        return self.finished and all(step.status != "failed" for step in self.steps)

    def next(self) -> Step | None:
        """Start the next pending step and return it (the running one when a step is still
        running; None when none is left)."""
        running = self.current
        if running is not None:
            return running
        step = next((step for step in self.steps if step.status == "pending"), None)
        if step is not None:
            step.status = "running"
        return step

    def done(self, note: str = "") -> Step:
        """The running step worked. ValueError when no step is running."""
        return self._end("done", note)

    def failed(self, note: str = "") -> Step:
        """The running step failed. ValueError when no step is running."""
        return self._end("failed", note)

    def skip_rest(self, note: str = "") -> None:
        """Give up on the steps still pending (after a failure the plan cannot get past)."""
        for step in self.steps:
            if step.status == "pending":
                step.status, step.note = "skipped", note

    def as_context(self, note_chars: int = 80) -> str:
        """The plan as the model reads it with every turn: the goal, then each step with its
        state (``[x]`` done, ``[>]`` running, ``[!]`` failed, ``[-]`` skipped, ``[ ]`` to
        do) and the start of its note."""
        lines = [f"{TAG} Goal: {self.goal}"]
        for number, step in enumerate(self.steps, 1):
            note = f" ({_cut(step.note, note_chars)})" if step.note else ""
            lines.append(f"{number}. [{_MARKS[step.status]}] {step.text}{note}")
        return "\n".join(lines)

    def step_prompt(self) -> str:
        """What the agent of ``:auto`` (``conch.shell.auto``) is told for the running step:
        the plan, then which step to carry out now, and only it, and to say what it did.
        ValueError when no step is running."""
        step = self.current
        if step is None:
            raise ValueError("no step is running")
        number = self.steps.index(step) + 1
        return (
            f"{self.as_context()}\n\nDo step {number} of {len(self.steps)} now, and only it: "
            f"{step.text}\nThen say in one line what it did."
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe data (``from_dict`` reads it back)."""
        return {
            "goal": self.goal,
            "steps": [{"text": s.text, "status": s.status, "note": s.note} for s in self.steps],
        }

    @classmethod
    def from_dict(cls, data: object) -> Plan:
        """The plan ``to_dict`` wrote; ValueError when ``data`` is not one."""
        if not isinstance(data, dict) or not isinstance(data.get("goal"), str):
            raise ValueError("a plan is a mapping with a goal and steps")
        steps = data.get("steps")
        if not isinstance(steps, list):
            raise ValueError("a plan's steps are a list")
        plan = cls(data["goal"])
        for item in steps:
            if not isinstance(item, dict) or not isinstance(item.get("text"), str):
                raise ValueError("a step is a mapping with a text")
            status, note = item.get("status", "pending"), item.get("note", "")
            if status not in _STATUSES or not isinstance(note, str):
                raise ValueError(f"a step's status is one of {', '.join(_STATUSES)}")
            plan.steps.append(Step(item["text"], status, note))
        return plan

    def _end(self, status: Status, note: str) -> Step:
        step = self.current
        if step is None:
            raise ValueError("no step is running")
        step.status, step.note = status, note.strip()
        return step


@dataclass(frozen=True, slots=True)
class Planned:
    """A plan and the tokens the planner used for it."""

    plan: Plan
    usage: Usage


def ask_plan(
    provider: Provider,
    goal: str,
    *,
    context: Sequence[str] = (),
    steps: int = MAX_STEPS,
    options: GenerationOptions | None = None,
    on_event: EventCallback | None = None,
) -> Planned:
    """Ask ``provider`` (the planner) once for the steps of ``goal``; ``context``: short
    blocks it should know (the project's tree, the last commands). ModelOutputError when
    the reply holds no step."""
    if not goal.strip():
        raise ValueError("a plan needs a goal")
    steps = max(1, min(steps, MAX_STEPS))
    base = options or GenerationOptions()
    asked = GenerationOptions(
        temperature=base.temperature,
        max_tokens=PLAN_TOKENS,
        grammar=plan_grammar(steps),
        seed=base.seed,
    )
    body = "\n\n".join([*(block for block in context if block.strip()), f"Goal: {goal.strip()}"])
    messages = [Message("system", PLANNER_PROMPT.format(steps=steps)), Message("user", body)]
    response = complete(provider, messages, asked, on_event=on_event)
    found = task_lines(response.text, steps)
    if not found:
        raise ModelOutputError("the planner's reply holds no TASK line; try :auto again")
    return Planned(Plan.of(goal.strip(), found), response.usage)


def _clean(step: str) -> str:
    text = step.strip().strip("*").strip()
    if len(text) > 1 and text.startswith("`") and text.endswith("`") and text.count("`") == 2:
        text = text[1:-1]
    text = " ".join(text.split())
    return _cut(text, STEP_CHARS)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."
