"""The ``propose_command`` tool: a request in plain language in, one checked command out.

The command comes from the same pipeline as ``conch "request"`` (generate, dry-run, validate,
assess) and carries the safety policy's verdict for the execution mode the tool was made for.
Nothing is run: whoever called the tool decides what to do with the command. The model opens
at the first call, not when the tool is made.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conch.execute.sandbox import find_sandbox
from conch.policy import ExecutionMode
from conch.policy.confirm import ConfirmOptions, command_ruling
from conch.policy.rules import Outcome, permissions_from
from conch.tools import Tool, make_tool

if TYPE_CHECKING:
    from conch.command.oneshot import OneShot, OneShotResult
    from conch.config.settings import Settings
    from conch.providers.base import Provider

PROPOSE_TRIGGER = "Turn a request in plain language into one checked shell command (not run)."
PROPOSE_DESCRIPTION = """\
Turn a request in plain language into one shell command for this machine, checked by
conch's safety policy. The command is NOT run.

The answer is JSON: "command"; "decision" (allow: it would run in this mode without a
question; confirm: it needs a person's yes; reject: the policy refuses it); "risk"
(read-only, writes, destructive, privileged, network or unknown); "reasons"; "programs"
(every program the command would run); "runs_without_asking" (true when the execution mode
would run it at once); "notes" and "correction" (what checking the command against this
machine found).

Args:
    request: what the command should do, in plain language, e.g. "find log files over 10 MB".
"""


class Proposer:
    """What ``propose_command`` runs: the request pipeline on ``settings``' model, in
    ``cwd``, assessed for ``mode`` with ``root`` as the sandbox (None: none). ``provider``
    opens the model at the first request (default: as the settings say)."""

    def __init__(
        self,
        settings: Settings,
        cwd: Path,
        *,
        mode: ExecutionMode = ExecutionMode.RESTRICTED,
        root: Path | None = None,
        environ: Mapping[str, str] | None = None,
        cache_dir: Path | None = None,
        provider: Callable[[], Provider] | None = None,
    ) -> None:
        self.settings, self.cwd, self.mode, self.root = settings, cwd, mode, root
        self.environ = dict(environ or {})
        self.cache_dir = cache_dir
        self._open = provider
        self._service: OneShot | None = None
        self._lock = threading.Lock()

    def service(self) -> OneShot:
        """The one-shot service (the model opens at its first request)."""
        if self._service is None:
            from conch.command.oneshot import OneShot

            def open_provider() -> Provider:
                if self._open is not None:
                    return self._open()
                from conch.daemon import open_provider

                return open_provider(self.settings.ai, self.settings.daemon)

            self._service = OneShot(self.settings, open_provider, cache_dir=self.cache_dir)
        return self._service

    def __call__(self, request: str) -> dict[str, Any]:
        """The checked command for ``request`` (one request at a time: one model)."""
        with self._lock:
            result = command_for(
                self.service(), request, self.cwd, self.environ, self.mode, self.root
            )
        if result is None:
            raise ValueError("the request is empty: say what the command should do")
        proposal = result.proposal
        assert proposal is not None
        verdict = proposal.verdict
        options = ConfirmOptions(
            programs=tuple(self.settings.default_prompt.tools),
            mode=self.mode,
            permissions=permissions_from(self.settings.permissions),
        )
        ruling = command_ruling(
            proposal.command, verdict, options, mode=self.mode, contain=find_sandbox().usable
        )
        answer: dict[str, Any] = {
            "command": proposal.command,
            "decision": str(verdict.decision),
            "risk": str(verdict.risk),
            "reasons": list(verdict.reasons),
            "programs": list(verdict.commands),
            "runs_without_asking": ruling.outcome is Outcome.RUN,
            "mode": str(self.mode),
            "notes": result.notes,
        }
        if proposal.correction:
            answer["correction"] = proposal.correction
        return answer

    def close(self) -> None:
        """Release the model, if it was opened."""
        if self._service is not None:
            self._service.close()
            self._service = None


def command_for(
    service: OneShot,
    request: str,
    cwd: Path,
    environ: Mapping[str, str],
    mode: ExecutionMode,
    root: Path | None,
) -> OneShotResult | None:
    """``service``'s command for ``request`` in ``cwd``, judged for ``mode`` with ``root`` as
    the sandbox root; None when the request is empty once cleaned."""
    from conch.command.oneshot import OneShotRequest, Want
    from conch.command.request import sanitize

    text = " ".join(sanitize(request).split())
    if not text:
        return None
    asked = OneShotRequest(text, cwd, environ, want=Want.COMMAND)
    policy = replace(service.policy(asked), mode=mode, sandbox_root=root)
    return service.run(replace(asked, policy=policy))


def propose_tool(proposer: Proposer) -> Tool:
    """The ``propose_command`` tool, answering with ``proposer``."""

    def propose_command(request: str) -> dict[str, Any]:
        return proposer(request)

    return make_tool(
        propose_command,
        name="propose_command",
        description=PROPOSE_DESCRIPTION,
        trigger=PROPOSE_TRIGGER,
    )
