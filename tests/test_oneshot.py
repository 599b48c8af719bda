"""The one-shot request as one library call (``conch.command.oneshot``): a request in, a
checked command or an answer out, the same for every caller. Scripted models: these test
the control flow; the real model runs it in tests/e2e."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from cliutil import DEBIAN
from conch.command.oneshot import OneShot, OneShotRequest, Want
from conch.command.proposal import Proposed, Step
from conch.config.settings import Settings
from conch.messages import Note
from conch.policy import Decision, ExecutionMode
from conch.providers import ScriptedProvider

QUIET = {"generation": {"dry_run": False, "review": 1}, "validation": {"enabled": False}}


def service(provider: ScriptedProvider, opened: list[int] | None = None) -> OneShot:
    def open_provider() -> ScriptedProvider:
        if opened is not None:
            opened.append(1)
        return provider

    settings = Settings.model_validate(QUIET)
    return OneShot(settings, open_provider, cache_dir=Path("/nonexistent"), platform=DEBIAN)


def request(text: str, cwd: Path, **fields: object) -> OneShotRequest:
    return OneShotRequest(text, cwd, {"HOME": str(cwd), "PATH": "/usr/bin:/bin"}, **fields)  # type: ignore[arg-type]


def test_a_request_for_a_command_gives_the_checked_proposal(tmp_path: Path) -> None:
    seen: list[object] = []
    result = service(ScriptedProvider.of("ls -la")).run(
        request("list all files", tmp_path), seen.append
    )
    assert result.command == "ls -la" and result.answer is None
    assert result.verdict is not None and result.verdict.decision is Decision.ALLOW
    assert Step("generating") in seen and isinstance(seen[-1], Proposed)
    assert result.to_json()["command"] == "ls -la"


def test_a_question_gets_an_answer_with_its_suggestion_judged(tmp_path: Path) -> None:
    reply = "It lists files, long form.\n```\nls -l\n```"
    result = service(ScriptedProvider.of(reply)).run(request("what does ls -l do", tmp_path))
    assert result.proposal is None and result.answer is not None
    assert result.command == "ls -l"
    assert result.to_json()["answer"].startswith("It lists files")


@pytest.mark.parametrize(("want", "proposed"), [(Want.COMMAND, True), (Want.ANSWER, False)])
def test_the_caller_can_say_what_it_wants(tmp_path: Path, want: Want, proposed: bool) -> None:
    # "what ..." reads as a question; the caller's word wins.
    result = service(ScriptedProvider.of("du -sh .")).run(
        request("what is taking space here", tmp_path, want=want)
    )
    assert (result.proposal is not None) is proposed


def test_the_model_opens_at_the_first_request_and_closes_once(tmp_path: Path) -> None:
    opened: list[int] = []
    served = service(ScriptedProvider.of("pwd", "pwd"), opened)
    assert opened == []
    served.run(request("where am I", tmp_path))
    served.run(request("where am I", tmp_path))
    assert opened == [1]
    served.close()
    served.close()


def test_the_policy_context_can_be_the_callers(tmp_path: Path) -> None:
    served = service(ScriptedProvider.of("rm -r build"))
    asked = request("delete the build directory", tmp_path)
    own = replace(served.policy(asked), mode=ExecutionMode.INTERACTIVE)
    result = served.run(replace(asked, policy=own))
    assert result.policy.mode is ExecutionMode.INTERACTIVE
    assert result.verdict is not None and result.verdict.decision is Decision.CONFIRM


def test_safe_mode_expands_variables_from_the_contained_environment(tmp_path: Path) -> None:
    served = service(ScriptedProvider.of("echo $SECRET_API_KEY"))
    asked = replace(request("print it", tmp_path), environ={"SECRET_API_KEY": "x", "HOME": "/h"})
    policy = served.policy(asked)
    assert policy.environ is not None and "SECRET_API_KEY" not in policy.environ


def test_a_request_without_dry_runs_says_why_nothing_was_tried(tmp_path: Path) -> None:
    # Dry runs on in the settings, but the request asks for none (``--no-dry-run``).
    settings = Settings.model_validate({"validation": {"enabled": False}})
    served = OneShot(
        settings, lambda: ScriptedProvider.of("ls"), cache_dir=Path("/x"), platform=DEBIAN
    )
    seen: list[object] = []
    result = served.run(request("list", tmp_path, dry_run=False), seen.append)
    assert result.proposal is not None and result.proposal.untried == "dry runs are turned off"
    assert not any(isinstance(e, Note) for e in seen)  # not a problem worth a note
