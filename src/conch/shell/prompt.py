"""The prompt of ``conch shell``: where you are and which model answers.

``~/project [conch:fast]$ `` (the working directory with ``~`` for home, the active model's
name), and ``~/project [conch:fast ⚡]$ `` while autonomous mode is on.
"""

from __future__ import annotations

import os

__all__ = ["AUTO_BADGE", "display_cwd", "prompt_text"]

AUTO_BADGE = "⚡"


def display_cwd(cwd: str, home: str | None) -> str:
    """``cwd`` with the home directory written ``~`` (``~`` itself, or ``~/sub``)."""
    if home:
        home = os.path.normpath(home)
        if home != "/" and (cwd == home or cwd.startswith(home + os.sep)):
            return "~" + cwd[len(home) :]
    return cwd


def prompt_text(cwd: str, home: str | None, model: str, autonomous: bool = False) -> str:
    """The prompt: directory, model name, and the autonomous-mode badge when it is on."""
    badge = f" {AUTO_BADGE}" if autonomous else ""
    return f"{display_cwd(cwd, home)} [conch:{model}{badge}]$ "
