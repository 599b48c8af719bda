"""Running commands: ``run_checked`` runs a command the policy checked, for every surface.

``from conch.execute import run_checked, Answer`` (loaded on first use, so that importing
``conch.execute.dryrun`` stays cheap). Modules: ``checked`` (refuse, confirm through the
front end's callback, run, audit), ``run`` (the terminal and captured runners), ``stages``
(a plan's programs, pipes, files and lists, run without a shell), ``audit`` (the audit log),
``dryrun`` (sandboxed dry runs of candidate commands), ``sandbox`` (finding bubblewrap),
``scratch`` (the throwaway copies scratch runs use).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_PUBLIC = {
    "Answer": "conch.execute.checked",
    "Approve": "conch.execute.checked",
    "Choice": "conch.execute.checked",
    "Ran": "conch.execute.run",
    "run_checked": "conch.execute.checked",
    "ExecResult": "conch.execute.run",
    "AUDIT_LOG": "conch.execute.audit",
}

__all__ = ["AUDIT_LOG", "Answer", "Approve", "Choice", "ExecResult", "Ran", "run_checked"]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'conch.execute' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


if TYPE_CHECKING:
    from conch.execute.audit import AUDIT_LOG
    from conch.execute.checked import Answer, Approve, Choice, run_checked
    from conch.execute.run import ExecResult, Ran
