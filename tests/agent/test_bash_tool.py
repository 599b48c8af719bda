"""The bash tool: the policy, the execution modes, the user's refusals, the audit log."""

from __future__ import annotations

from pathlib import Path

import pytest
from agentutil import Approver, EventLog, call, scripted_session

from conch.agent.bash import CommandRefused, Shell, bash_tool, format_result, redirected_files
from conch.agent.modes import describe, parse_mode
from conch.execute import AUDIT_LOG, Answer, ExecResult
from conch.policy import ExecutionMode
from conch.tools import make_tool
from requires import needs


@pytest.fixture
def work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("one\ntwo\n", encoding="utf-8")
    return work


def _shell(work: Path, mode: ExecutionMode, confirm: Approver | None = None) -> Shell:
    return Shell(cwd=work, mode=mode, confirm=confirm, state_dir=work.parent / "state", root=work)


def test_restricted_mode_runs_a_read_only_command_without_asking(work: Path) -> None:
    approver = Approver()
    output = _shell(work, ExecutionMode.RESTRICTED, approver).run("cat notes.txt | wc -l").text
    assert output == "2\n[exit code 0]"
    assert approver.asked == []


def test_restricted_mode_asks_before_a_write(work: Path) -> None:
    approver = Approver(Answer.run())
    output = _shell(work, ExecutionMode.RESTRICTED, approver).run("touch new.txt").text
    assert approver.asked == ["touch new.txt"]
    assert output == "(no output)\n[exit code 0]"
    assert (work / "new.txt").exists()


def test_restricted_mode_refuses_a_write_when_no_one_can_be_asked(work: Path) -> None:
    with pytest.raises(CommandRefused, match="no one can be asked; nothing ran"):
        _shell(work, ExecutionMode.RESTRICTED).run("touch new.txt")
    assert not (work / "new.txt").exists()


def test_interactive_mode_asks_even_for_a_read(work: Path) -> None:
    approver = Approver(Answer.run())
    _shell(work, ExecutionMode.INTERACTIVE, approver).run("ls")
    assert approver.asked == ["ls"]


def test_full_autonomous_mode_writes_without_asking(work: Path) -> None:
    approver = Approver()
    _shell(work, ExecutionMode.FULL, approver).run("touch new.txt")
    assert approver.asked == []
    assert (work / "new.txt").exists()


@pytest.mark.parametrize("mode", list(ExecutionMode))
def test_the_denylist_refuses_in_every_mode_without_asking(work: Path, mode: ExecutionMode) -> None:
    approver = Approver(Answer.run())
    with pytest.raises(CommandRefused, match="safety policy refused it: Denylisted"):
        _shell(work, mode, approver).run("rm -rf /")
    assert approver.asked == []


def test_code_the_policy_cannot_see_is_refused_with_the_reason(work: Path) -> None:
    with pytest.raises(CommandRefused, match="shell code that is only known at run time"):
        _shell(work, ExecutionMode.FULL).run('eval "$CODE"')


@needs("bubblewrap")
def test_a_loop_that_only_reads_runs_through_a_shell_without_asking(work: Path) -> None:
    approver = Approver()
    output = (
        _shell(work, ExecutionMode.RESTRICTED, approver)
        .run('for f in *.txt; do wc -l "$f"; done')
        .text
    )
    assert output == "2 notes.txt\n[exit code 0]"
    assert approver.asked == []


def test_a_command_the_user_refused_is_refused_again_without_asking(work: Path) -> None:
    approver = Approver(Answer.abort())
    shell = _shell(work, ExecutionMode.RESTRICTED, approver)
    with pytest.raises(CommandRefused, match="the user refused to run it"):
        shell.run("touch new.txt")
    with pytest.raises(CommandRefused, match=r"already refused `touch new\.txt`"):
        shell.run("touch   new.txt")
    assert approver.asked == ["touch new.txt"]
    assert not (work / "new.txt").exists()


def test_the_model_is_told_about_a_refusal_and_never_asked_again(work: Path) -> None:
    approver = Approver(Answer.abort())
    bash = bash_tool(_shell(work, ExecutionMode.RESTRICTED, approver))
    replies = [
        call("bash", "c1", command="rm notes.txt"),
        call("bash", "c2", command="rm notes.txt"),
        "ok",
    ]
    session = scripted_session(*replies, tools=(bash,))
    log = EventLog()
    session.chat("clean up", on_event=log)
    first, second = (f.result for f in log.finished)
    assert first.is_error and second.is_error
    assert "Do not propose this command again" in first.content
    assert "already refused `rm notes.txt` in this session" in second.content
    assert approver.asked == ["rm notes.txt"]
    assert (work / "notes.txt").exists()


def test_a_bash_call_finishes_with_the_command_that_ran_and_its_exit_code(work: Path) -> None:
    bash = bash_tool(_shell(work, ExecutionMode.RESTRICTED))
    replies = [
        call("bash", "c1", command="grep two notes.txt"),
        call("bash", "c2", command="grep three notes.txt"),
        call("shout", "c3", text="hi"),
        "done",
    ]
    session = scripted_session(*replies, tools=(bash, make_tool(shout)))
    log = EventLog()
    session.chat("look", on_event=log)
    found, missing, other = log.finished
    assert (found.command, found.exit_code) == ("grep two notes.txt", 0)
    assert (missing.command, missing.exit_code) == ("grep three notes.txt", 1)
    assert (other.command, other.exit_code, other.ran) == (None, None, None)
    # The model reads the text as before, a plain string.
    assert found.result.content == "two\n[exit code 0]"
    assert type(found.result.content) is str
    assert found.ran is not None and found.ran.output == "two\n"


def test_a_refused_command_finishes_without_a_command(work: Path) -> None:
    bash = bash_tool(_shell(work, ExecutionMode.RESTRICTED, Approver(Answer.abort())))
    session = scripted_session(call("bash", command="rm notes.txt"), "left it", tools=(bash,))
    log = EventLog()
    session.chat("clean up", on_event=log)
    (refused,) = log.finished
    assert refused.result.is_error
    assert (refused.command, refused.exit_code) == (None, None)


def shout(text: str) -> str:
    """Say ``text`` louder.

    Args:
        text: what to say.
    """
    return text.upper()


def test_every_command_that_ran_leaves_an_audit_line(work: Path) -> None:
    shell = _shell(work, ExecutionMode.FULL)
    shell.run("ls")
    assert shell.state_dir is not None
    (line,) = (shell.state_dir / AUDIT_LOG).read_text(encoding="utf-8").splitlines()
    assert f" | {work} | ls | exit:0 | " in line


def test_every_refusal_leaves_one_audit_line_with_its_reason(work: Path) -> None:
    shell = _shell(work, ExecutionMode.RESTRICTED, Approver(Answer.abort()))
    for command in ("touch a.txt", "touch a.txt", "cat /etc/hostname"):
        with pytest.raises(CommandRefused):
            shell.run(command)
    with pytest.raises(CommandRefused):
        _shell(work, ExecutionMode.RESTRICTED).run("touch b.txt")  # no one to ask
    assert shell.state_dir is not None
    lines = (shell.state_dir / AUDIT_LOG).read_text(encoding="utf-8").splitlines()
    assert [line.split(" | ", 2)[2] for line in lines] == [
        "touch a.txt | refused:declined | 0.000s",  # the user said no
        "touch a.txt | refused:declined | 0.000s",  # refused earlier in the session
        "cat /etc/hostname | refused:policy | 0.000s",  # outside the sandbox root
        "touch b.txt | refused:unasked | 0.000s",
    ]
    assert not (work / "a.txt").exists() and not (work / "b.txt").exists()


def test_the_bash_tool_tells_the_model_what_its_mode_allows(work: Path) -> None:
    restricted = bash_tool(_shell(work, ExecutionMode.RESTRICTED))
    assert restricted.name == "bash"
    assert "Read-only commands run at once" in restricted.system
    assert "refused (no one can be asked)" in restricted.system
    assert (
        describe(ExecutionMode.INTERACTIVE, True) == "The user is asked before every command runs."
    )


def test_a_result_shows_output_errors_and_the_exit_code() -> None:
    result = ExecResult(2, "out\n", "bad flag\n", stdout_truncated=True, timed_out=True)
    assert format_result("x", result) == (
        "out\n[stdout truncated]\n[stderr]\nbad flag\n[stopped: it ran past the time limit]\n"
        "[exit code 2]"
    )


@pytest.mark.parametrize(
    ("text", "mode"),
    [
        ("interactive", ExecutionMode.INTERACTIVE),
        ("restricted", ExecutionMode.RESTRICTED),
        ("Restricted-Autonomous", ExecutionMode.RESTRICTED),
        ("full_autonomous", ExecutionMode.FULL),
    ],
)
def test_modes_are_read_by_name(text: str, mode: ExecutionMode) -> None:
    assert parse_mode(text) is mode


def test_an_unknown_mode_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown execution mode 'yolo'"):
        parse_mode("yolo")


def _bin_with_python3_only(tmp_path: Path) -> Path:
    """A PATH directory holding python3 (this interpreter) and no python."""
    import sys

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    return bin_dir


def test_a_missing_python_runs_as_the_installed_python3_and_says_so(
    work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(_bin_with_python3_only(tmp_path)))
    (work / "hello.py").write_text("print('hi')\n", encoding="utf-8")
    output = _shell(work, ExecutionMode.FULL).run("python hello.py > out.txt").text
    assert output == (
        "(no output)\n[exit code 0]\n[python is not installed here; ran it as python3]\n"
        "out.txt now holds (1 line):\nhi"
    )
    assert (work / "out.txt").read_text(encoding="utf-8") == "hi\n"
    audit = (work.parent / "state" / AUDIT_LOG).read_text(encoding="utf-8")
    assert "python3 hello.py > out.txt" in audit


def test_an_installed_python_runs_unchanged(
    work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = _bin_with_python3_only(tmp_path)
    (bin_dir / "python").symlink_to(bin_dir / "python3")
    monkeypatch.setenv("PATH", str(bin_dir))
    (work / "hello.py").write_text("print('hi')\n", encoding="utf-8")
    assert _shell(work, ExecutionMode.FULL).run("python hello.py").text == "hi\n[exit code 0]"


def test_what_a_command_wrote_to_a_file_is_shown(work: Path) -> None:
    shell = _shell(work, ExecutionMode.FULL)
    assert shell.run("wc -l notes.txt > count.txt").text == (
        "(no output)\n[exit code 0]\ncount.txt now holds (1 line):\n2 notes.txt"
    )
    assert shell.run("seq 1 30 >> count.txt").text == (
        "(no output)\n[exit code 0]\ncount.txt now holds (31 lines):\n2 notes.txt\n"
        + "\n".join(str(n) for n in range(1, 20))
        + "\n[...]"
    )
    assert (
        shell.run("head -c 0 notes.txt > empty.txt").text
        == "(no output)\n[exit code 0]\nempty.txt is empty"
    )
    # a file outside the working directory is not shown, nor a command's own output
    (work.parent / "outside.txt").write_text("secret\n", encoding="utf-8")
    assert redirected_files("cat notes.txt > ../outside.txt", work) == []
    assert redirected_files("cat notes.txt > /dev/null", work) == []
    assert redirected_files("cat 'notes.txt", work) == []  # not a command line at all
    assert redirected_files("echo '>' notes.txt", work) == []


def test_a_python_script_that_prints_nothing_gets_a_note(work: Path) -> None:
    shell = _shell(work, ExecutionMode.FULL)
    (work / "count.py").write_text("def count(path):\n    return 1\n", encoding="utf-8")
    note = (
        "[count.py printed nothing: a script shows its result only with print(), and a "
        "function it defines runs only when the script calls it]"
    )
    assert shell.run("python3 count.py notes.txt > result.txt").text == (
        f"(no output)\n[exit code 0]\nresult.txt is empty\n{note}"
    )
    assert shell.run("python3 count.py").text == f"(no output)\n[exit code 0]\n{note}"
    (work / "count.py").write_text("print(2)\n", encoding="utf-8")
    assert shell.run("python3 count.py > result.txt").text == (
        "(no output)\n[exit code 0]\nresult.txt now holds (1 line):\n2"
    )
    assert shell.run("python3 count.py").text == "2\n[exit code 0]"
