"""What the request -> command pipeline gives back, and the events it streams on the way.

A front end iterates ``Pipeline.events`` (``conch.command.propose``) and renders what it cares
about: the model's own events (``conch.messages.ProviderEvent``: text as it streams, stages of
loading, notes, usage) and the pipeline's (``Step``, ``Tried``, ``Validated``), with one
``Proposed`` last. ``Pipeline.propose`` is the same stream drained.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conch.command.candidates import Trial
from conch.command.generate import Generated
from conch.messages import ProviderEvent
from conch.policy import Decision, Verdict
from conch.validate import ValidationResult


@dataclass(slots=True)
class Proposal:
    """A command ready to show: the policy's verdict on it and what validation found.

    ``correction`` is a fix validation suggested that has not been applied (it needs the
    user's yes unless ``validation.auto_fix``); ``corrected`` tells whether ``command`` is
    already the fixed one.
    """

    command: str
    verdict: Verdict
    generated: Generated
    validation: ValidationResult | None = None
    correction: str | None = None
    correction_verdict: Verdict | None = None
    corrected: bool = False
    notes: list[str] = field(default_factory=list)
    trials: list[Trial] = field(default_factory=list)
    # Why no candidate was dry-run (dry runs off, no sandbox), when that is so.
    untried: str | None = None

    def dry_run_seen(self, command: str | None = None) -> str:
        """What the dry run of ``command`` (the proposal's by default) saw, in words: what it
        did, or why it was not tried."""
        trial = self.trial_for(command)
        if trial is not None:
            seen = trial.observed()
            if seen is not None:
                return seen
            if trial.verdict.decision is Decision.REJECT:
                return "not tried: the safety policy rejects it"
        if self.untried is not None:
            return f"not tried: {self.untried}"
        return "not tried: conch did not propose this command (an edit or a correction)"

    def trial_for(self, command: str | None = None) -> Trial | None:
        """The last trial of ``command`` (the proposal's by default), None when none was
        made (an edit, a correction)."""
        command = self.command if command is None else command
        for trial in reversed(self.trials):
            if trial.command == command:
                return trial
        return None

    def dry_run_changes(self, command: str | None = None) -> tuple[str, ...]:
        """What the scratch dry run of ``command`` (the proposal's by default) changed, one
        ``created``/``changed``/``deleted`` line per path; empty when it changed nothing or
        was not tried in a scratch copy."""
        trial = self.trial_for(command)
        run = None if trial is None else trial.dry_run
        return run.changes if run is not None and run.scratch else ()

    def trials_json(self) -> list[dict[str, Any]]:
        """The candidates that were considered, for ``--json`` and history."""
        return [t.to_json() for t in self.trials]

    def validation_json(self) -> dict[str, Any] | None:
        """The validation result for ``--json`` and history, or None when none ran."""
        if self.validation is None:
            return None
        data = self.validation.to_json()
        data["applied_correction"] = self.corrected
        return data


@dataclass(frozen=True, slots=True)
class Step:
    """The pipeline moved on: ``generating``, ``trying alternatives``, ``repairing``,
    ``reviewing: examples NAME``, ``validating``. Model events that follow belong to it."""

    label: str


@dataclass(frozen=True, slots=True)
class Tried:
    """A candidate command was assessed by the policy and, where it could be, dry-run."""

    trial: Trial


@dataclass(frozen=True, slots=True)
class Validated:
    """Validation's finding on the chosen command."""

    result: ValidationResult


@dataclass(frozen=True, slots=True)
class Proposed:
    """The pipeline's answer; always the last event."""

    proposal: Proposal


PipelineEvent = ProviderEvent | Step | Tried | Validated | Proposed
