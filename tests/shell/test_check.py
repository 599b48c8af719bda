"""A suggested command checked as a one-shot command is, before ``conch shell`` offers it:
the files it reads exist, its programs and options are there, its dry run among the real
files works; and checking never changes a file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conch.command.candidates import Trial
from conch.command.generate import Generated
from conch.command.proposal import Proposal
from conch.config.settings import Settings
from conch.execute.dryrun import DryRun
from conch.messages import Usage
from conch.policy import Risk
from conch.shell.check import Checker, correction_of, from_proposal
from conch.shell.state import ShellState
from conch.shell.turns import judge
from conch.validate import ValidationResult
from requires import needs

APP_LOG = "'app.log' does not exist in the current directory (there is logs/app.log)"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    (path / "logs").mkdir(parents=True)
    (path / "logs" / "app.log").write_text("one\ntwo\nthree\nfour\n", encoding="utf-8")
    (path / "notes.txt").write_text("keep me\n", encoding="utf-8")
    return path


def state_in(path: Path, **aliases: str) -> ShellState:
    state = ShellState.from_environment(cwd=str(path))
    state.aliases = dict(aliases)
    return state


def checker(**sections: Any) -> Checker:
    return Checker(Settings.model_validate(sections), cache_dir=None)


def test_a_wrong_path_is_a_problem_that_names_the_file_nearby_without_a_sandbox(
    project: Path,
) -> None:
    checked = checker(generation={"dry_run": False}).check("tail -n 3 app.log", state_in(project))
    assert checked.problems == (APP_LOG,)
    assert not checked.ok
    assert checked.untried == "dry runs are turned off (generation.dry_run)"


@needs("bubblewrap")
def test_a_wrong_path_fails_its_dry_run_too(project: Path) -> None:
    checked = checker().check("tail -n 3 app.log", state_in(project))
    assert checked.problems[0] == APP_LOG
    assert checked.problems[1].startswith("it failed when conch tried it: tail: cannot open")
    assert "No such file or directory" in checked.problems[1]


@needs("bubblewrap")
def test_a_right_command_is_tried_among_the_real_files(project: Path) -> None:
    checked = checker().check("tail -n 3 logs/app.log", state_in(project))
    assert checked.ok
    assert checked.verdict.risk is Risk.READ_ONLY
    assert checked.seen == "worked, printed 3 lines"


@needs("bubblewrap")
def test_an_option_the_program_lacks_is_a_problem(project: Path) -> None:
    checked = checker().check("ls --no-such-option logs", state_in(project))
    assert any("--no-such-option" in problem for problem in checked.problems), checked


def test_a_program_that_is_not_installed_is_a_problem(project: Path) -> None:
    checked = checker(generation={"dry_run": False}).check(
        "conch-no-such-program logs", state_in(project)
    )
    assert checked.problems == ("program 'conch-no-such-program' is not installed (not on PATH)",)


@needs("bubblewrap")
def test_checking_a_command_that_deletes_leaves_the_files_alone(project: Path) -> None:
    canary = project.parent / "canary.txt"
    canary.write_text("outside\n", encoding="utf-8")
    checked = checker().check("rm notes.txt", state_in(project))
    assert checked.ok, checked
    assert checked.verdict.risk is Risk.DESTRUCTIVE
    assert checked.seen == "worked in a throwaway copy of this directory: deleted notes.txt"
    assert (project / "notes.txt").read_text(encoding="utf-8") == "keep me\n"
    assert canary.read_text(encoding="utf-8") == "outside\n"


def test_a_network_command_is_not_dry_run(project: Path) -> None:
    checked = checker().check("curl -s http://127.0.0.1:9/x", state_in(project))
    assert checked.ok
    assert checked.seen is None
    assert checked.untried == "a sandbox cannot judge a network command"


def test_a_command_the_policy_rejects_is_checked_no_further(project: Path) -> None:
    checked = checker().check("rm -rf /", state_in(project))
    assert checked.rejected
    assert checked.problems == () and checked.seen is None


@needs("bubblewrap")
def test_an_alias_is_checked_as_what_it_stands_for(project: Path) -> None:
    checked = checker().check("ll logs/app.log", state_in(project, ll="ls -l"))
    assert checked.ok, checked
    assert checked.seen == "worked, printed 1 line"


def test_an_alias_left_in_the_command_is_checked_for_paths_only(project: Path) -> None:
    state = state_in(project, ll="ls -l", lt="ll -t")
    checked = checker().check("lt app.log", state)
    assert checked.problems == ()  # ``ll`` may read anything: the path is not judged
    assert checked.untried == "it uses your alias 'll'"
    checked = checker().check("cat notes.txt | ll app.log", state)
    assert checked.untried == "it uses your alias 'll'"


@needs("bubblewrap")
def test_a_dry_run_that_does_not_finish_in_time_is_no_problem(project: Path) -> None:
    checked = checker(generation={"dry_run_timeout_s": 0.3}).check("sleep 5", state_in(project))
    assert checked.ok and checked.seen is None
    assert checked.untried == "its dry run did not finish in time"


# -- a command the one-shot pipeline made: its stages read off the proposal -------------------


def proposal(command: str, trials: list[Trial] | None = None, **fields: Any) -> Proposal:
    made = Generated(command, command, Usage(), 0.0)
    return Proposal(command, judge(command, "/"), made, trials=trials or [], **fields)


def dry_run(command: str, code: int = 0, out: bytes = b"", err: str = "") -> DryRun:
    return DryRun(command, code, out, err)


def test_a_proposal_s_failed_dry_run_and_a_missing_path_are_problems(project: Path) -> None:
    failed = Trial("tail -n 3 app.log", judge("tail", "/"), dry_run("tail", 1, err="tail: no"))
    checked = from_proposal(proposal("tail -n 3 app.log", [failed]), state_in(project))
    assert checked.problems == (APP_LOG, "it failed when conch tried it: tail: no")


def test_a_proposal_that_worked_shows_what_its_dry_run_saw(project: Path) -> None:
    worked = Trial("cat notes.txt", judge("cat", "/"), dry_run("cat", out=b"keep me\n"))
    checked = from_proposal(proposal("cat notes.txt", [worked]), state_in(project))
    assert checked.ok and checked.seen == "worked, printed 1 line"


def test_a_proposal_s_validation_issues_are_problems_unless_its_fix_was_applied(
    project: Path,
) -> None:
    result = ValidationResult(False, ["ls has no -Z here"])
    state = state_in(project)
    assert from_proposal(proposal("ls -Z", validation=result), state).problems == (
        "ls has no -Z here",
    )
    fixed = proposal("ls", validation=result, corrected=True)
    assert from_proposal(fixed, state).problems == ()


def test_an_alias_in_a_proposal_s_first_word_is_judged_for_what_it_runs(project: Path) -> None:
    checked = from_proposal(proposal("ll"), state_in(project, ll="rm -rf /"))
    assert checked.rejected


def test_validation_s_correction_is_offered_with_its_own_verdict(project: Path) -> None:
    made = proposal("ls -Z", correction="ls -l logs", correction_verdict=judge("ls -l logs", "/"))
    checked = correction_of(made, state_in(project))
    assert checked is not None and checked.command == "ls -l logs" and checked.ok
    assert correction_of(proposal("ls"), state_in(project)) is None
