"""The history log's entries for the agent: one per ``conch run`` task and one per
``conch chat`` turn, with the request, the tool calls made (bash commands in full, other
tools by name), how it ended and what went wrong (``conch help history``)."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from conch.cli.environment import Environment
from conch.cli.status import ExitStatus, status_for
from conch.errors import ConchError

# How much of a failed call's error an entry keeps.
ERROR_WIDTH = 200

if TYPE_CHECKING:
    from collections.abc import Callable

    from conch.agent.events import AgentEvent
    from conch.config.settings import LoadedSettings


class TurnLog:
    """Collects what one turn did from its events and writes it to the history log.

    ``argv``: the command line (``conch`` included). ``loaded``: the settings (the log's
    place and size, whether it is on, the provider and model)."""

    def __init__(self, env: Environment, argv: list[str], loaded: LoadedSettings) -> None:
        self.env, self.argv, self.loaded = env, argv, loaded
        self.request: str | None = None
        self.calls: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self.started = time.monotonic()
        self.code: int = ExitStatus.ERROR

    @contextlib.contextmanager
    def turn(self, request: str) -> Iterator[TurnLog]:
        """One turn of ``request``, written to the log however it ends: with ``code`` as the
        caller set it, or as the error or Ctrl+C that ended it says."""
        self.request, self.calls, self.notes = request, [], []
        self.started = time.monotonic()
        self.code = int(ExitStatus.ERROR)
        note: str | None = None
        try:
            yield self
        except KeyboardInterrupt:
            self.code, note = ExitStatus.INTERRUPTED, "interrupted by the user (Ctrl+C)"
            raise
        except ConchError as exc:
            self.code, note = status_for(exc), str(exc)
            raise
        finally:
            self.finish(self.code, note)

    def tee(self, show: Callable[[AgentEvent], None]) -> Callable[[AgentEvent], None]:
        """An event callback that shows each event with ``show`` and notes it here."""

        def on_event(event: AgentEvent) -> None:
            self.on_event(event)
            show(event)

        return on_event

    def on_event(self, event: AgentEvent) -> None:
        """Note a finished tool call."""
        from conch.agent.events import ToolFinished

        if not isinstance(event, ToolFinished):
            return
        result = event.result
        call: dict[str, Any] = {"tool": event.call.name, "ok": not result.is_error}
        if event.call.name == "bash":
            # What ran (None when nothing did: refused, or no one to ask), else what was asked.
            call["command"] = event.command or _command(event.call.arguments)
            if event.exit_code is not None:
                call["exit_code"] = event.exit_code
        if result.is_error:
            call["error"] = " ".join(result.content.split())[:ERROR_WIDTH]
        self.calls.append(call)

    def finish(self, code: int, note: str | None = None) -> None:
        """Write the turn's entry (unless the log is off); a failure to write is a warning."""
        from conch.config.paths import Paths
        from conch.storage.history import History, HistoryEntry

        settings = self.loaded.settings
        if not settings.history.enabled:
            return
        ai = settings.ai
        commands = [c["command"] for c in self.calls if c.get("command")]
        notes = [*self.notes, *([note] if note else [])]
        entry = HistoryEntry.record(
            cwd=self.env.cwd,
            argv=self.argv,
            exit_code=code,
            started=self.started,
            notes=notes,
            generated_command=commands[-1] if commands else None,
            request=self.request,
            provider=ai.provider,
            model=ai.model_in_use,
            executed=any(c["tool"] == "bash" and c["ok"] for c in self.calls),
            tool_calls=list(self.calls),
        )
        try:
            History(Paths.default().state_dir, settings.history.max_bytes).append(entry)
        except ConchError as exc:
            self.env.stderr.write(f"conch: warning: {exc}\n")


def _command(arguments: str) -> str | None:
    try:
        value = json.loads(arguments).get("command")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None
