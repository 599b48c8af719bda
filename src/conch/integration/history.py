"""The commands conch ran, handed to the user's own shell history.

The ``conch`` function of the shell integration sets ``CONCH_SHELL_HISTORY`` to a private
temp file it made; after a command runs, a front end appends it here, one line per command,
and the function adds each line to the shell's history and removes the file. Only an
existing regular file is written: the variable never makes conch create a file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping

from conch.errors import ConchError

SHELL_HISTORY_VARIABLE = "CONCH_SHELL_HISTORY"


def append_ran(environ: Mapping[str, str], command: str) -> bool:
    """Append ``command`` (a command that ran) to the file ``CONCH_SHELL_HISTORY`` names in
    ``environ``; whether it was written.

    Nothing is written when the variable is unset or empty, or for a command that spans
    lines (each line of the file is one history entry, and part of a command could mean
    something else). ConchError, in one line, when the variable names something that is not
    an existing regular file or the file cannot be written.
    """
    name = environ.get(SHELL_HISTORY_VARIABLE, "")
    line = command.strip()
    if not name or not line or "\n" in line or "\r" in line:
        return False
    try:
        # No O_CREAT: the file must be there; no link followed; a FIFO never blocks.
        fd = os.open(name, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise ConchError(
            f"{SHELL_HISTORY_VARIABLE} names {name}, which cannot be written: {exc.strerror or exc}"
        ) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConchError(f"{SHELL_HISTORY_VARIABLE} names {name}, which is not a file")
        # One write of the whole line, as every appender in conch does.
        os.write(fd, (line + "\n").encode("utf-8", "surrogateescape"))
    except OSError as exc:
        raise ConchError(f"cannot write {name}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    return True
