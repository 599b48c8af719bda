"""``--log-file PATH`` and ``--verbose`` of ``conch chat`` and ``conch run``: what each model
reply and each tool call took, read from the turn's events.

One line per model reply (its tokens, its generation speed, its time), per tool call (its
name, whether it worked, its time), per pruning, and one per turn (replies, tool calls,
tokens, time). The file gets every line with a timestamp, appended, so one file can follow
many runs; ``--verbose`` shows the same lines on stderr. The file also gets the plan of an
instruction worked on one step per turn, each step's status and each file checked, as the
terminal shows them (``agentview.plan_lines``; not again on stderr). The library only streams events;
this front end measures and writes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from conch.errors import UsageError

if TYPE_CHECKING:
    from conch.agent.events import AgentEvent
    from conch.config.settings import LoadedSettings
    from conch.messages import Finished

Show = Callable[[str], None]


class Metrics:
    """Measures agent turns from their events and writes one line per step.

    ``path``: the log file (None: none). ``show``: where ``--verbose`` lines go (None: not
    shown). ``clock`` times the steps; ``now`` stamps the file's lines."""

    def __init__(
        self,
        path: Path | None = None,
        show: Show | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = datetime.now,
    ) -> None:
        self.path, self.show, self.clock, self.now = path, show, clock, now
        self._file: TextIO | None = None
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._file = path.open("a", encoding="utf-8")
            except OSError as exc:
                raise UsageError(
                    f"--log-file {path}: cannot write there ({exc.strerror or exc})"
                ) from None
        self._turn_start = self._step_start = self.clock()
        self._first_text: float | None = None
        self._step = 0
        self._tools = 0

    @property
    def enabled(self) -> bool:
        """True when the lines go anywhere."""
        return self._file is not None or self.show is not None

    def begin(self, request: str) -> None:
        """A turn on ``request`` starts: its clock and counts start over."""
        self._turn_start = self._step_start = self.clock()
        self._first_text, self._step, self._tools = None, 0, 0
        flat = " ".join(request.split())
        self.write(f"turn: {flat[:77] + '...' if len(flat) > 80 else flat}")

    def tee(self, show: Callable[[AgentEvent], None]) -> Callable[[AgentEvent], None]:
        """An event callback that measures each event, then hands it to ``show``."""
        if not self.enabled:
            return show

        def on_event(event: AgentEvent) -> None:
            self.on_event(event)
            show(event)

        return on_event

    def on_event(self, event: AgentEvent) -> None:
        """Measure one event; write a line where a step ended."""
        from conch.agent.events import (
            Checked,
            PlanStarted,
            Pruned,
            StepChanged,
            ToolFinished,
            TurnFinished,
        )
        from conch.cli.agentview import plan_lines
        from conch.messages import Finished, TextDelta

        now = self.clock()
        if isinstance(event, TextDelta):
            if self._first_text is None and event.text:
                self._first_text = now
        elif isinstance(event, Finished):
            self._step += 1
            self.write(self._reply_line(event, now))
            self._step_start, self._first_text = now, None
        elif isinstance(event, ToolFinished):
            self._tools += 1
            state = "error" if event.result.is_error else "ok"
            cut = f", cut from {event.original_size} characters" if event.truncated else ""
            exit_code = "" if event.exit_code is None else f", exit {event.exit_code}"
            self.write(f"tool {event.call.name}: {state}{exit_code}, {event.duration_s:.2f} s{cut}")
            self._step_start = now
        elif isinstance(event, Checked | PlanStarted | StepChanged):
            for line in plan_lines(event):
                self.write(line.strip(), shown=False)  # the terminal shows them already
        elif isinstance(event, Pruned):
            self.write(
                f"pruned: {event.dropped} messages dropped, "
                f"{event.tokens_before} -> {event.tokens_after} tokens"
            )
        elif isinstance(event, TurnFinished):
            usage = event.usage
            self.write(
                f"turn done: {_count(event.iterations, 'model reply', 'model replies')}, "
                f"{_count(self._tools, 'tool call', 'tool calls')}, "
                f"{usage.prompt_tokens} prompt + {usage.completion_tokens} completion tokens, "
                f"{now - self._turn_start:.1f} s"
            )

    def write(self, text: str, *, shown: bool = True) -> None:
        """One line to the file (stamped) and, with ``--verbose`` and ``shown``, to
        ``show``."""
        if self._file is not None:
            stamp = self.now().isoformat(timespec="seconds")
            try:
                self._file.write(f"{stamp} {text}\n")
                self._file.flush()
            except OSError:
                pass  # a full disk must not end the chat; the lines are a report
        if self.show is not None and shown:
            self.show(f"  [{text}]")

    def close(self) -> None:
        """Close the file."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def _reply_line(self, event: Finished, now: float) -> str:
        usage = event.usage
        elapsed = now - self._step_start
        rate = _rate(event, usage.completion_tokens, now - (self._first_text or self._step_start))
        speed = f", {rate:.1f} tokens/s" if rate else ""
        return (
            f"step {self._step}: {usage.prompt_tokens} prompt + {usage.completion_tokens} "
            f"completion tokens{speed}, {elapsed:.2f} s"
        )


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _rate(event: Finished, completion: int, seconds: float) -> float:
    """Tokens a second the reply was generated at: the engine's own figure where a llama.cpp
    engine reports one, else the completion tokens over the time from the first text (or
    from the request, prompt evaluation included, when no text was streamed)."""
    timings = event.timings or {}
    given = timings.get("predicted_per_second")
    if isinstance(given, int | float) and given > 0:
        return float(given)
    return completion / seconds if completion and seconds > 0 else 0.0


def metrics_for(args: object, env_cwd: Path, show: Show) -> Metrics:
    """The metrics the flags ask for: ``--log-file`` (relative to ``env_cwd``) and
    ``--verbose`` (lines through ``show``)."""
    named = getattr(args, "log_file", None)
    path = None if named is None else (env_cwd / Path(named).expanduser())
    return Metrics(path, show if getattr(args, "verbose", False) else None)


def report_window(metrics: Metrics, loaded: LoadedSettings) -> None:
    """The model and its context window, and where the window came from (the config, the
    embedded model, the server, or the default and why), as the report's first line."""
    if not metrics.enabled:
        return
    from conch.cli.agentsetup import model_name
    from conch.providers.window import context_window

    window = context_window(loaded.settings.ai)
    metrics.write(f"model: {model_name(loaded)}; context window: {window.describe()}")
