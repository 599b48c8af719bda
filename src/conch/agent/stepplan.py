"""The plan of an instruction given one action per turn: its steps, and how each went.

When a session splits an instruction into steps (``conch.agent.steps.split_steps``), the
steps are a plan the user can follow: ``PlanStarted`` announces them, all pending; each
step's turn runs between a ``StepChanged`` to running and one to done or failed. A step
fails when its turn raises (the iteration limit, a model error) or ends while a file the
step asks for is still missing or empty (its last ``Checked`` for that file was not ok).
The steps share one turn's iteration limit; the reply is the last step's.

``StepPlan`` keeps the plan for the session (``Session.plan``) and runs it. The plan of
the last instruction stays until the next one, or until the conversation starts over.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from conch import sanitize
from conch.agent.events import (
    AgentEvent,
    Checked,
    IterationLimit,
    PlanStarted,
    PlanStep,
    StepChanged,
    StepStatus,
    TurnFinished,
)

if TYPE_CHECKING:
    from conch.agent.loop import Limits

# One turn of the session: a step's text and the limits it may use.
Turn = Callable[[str, "Limits"], Generator[AgentEvent, None, str]]
_DETAIL_CHARS = 200


class StepPlan:
    """The steps of the last instruction given one action per turn (none when it was one
    action), and the runner that moves them from pending to done or failed."""

    def __init__(self) -> None:
        self.steps: tuple[PlanStep, ...] = ()

    def clear(self) -> None:
        """Forget the plan (the conversation starts over, or the next instruction is one
        action)."""
        self.steps = ()

    def run(
        self, texts: Sequence[str], turn: Turn, limits: Limits
    ) -> Generator[AgentEvent, None, str]:
        """Work through ``texts``, one ``turn`` each, sharing ``limits.max_iterations``;
        returns the last step's reply. A step whose turn raises ends the plan: it is marked
        failed (and, unless the stream was closed or interrupted, announced) before the
        error goes on; ``IterationLimit`` names the limit the caller set."""
        self.steps = tuple(PlanStep(number, text) for number, text in enumerate(texts, 1))
        yield PlanStarted(self.steps)
        reply = ""
        used = 0
        for index, text in enumerate(texts):
            yield self._mark(index, "running")
            left = max(1, limits.max_iterations - used)
            events = turn(text, replace(limits, max_iterations=left))
            wanting: dict[str, Checked] = {}  # the files last found missing or empty
            ended = False  # the step's turn gave its answer
            try:
                while True:
                    try:
                        event = next(events)
                    except StopIteration as stop:
                        reply = stop.value
                        break
                    if isinstance(event, TurnFinished):
                        used += event.iterations
                        ended = True
                    elif isinstance(event, Checked):
                        wanting.pop(event.what, None)
                        if not event.ok:
                            wanting[event.what] = event
                    yield event
            except IterationLimit:  # the limit the caller set, which the steps shared
                shared = limits.max_iterations
                yield self._mark(index, "failed", f"no answer within {shared} model replies")
                raise IterationLimit(shared) from None
            except Exception as exc:
                yield self._mark(index, "failed", str(exc))
                raise
            except BaseException:  # Ctrl+C, a closed stream: marked, not announced
                self._set(index, *(_outcome(wanting) if ended else ("failed", "interrupted")))
                raise
            finally:
                events.close()  # left early (Ctrl+C, a closed stream): end the turn cleanly
            yield self._mark(index, *_outcome(wanting))
        return reply

    def _mark(self, index: int, status: StepStatus, detail: str = "") -> StepChanged:
        """Set step ``index``'s status and announce it."""
        return StepChanged(self._set(index, status, detail), len(self.steps))

    def _set(self, index: int, status: StepStatus, detail: str = "") -> PlanStep:
        step = replace(
            self.steps[index], status=status, detail=sanitize.one_line(detail, _DETAIL_CHARS)
        )
        self.steps = (*self.steps[:index], step, *self.steps[index + 1 :])
        return step


def _outcome(wanting: dict[str, Checked]) -> tuple[StepStatus, str]:
    """How a step whose turn answered went: done, or failed while files it asks for are
    missing or empty (``out.txt is missing``)."""
    if not wanting:
        return "done", ""
    return "failed", "; ".join(f"{c.what} {c.detail}" for c in wanting.values())


def plan_record(steps: Sequence[PlanStep]) -> list[dict[str, object]]:
    """The plan as JSON-ready records (``number``, ``text``, ``status``, ``detail``), for a
    saved conversation."""
    return [
        {"number": s.number, "text": s.text, "status": s.status, "detail": s.detail} for s in steps
    ]
