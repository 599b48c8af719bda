"""The request -> command pipeline as a stream of events, the way a front end sees it."""

from __future__ import annotations

import json
from pathlib import Path

from cliutil import DEBIAN
from conch.command.proposal import Proposed, Step, Tried, Validated
from conch.command.propose import Pipeline
from conch.command.request import RequestContext
from conch.config.settings import Settings
from conch.execute.dryrun import DryRun
from conch.messages import Finished, TextDelta
from conch.policy import Decision, PolicyContext
from conch.providers import ScriptedProvider

VERDICT = json.dumps(
    {"valid": True, "issues": [], "corrected_command": None, "confidence": 0.9, "explanation": "ok"}
)


def pipeline(provider: ScriptedProvider, **config: object) -> Pipeline:
    settings = Settings.model_validate(config)
    return Pipeline(provider, settings, DEBIAN, PolicyContext(), cache_dir=Path("/nonexistent"))


def test_steps_model_events_candidates_validation_and_the_proposal_last() -> None:
    provider = ScriptedProvider.of("ls -la", VERDICT)
    settings = {"generation": {"dry_run": False}, "validation": {"model_check": "always"}}
    events = list(pipeline(provider, **settings).events(RequestContext("list all files")))

    assert events[0] == Step("generating")
    assert "".join(e.text for e in events if isinstance(e, TextDelta)).startswith("ls -la")
    tried = [e.trial for e in events if isinstance(e, Tried)]
    assert [(t.command, t.source) for t in tried] == [("ls -la", "greedy")]
    steps = [e.label for e in events if isinstance(e, Step)]
    assert steps == ["generating", "validating"]
    assert sum(isinstance(e, Finished) for e in events) == 2  # the command, then the verdict
    (validated,) = [e for e in events if isinstance(e, Validated)]
    assert validated.result.valid
    last = events[-1]
    assert isinstance(last, Proposed)
    assert last.proposal.command == "ls -la"
    assert last.proposal.verdict.decision is Decision.ALLOW


def test_propose_drains_the_same_stream() -> None:
    seen: list[object] = []
    provider = ScriptedProvider.of("pwd")
    settings = {"generation": {"dry_run": False}, "validation": {"enabled": False}}
    proposal = pipeline(provider, **settings).propose(RequestContext("where am I"), seen.append)
    assert proposal.command == "pwd"
    assert seen[-1] == Proposed(proposal)
    assert not any(isinstance(e, Validated) for e in seen)  # validation is off


def test_alternatives_and_the_repair_are_steps_with_their_candidates() -> None:
    provider = ScriptedProvider.of("sort -x a", "sort -y a", "sort a")

    def dry_run(command: str) -> DryRun:
        failed = command != "sort a"
        return DryRun(
            command, 2 if failed else 0, b"" if failed else b"1\n", "bad" if failed else ""
        )

    settings = Settings.model_validate(
        {"generation": {"candidates": 2, "review": 1}, "validation": {"enabled": False}}
    )
    runner = Pipeline(provider, settings, DEBIAN, PolicyContext(unsafe=True), dry_runner=dry_run)
    events = list(runner.events(RequestContext("sort a")))
    steps = [e.label for e in events if isinstance(e, Step)]
    assert steps == ["generating", "trying alternatives", "repairing"]
    tried = [(e.trial.command, e.trial.source) for e in events if isinstance(e, Tried)]
    assert tried == [("sort -x a", "greedy"), ("sort -y a", "sample"), ("sort a", "repair")]
    last = events[-1]
    assert isinstance(last, Proposed) and last.proposal.command == "sort a"
