"""Exit codes, in one place."""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    """What ``conch`` returns. A command that ran returns its own exit code instead."""

    OK = 0
    ERROR = 1
    USAGE = 2
    REJECTED = 3
    NEEDS_CONFIRMATION = 4
    PROVIDER = 5
    AGENT_STOPPED = 6
    INTERRUPTED = 130


def status_for(exc: BaseException) -> ExitStatus:
    """The exit status of a conch error."""
    from conch import errors
    from conch.agent.events import AgentError

    table: list[tuple[type[BaseException], ExitStatus]] = [
        (errors.UsageError, ExitStatus.USAGE),
        (errors.NoHistoryError, ExitStatus.USAGE),
        (errors.PolicyRejection, ExitStatus.REJECTED),
        (errors.ConfirmationRequired, ExitStatus.NEEDS_CONFIRMATION),
        (errors.ProviderError, ExitStatus.PROVIDER),
        (errors.ModelOutputError, ExitStatus.PROVIDER),
        (AgentError, ExitStatus.AGENT_STOPPED),
        (KeyboardInterrupt, ExitStatus.INTERRUPTED),
    ]
    for kind, status in table:
        if isinstance(exc, kind):
            return status
    return ExitStatus.ERROR


_MEANINGS = {
    ExitStatus.OK: "conch finished without running a command",
    ExitStatus.ERROR: "conch stopped on an error before running anything",
    ExitStatus.USAGE: "the command line was not valid; nothing ran",
    ExitStatus.REJECTED: "the safety policy refused the command; nothing ran",
    ExitStatus.NEEDS_CONFIRMATION: "the command needed a yes that was not given; nothing ran",
    ExitStatus.PROVIDER: "the model or its provider failed; nothing ran",
    ExitStatus.AGENT_STOPPED: "the agent stopped without an answer (iteration limit or a loop)",
    ExitStatus.INTERRUPTED: "interrupted with Ctrl+C",
}


def meaning(code: int) -> str | None:
    """What conch's own exit status ``code`` means (for a run where no command ran)."""
    try:
        return _MEANINGS[ExitStatus(code)]
    except ValueError:
        return None
