"""Running a checked command through the library: refuse, ask, run, audit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conch.errors import ConfirmationRequired, PolicyRejection
from conch.execute.checked import AUDIT_LOG, run_checked
from conch.policy import PolicyContext, Verdict
from conch.policy.confirm import Confirmation

NEVER = Confirmation(ask=False)
ALWAYS = Confirmation(ask=True)


class Answers:
    """An approve callback that answers from a list and records what it was asked."""

    def __init__(self, *answers: str | None) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, str]] = []

    def __call__(self, command: str, verdict: Verdict, wanted: Confirmation) -> str | None:
        self.asked.append((command, str(verdict.decision)))
        return self.answers.pop(0)


def run(command: str, tmp_path: Path, approve: Answers, rule: Confirmation, **kw: object) -> object:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    context = kw.pop("context", PolicyContext(cwd=work))
    return run_checked(
        command,
        context,  # type: ignore[arg-type]
        cwd=work,
        state_dir=tmp_path / "state",
        approve=approve,
        rule=lambda verdict: rule,
        interactive=False,
        **kw,  # type: ignore[arg-type]
    )


def audit(tmp_path: Path) -> list[str]:
    return (tmp_path / "state" / AUDIT_LOG).read_text(encoding="utf-8").splitlines()


def test_an_allowed_command_runs_without_a_question_and_is_audited(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "a.txt").write_text("x")
    approve = Answers()
    ran = run("ls", tmp_path, approve, NEVER)
    assert ran.result.exit_code == 0 and ran.result.stdout == "a.txt\n"  # type: ignore[attr-defined]
    assert approve.asked == [] and ran.asked is False  # type: ignore[attr-defined]
    (line,) = audit(tmp_path)
    assert re.fullmatch(
        rf"\d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\dZ \| {re.escape(str(tmp_path / 'work'))} \| ls \| exit:0 \| \d+\.\d{{3}}s",
        line,
    )


def test_a_rejected_command_is_refused_before_anything_runs(tmp_path: Path) -> None:
    approve = Answers("ls | wc")
    with pytest.raises(PolicyRejection, match="operator"):
        run("ls | wc", tmp_path, approve, ALWAYS)
    assert approve.asked == []
    assert not (tmp_path / "state" / AUDIT_LOG).exists()


def test_the_question_is_asked_when_the_rule_says_and_abort_runs_nothing(tmp_path: Path) -> None:
    approve = Answers(None)
    with pytest.raises(ConfirmationRequired, match="nothing ran"):
        run("touch made", tmp_path, approve, ALWAYS)
    assert approve.asked == [("touch made", "confirm")]
    assert not (tmp_path / "work" / "made").exists()


def test_an_edit_is_checked_again_and_asked_about_again(tmp_path: Path) -> None:
    approve = Answers("touch edited", "touch edited")
    ran = run("touch first", tmp_path, approve, ALWAYS)
    assert [c for c, _ in approve.asked] == ["touch first", "touch edited"]
    assert ran.command == "touch edited" and (tmp_path / "work" / "edited").exists()  # type: ignore[attr-defined]
    assert not (tmp_path / "work" / "first").exists()
    assert "| touch edited | exit:0 |" in audit(tmp_path)[0]


def test_an_edit_the_policy_rejects_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PolicyRejection):
        run("touch first", tmp_path, Answers("rm -rf /"), ALWAYS)
    assert not (tmp_path / "state" / AUDIT_LOG).exists()


def test_safe_mode_runs_the_program_itself_and_unsafe_mode_the_shell(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "b.txt").write_text("x")
    safe = run("echo *.txt '*.txt'", tmp_path, Answers(), NEVER)
    assert safe.result.stdout == "b.txt *.txt\n"  # type: ignore[attr-defined]  # globbed as a shell would
    unsafe = run(
        "echo one | tr a-z A-Z",
        tmp_path,
        Answers("echo one | tr a-z A-Z"),
        ALWAYS,
        context=PolicyContext(unsafe=True, cwd=tmp_path / "work"),
    )
    assert unsafe.result.stdout == "ONE\n"  # type: ignore[attr-defined]
    assert len(audit(tmp_path)) == 2


def test_a_timeout_stops_the_command_and_is_audited(tmp_path: Path) -> None:
    ran = run("sleep 30", tmp_path, Answers(), NEVER, timeout=0.5)
    assert ran.result.timed_out  # type: ignore[attr-defined]
    assert "| sleep 30 | exit:" in audit(tmp_path)[0]


def test_on_start_hears_the_command_that_runs(tmp_path: Path) -> None:
    heard: list[str] = []
    run("pwd", tmp_path, Answers(), NEVER, on_start=lambda command, verdict: heard.append(command))
    assert heard == ["pwd"]
