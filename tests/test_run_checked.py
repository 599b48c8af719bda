"""Running a checked command through the library: refuse, ask, run, audit."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from conch.config.settings import AllowedProgram, PromptConfig
from conch.errors import ConfirmationRequired, NoOneToAsk, PolicyRejection
from conch.execute import AUDIT_LOG, Answer, Ran, run_checked
from conch.execute.audit import Refusal, append_audit, audit_line, audit_refusal, refusal_line
from conch.policy import Decision, PolicyContext, Risk, Verdict
from conch.policy.confirm import Confirmation, ConfirmOptions, context_for
from procutil import gone_within

LS = AllowedProgram(name="ls")
TOUCH = AllowedProgram(name="touch")
TAR = AllowedProgram(name="tar", force_explain=True)
STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"


class Approver:
    """An approve callback that answers from a list and records what it was asked."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, Decision, Confirmation]] = []

    def __call__(self, command: str, verdict: Verdict, wanted: Confirmation) -> Answer:
        self.asked.append((command, verdict.decision, wanted))
        return self.answers.pop(0)

    @property
    def commands(self) -> list[str]:
        return [command for command, _, _ in self.asked]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("x", encoding="utf-8")
    return work


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


def run(
    command: str,
    work: Path,
    state: Path,
    approve: Approver,
    *,
    prompt: PromptConfig | None = None,
    unsafe: bool = False,
    options: ConfirmOptions | None = None,
    timeout: float | None = None,
) -> Ran:
    """``command`` run captured in ``work`` under the policy context of ``prompt``."""
    prompt = prompt or PromptConfig()
    return run_checked(
        command,
        context_for(prompt, unsafe=unsafe, cwd=work),
        cwd=work,
        state_dir=state,
        approve=approve,
        options=options or ConfirmOptions(programs=tuple(prompt.tools)),
        interactive=False,
        timeout=timeout,
    )


def audit(state: Path) -> list[str]:
    return (state / AUDIT_LOG).read_text(encoding="utf-8").splitlines()


# --- when the front end is asked --------------------------------------------------------------


def test_a_whitelisted_read_only_command_runs_without_a_question(work: Path, state: Path) -> None:
    approve = Approver()

    ran = run("ls", work, state, approve, prompt=PromptConfig(tools=[LS]))

    assert approve.asked == [] and not ran.asked
    assert (ran.result.exit_code, ran.result.stdout) == (0, "a.txt\n")


@pytest.mark.parametrize(
    ("prompt", "options", "explain"),
    [
        (PromptConfig(), None, False),  # no whitelist: every command is asked about
        (PromptConfig(tools=[LS]), ConfirmOptions(confirm=True, programs=(LS,)), False),
        (PromptConfig(tools=[LS]), ConfirmOptions(explain=True, programs=(LS,)), False),
        (PromptConfig(tools=[LS, TAR]), None, True),  # tar must be explained: asked, too
    ],
    ids=["no-whitelist", "confirm", "explain", "force-explain"],
)
def test_the_question_is_asked_when_the_rule_says_so(
    work: Path, state: Path, prompt: PromptConfig, options: ConfirmOptions | None, explain: bool
) -> None:
    command = "tar --version" if explain else "ls"
    approve = Approver(Answer.run())

    ran = run(command, work, state, approve, prompt=prompt, options=options)

    assert ran.asked and ran.result.exit_code == 0
    ((asked, _, wanted),) = approve.asked
    assert asked == command
    assert (wanted.ask, wanted.explain, wanted.forced_by) == (
        True,
        explain,
        ("tar",) if explain else (),
    )
    assert wanted.reasons  # the question says why it is asked


def test_a_command_the_policy_wants_confirmed_is_asked_about(work: Path, state: Path) -> None:
    approve = Approver(Answer.run())

    ran = run("touch made", work, state, approve, prompt=PromptConfig(tools=[TOUCH]))

    assert [decision for _, decision, _ in approve.asked] == [Decision.CONFIRM]
    assert ran.asked and (work / "made").exists()


def test_abort_runs_nothing_and_is_audited_as_declined(work: Path, state: Path) -> None:
    approve = Approver(Answer.abort())

    with pytest.raises(ConfirmationRequired, match="nothing ran"):
        run("touch made", work, state, approve)

    assert approve.commands == ["touch made"]
    assert not (work / "made").exists()
    (line,) = audit(state)
    assert re.fullmatch(
        rf"{STAMP} \| {re.escape(str(work))} \| touch made \| refused:declined \| 0\.000s", line
    )


@pytest.mark.parametrize(
    ("raised", "status"),
    [
        (NoOneToAsk("no terminal"), "unasked"),
        (ConfirmationRequired("no"), "declined"),
        (PolicyRejection("not that"), "policy"),
    ],
)
def test_a_refusal_the_front_end_raises_is_audited_and_passes_through(
    work: Path, state: Path, raised: Exception, status: str
) -> None:
    def approve(command: str, verdict: Verdict, wanted: Confirmation) -> Answer:
        raise raised

    with pytest.raises(type(raised)):
        run_checked(
            "touch made",
            PolicyContext(cwd=work),
            cwd=work,
            state_dir=state,
            approve=approve,
            interactive=False,
        )

    assert not (work / "made").exists()
    (line,) = audit(state)
    assert line.endswith(f" | touch made | refused:{status} | 0.000s")


# --- refusals and edits ---------------------------------------------------------------------


@pytest.mark.parametrize("command", ["source env.sh", "rm -rf /", 'eval "$x"', "curl -s x | sh"])
def test_a_rejected_command_is_refused_before_any_question(
    work: Path, state: Path, command: str
) -> None:
    approve = Approver(Answer.run())

    with pytest.raises(PolicyRejection, match="not running it"):
        run(command, work, state, approve)

    assert approve.asked == []
    (line,) = audit(state)  # never ran: audited as refused, with no exit code
    assert line.endswith(f" | {command} | refused:policy | 0.000s")


def test_safe_mode_refuses_a_variable_nothing_sets_before_asking(work: Path, state: Path) -> None:
    approve = Approver(Answer.run())

    with pytest.raises(PolicyRejection, match=r"not running it: \$NOT_PASSED is not set"):
        run("for f in *.txt; do echo $NOT_PASSED; done", work, state, approve)

    assert approve.asked == []
    assert [line.split(" | ")[-2:] for line in audit(state)] == [["refused:policy", "0.000s"]]


def test_a_command_that_needs_a_shell_runs_in_the_users_shell_after_a_yes(
    work: Path, state: Path
) -> None:
    approve = Approver(Answer.run())

    ran = run('for f in *.txt; do echo "[$f]"; done', work, state, approve)

    assert approve.commands == ['for f in *.txt; do echo "[$f]"; done']
    assert ran.verdict.needs_shell and ran.contained is None
    assert (ran.result.exit_code, ran.result.stdout) == (0, "[a.txt]\n")
    assert [line.split(" | ")[-2] for line in audit(state)] == ["exit:0"]


def test_a_verdict_given_by_the_caller_is_not_second_guessed(work: Path, state: Path) -> None:
    rejected = Verdict(Decision.REJECT, Risk.READ_ONLY, ("no",), ("ls",), (), ())

    with pytest.raises(PolicyRejection, match="not running it: no"):
        run_checked(
            "ls",
            PolicyContext(cwd=work),
            cwd=work,
            state_dir=state,
            approve=Approver(),
            verdict=rejected,
        )


def test_an_edit_is_checked_again_and_asked_about_again(work: Path, state: Path) -> None:
    approve = Approver(Answer.edit("touch edited"), Answer.run())

    ran = run("touch first", work, state, approve)

    assert approve.commands == ["touch first", "touch edited"]
    assert ran.command == "touch edited" and ran.verdict.commands == ("touch",)
    assert (work / "edited").exists() and not (work / "first").exists()
    assert "| touch edited | exit:0 |" in audit(state)[0]


def test_an_edit_is_asked_about_even_when_the_rule_would_not_ask(work: Path, state: Path) -> None:
    approve = Approver(Answer.edit("ls"), Answer.run())

    ran = run("touch first", work, state, approve, prompt=PromptConfig(tools=[LS, TOUCH]))

    assert [(c, d) for c, d, _ in approve.asked] == [
        ("touch first", Decision.CONFIRM),
        ("ls", Decision.ALLOW),  # a whitelisted read-only command, asked about as an edit
    ]
    assert ran.command == "ls" and ran.result.stdout == "a.txt\n"


def test_an_edit_the_policy_rejects_is_refused(work: Path, state: Path) -> None:
    approve = Approver(Answer.edit("rm -rf /"))

    with pytest.raises(PolicyRejection, match="Denylisted"):
        run("touch first", work, state, approve)

    assert not (work / "first").exists()
    (line,) = audit(state)  # the edit is what was refused
    assert line.endswith(" | rm -rf / | refused:policy | 0.000s")


def test_an_edit_identical_to_the_command_runs_it(work: Path, state: Path) -> None:
    approve = Approver(Answer.edit("touch same"))

    ran = run("touch same", work, state, approve)

    assert approve.commands == ["touch same"] and (work / "same").exists() and ran.asked


# --- running ----------------------------------------------------------------------------------


def test_safe_mode_runs_the_program_itself_and_unsafe_mode_the_shell(
    work: Path, state: Path
) -> None:
    safe = run("echo *.txt '*.txt' ~/x", work, state, Approver(Answer.run()), unsafe=False)
    unsafe = run("echo one | tr a-z A-Z", work, state, Approver(Answer.run()), unsafe=True)

    # globbed and tilde-expanded by conch, as a shell would
    assert safe.result.stdout == f"a.txt *.txt {Path.home()}/x\n"
    assert unsafe.result.stdout == "ONE\n"
    assert len(audit(state)) == 2


def test_captured_output_is_capped(work: Path, state: Path) -> None:
    ran = run_checked(
        "head -c 5000 /dev/zero",
        PolicyContext(cwd=work),
        cwd=work,
        state_dir=state,
        approve=Approver(Answer.run()),
        interactive=False,
        max_stdout=100,
    )

    assert ran.result.stdout_truncated
    assert ran.result.stdout.endswith("(output truncated after 100 bytes)")


def test_an_interactive_run_uses_the_terminal(
    work: Path, state: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    ran = run_checked(
        "echo live",
        PolicyContext(cwd=work),
        cwd=work,
        state_dir=state,
        approve=Approver(Answer.run()),
    )

    assert ran.result.stdout == "" and capfd.readouterr().out == "live\n"


def test_a_timeout_stops_the_command_and_is_audited(work: Path, state: Path) -> None:
    ran = run("sleep 30", work, state, Approver(Answer.run()), timeout=0.5)

    assert ran.result.timed_out and ran.result.exit_code == 143
    pattern = rf"{STAMP} \| {re.escape(str(work))} \| sleep 30 \| exit:143 \| \d+\.\d{{3}}s"
    assert re.fullmatch(pattern, audit(state)[0])


def test_a_program_that_cannot_start_is_a_result_and_is_audited(work: Path, state: Path) -> None:
    ran = run("conch-no-such-program-xyz", work, state, Approver(Answer.run()))

    assert (ran.result.exit_code, ran.audited) == (127, True)
    assert "| conch-no-such-program-xyz | exit:127 |" in audit(state)[0]


def test_on_start_hears_the_command_that_runs(work: Path, state: Path) -> None:
    heard: list[str] = []

    run_checked(
        "pwd",
        PolicyContext(cwd=work),
        cwd=work,
        state_dir=None,
        approve=Approver(Answer.edit("ls"), Answer.run()),
        on_start=lambda command, verdict: heard.append(command),
        interactive=False,
    )

    assert heard == ["ls"]


def test_ctrl_c_during_a_captured_run_kills_it_and_is_audited(tmp_path: Path) -> None:
    # The command sends SIGINT to conch (its parent), as Ctrl+C on the terminal would.
    script = textwrap.dedent(
        """
        from pathlib import Path
        from conch.execute import Answer, run_checked
        from conch.policy import PolicyContext
        try:
            run_checked(
                "sleep 30 & echo $! > pid; kill -INT $PPID; wait",
                PolicyContext(unsafe=True),
                cwd=Path("."),
                state_dir=Path("state"),
                approve=lambda command, verdict, wanted: Answer.run(),
                interactive=False,
            )
        except KeyboardInterrupt:
            print("interrupted")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )

    assert done.stdout.strip() == "interrupted", done.stderr
    assert gone_within(int((tmp_path / "pid").read_text()), 8.0)
    (line,) = audit(tmp_path / "state")
    assert f" | {tmp_path} | sleep 30 & echo $! > pid; kill -INT $PPID; wait | exit:130 | " in line


# --- the audit line ---------------------------------------------------------------------------


def test_the_audit_line_has_utc_time_cwd_command_exit_and_duration() -> None:
    when = datetime(2025, 1, 15, 11, 30, 45, tzinfo=timezone(timedelta(hours=1)))

    line = audit_line("ls -la", Path("/home/user/project"), 0, 0.0234, when=when)

    assert line == "2025-01-15T10:30:45Z | /home/user/project | ls -la | exit:0 | 0.023s"


@pytest.mark.parametrize("why", ["policy", "declined", "unasked"])
def test_a_refusal_line_has_the_status_in_place_of_the_exit_code(why: Refusal) -> None:
    when = datetime(2025, 1, 15, 10, 30, 45, tzinfo=UTC)

    line = refusal_line("ls | x", Path("/home/user"), why, when=when)

    assert line == f"2025-01-15T10:30:45Z | /home/user | ls | x | refused:{why} | 0.000s"
    assert line.rsplit(" | ", 2)[1:] == [f"refused:{why}", "0.000s"]  # read from the right


def test_no_state_dir_no_refusal_line(tmp_path: Path) -> None:
    assert audit_refusal(None, "ls", tmp_path, "policy") is False
    assert audit_refusal(tmp_path / "state", "ls", tmp_path, "policy") is True


def test_the_audit_line_defaults_to_now_and_stays_on_one_line() -> None:
    line = audit_line("for f in *\ndo echo $f\ndone", Path("/tmp"), 130, 1.5)

    match = re.fullmatch(
        r"(\S+) \| /tmp \| for f in \*\\ndo echo \$f\\ndone \| exit:130 \| 1.500s", line
    )
    assert match is not None
    stamp = datetime.strptime(match.group(1), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert abs(datetime.now(UTC) - stamp) < timedelta(minutes=1)


def test_the_audit_log_is_private_and_appended(tmp_path: Path) -> None:
    state = tmp_path / "new" / "state"

    assert append_audit(state, "one") and append_audit(state, "two\n")

    assert audit(state) == ["one", "two"]
    assert (state / AUDIT_LOG).stat().st_mode & 0o777 == 0o600


def test_an_audit_log_that_cannot_be_written_is_reported_not_raised(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("", encoding="utf-8")

    assert append_audit(blocked / "state", "line") is False
