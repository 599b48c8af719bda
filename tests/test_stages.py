"""Safe mode runs pipelines, lists and redirections itself: no shell process is ever started."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pexpect
import pytest

from cliutil import spawn_conch, write_config
from conch.execute import AUDIT_LOG, Answer, ExecResult, run_checked
from conch.messages import Plan
from conch.policy import PolicyContext
from conch.policy.confirm import ConfirmOptions
from conch.policy.plan import plan

SHELLS = ("sh", "bash", "dash", "zsh", "ksh", "busybox")


@pytest.fixture
def no_shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every shell on PATH (and $SHELL) replaced by one that logs that it ran, and fails.

    Returns the log: it stays absent while no shell is started."""
    fakes = tmp_path / "fake-shells"
    fakes.mkdir()
    log = tmp_path / "shell-ran.log"
    for name in SHELLS:
        fake = fakes / name
        fake.write_text(
            f"#!{sys.executable}\nimport os, sys\nopen({str(log)!r}, 'a').write('{name} ' + ' '.join(sys.argv) + ' ' + open(f'/proc/{{os.getppid()}}/cmdline').read() + '\\n')\n"
        )
        fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{fakes}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SHELL", str(fakes / "sh"))
    return log


@pytest.fixture
def names(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "names.txt").write_text("carol\nalice\nbob\n", encoding="utf-8")
    return work


def _result(
    command: str,
    work: Path,
    state: Path | None = None,
    interactive: bool = False,
    timeout: float = 30.0,
) -> ExecResult:
    ran = run_checked(
        command,
        PolicyContext(cwd=work),
        cwd=work,
        state_dir=state,
        approve=lambda *_: Answer.run(),
        options=ConfirmOptions(),
        shell=os.environ.get("SHELL", "/bin/sh"),
        interactive=interactive,
        timeout=timeout,
    )
    return ran.result


def _run(command: str, work: Path, state: Path, interactive: bool = False) -> tuple[int, str]:
    result = _result(command, work, state, interactive)
    return result.exit_code, result.stdout


@pytest.mark.parametrize("interactive", [False, True], ids=["captured", "terminal"])
def test_a_pipeline_with_redirections_runs_without_a_shell(
    no_shell: Path, names: Path, tmp_path: Path, interactive: bool
) -> None:
    code, _ = _run(
        "sort < names.txt | head -n 2 > top.txt && wc -l top.txt >> top.txt",
        names,
        tmp_path / "state",
        interactive,
    )

    assert code == 0
    assert (names / "top.txt").read_text(encoding="utf-8") == "alice\nbob\n2 top.txt\n"
    assert not no_shell.exists()
    (line,) = (tmp_path / "state" / AUDIT_LOG).read_text(encoding="utf-8").splitlines()
    assert "| sort < names.txt | head -n 2 > top.txt && wc -l top.txt >> top.txt |" in line
    assert " | exit:0 | " in line


def test_the_status_of_a_list_follows_and_and_or(
    no_shell: Path, names: Path, tmp_path: Path
) -> None:
    code, out = _run("false && echo no || echo yes; echo done", names, tmp_path / "s")

    assert (code, out) == (0, "yes\ndone\n")
    assert not no_shell.exists()


def test_stderr_joins_stdout_in_the_order_written(names: Path, tmp_path: Path) -> None:
    code, out = _run("ls missing.txt names.txt 2>&1 | sort", names, tmp_path / "s")

    assert code == 0
    assert "names.txt" in out and "missing.txt" in out


def test_a_missing_input_file_fails_that_stage_with_a_message(names: Path, tmp_path: Path) -> None:
    result = _result("sort < nothing.txt", names)

    assert result.exit_code == 1
    assert "nothing.txt" in result.stderr


def test_cd_changes_the_directory_of_the_steps_after_it(names: Path, tmp_path: Path) -> None:
    (names / "sub").mkdir()
    (names / "sub" / "inner.txt").write_text("", encoding="utf-8")

    code, out = _run("cd sub && ls", names, tmp_path / "s")

    assert (code, out) == (0, "inner.txt\n")


def test_cd_through_a_symlink_out_of_the_directory_is_refused(names: Path, tmp_path: Path) -> None:
    (names / "out").symlink_to("/")
    result = _result("cd out && ls", names)

    assert result.exit_code == 1 and result.stdout == ""
    assert "leaves the workspace" in result.stderr


def test_globs_are_expanded_by_conch_in_every_stage(names: Path, tmp_path: Path) -> None:
    (names / "b.log").write_text("", encoding="utf-8")
    (names / "a.log").write_text("", encoding="utf-8")

    code, out = _run("ls *.log | sort -r", names, tmp_path / "s")

    assert (code, out) == (0, "b.log\na.log\n")


def test_a_timeout_stops_every_stage(names: Path, tmp_path: Path) -> None:
    result = _result("sleep 30 | cat", names, timeout=0.5)

    assert result.timed_out and result.exit_code != 0


def test_a_plan_survives_its_json_form() -> None:
    made = plan("sort < in.txt | head -n 2 > 'out file.txt' 2>&1; ls *.py")

    assert Plan.from_json(json.loads(json.dumps(made.to_json()))) == made


def test_the_cli_runs_a_pipeline_with_no_shell_process(
    isolated_dirs: Path, no_shell: Path, names: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The whole CLI in a process of its own, as a user runs it, on a real terminal. Only the
    # system's programs on PATH: a version manager's shims are shell scripts themselves.
    fakes = Path(os.environ["SHELL"]).parent
    monkeypatch.setenv("PATH", os.pathsep.join([str(fakes), "/usr/bin", "/bin"]))
    reply = "sort < names.txt | head -n 2 > top.txt"
    write_config(
        isolated_dirs, f"ai:\n  provider: scripted\n  script:\n    - {json.dumps(reply)}\n"
    )
    child = spawn_conch(names, "--no-dry-run", "save the first two names in order to top.txt")
    child.expect_exact("[A]bort?")
    child.sendline("e")
    child.expect(pexpect.EOF)
    child.close()

    assert child.exitstatus == 0
    assert (names / "top.txt").read_text(encoding="utf-8") == "alice\nbob\n"
    assert not no_shell.exists()
