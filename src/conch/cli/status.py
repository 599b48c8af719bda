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
    INTERRUPTED = 130


def status_for(exc: BaseException) -> ExitStatus:
    """The exit status of a conch error."""
    from conch import errors

    table: list[tuple[type[BaseException], ExitStatus]] = [
        (errors.UsageError, ExitStatus.USAGE),
        (errors.NoHistoryError, ExitStatus.USAGE),
        (errors.PolicyRejection, ExitStatus.REJECTED),
        (errors.ConfirmationRequired, ExitStatus.NEEDS_CONFIRMATION),
        (errors.ProviderError, ExitStatus.PROVIDER),
        (errors.ModelOutputError, ExitStatus.PROVIDER),
        (KeyboardInterrupt, ExitStatus.INTERRUPTED),
    ]
    for kind, status in table:
        if isinstance(exc, kind):
            return status
    return ExitStatus.ERROR
