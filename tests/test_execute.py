"""Executing commands: safe-mode word expansion, live runs on the terminal, captured runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conch.execute.run import ExecResult, run_captured, run_interactive
from conch.execute.stages import expand_words
from conch.messages import Word
from procutil import gone_within

# Generous bounds: they only have to tell "promptly" from "waited for sleep 30".
PROMPT_S = 8.0


@pytest.fixture
def files(tmp_path: Path) -> Path:
    for name in ("b.txt", "a.txt", ".hidden.txt", "c.log"):
        (tmp_path / name).write_text("", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "d.txt").write_text("", encoding="utf-8")
    return tmp_path


# --- expand_words -------------------------------------------------------------------------


def test_a_glob_word_expands_to_sorted_matches_relative_to_cwd(files: Path) -> None:
    argv = expand_words([Word("ls"), Word("*.txt", glob=True), Word("-l")], files)

    assert argv == ["ls", "a.txt", "b.txt", "-l"]


def test_a_glob_reaches_into_subdirectories_like_a_shell(files: Path) -> None:
    assert expand_words([Word("*/*.txt", glob=True)], files) == ["sub/d.txt"]


def test_a_glob_without_matches_keeps_the_literal_pattern(files: Path) -> None:
    assert expand_words([Word("*.none", glob=True)], files) == ["*.none"]


def test_a_quoted_word_is_not_expanded(files: Path) -> None:
    assert expand_words([Word("*.txt", glob=False)], files) == ["*.txt"]


def test_star_skips_dot_files_unless_the_pattern_starts_with_a_dot(files: Path) -> None:
    assert ".hidden.txt" not in expand_words([Word("*", glob=True)], files)
    assert expand_words([Word(".*.txt", glob=True)], files) == [".hidden.txt"]


def test_a_leading_tilde_expands_to_home(
    files: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(files))

    argv = expand_words([Word("~"), Word("~/notes"), Word("~/*.log", glob=True)], tmp_path)

    assert argv == [str(files), f"{files}/notes", f"{files}/c.log"]


def test_a_tilde_user_form_is_left_alone_in_a_word_without_glob(
    files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(files))

    assert expand_words([Word("~root"), Word("a~/b"), Word("x/~")], files) == [
        "~root",
        "a~/b",
        "x/~",
    ]


# --- run_interactive ----------------------------------------------------------------------


def test_safe_mode_reports_the_programs_exit_code(tmp_path: Path) -> None:
    result = run_interactive(["sh", "-c", "exit 3"], cwd=tmp_path)

    assert result == ExecResult(exit_code=3, duration_s=result.duration_s)
    assert result.duration_s >= 0


def test_unsafe_mode_runs_a_pipeline_through_the_shell_with_live_output(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    result = run_interactive(shell_command="printf 'x\\ny\\nz\\n' | grep -c '[xz]'", cwd=tmp_path)

    assert result.exit_code == 0
    assert capfd.readouterr().out == "2\n"


def test_the_command_runs_in_the_given_cwd_with_the_given_env(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    env = {"PATH": os.environ["PATH"], "GREETING": "hello"}

    run_interactive(shell_command='echo "$GREETING $(pwd)"', cwd=tmp_path, env=env)

    assert capfd.readouterr().out == f"hello {tmp_path.resolve()}\n"


def test_a_missing_program_gives_127_with_an_error_instead_of_raising(tmp_path: Path) -> None:
    result = run_interactive(["conch-no-such-program-xyz", "-v"], cwd=tmp_path)

    assert result.exit_code == 127
    assert result.error == "command not found: conch-no-such-program-xyz"


def test_a_file_without_execute_permission_gives_126(tmp_path: Path) -> None:
    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\necho hi\n", encoding="utf-8")
    script.chmod(0o644)

    result = run_interactive([str(script)], cwd=tmp_path)

    assert result.exit_code == 126
    assert result.error == f"permission denied: {script}"


def test_a_missing_cwd_is_reported_as_an_error(tmp_path: Path) -> None:
    result = run_captured(["true"], cwd=tmp_path / "gone")

    assert result.exit_code == 1
    assert result.error is not None and "gone" in result.error


def test_a_death_by_signal_gives_128_plus_the_signal_number(tmp_path: Path) -> None:
    result = run_interactive(["sh", "-c", "kill -TERM $$"], cwd=tmp_path)

    assert result.exit_code == 128 + signal.SIGTERM
    assert not result.interrupted  # a signal, not Ctrl+C


def test_an_interactive_timeout_terminates_the_program(tmp_path: Path) -> None:
    start = time.monotonic()

    result = run_interactive(["sleep", "30"], cwd=tmp_path, timeout=0.5)

    assert time.monotonic() - start < PROMPT_S
    assert result.timed_out
    assert result.exit_code == 128 + signal.SIGTERM
    assert result.error == "timed out after 0.5s"


def test_the_sigint_handler_is_restored_after_an_interactive_run(tmp_path: Path) -> None:
    before = signal.getsignal(signal.SIGINT)

    run_interactive(["true"], cwd=tmp_path)

    assert signal.getsignal(signal.SIGINT) is before


def test_ctrl_c_reaches_the_child_while_conch_survives_and_reports_it(tmp_path: Path) -> None:
    # killpg(0, SIGINT) is what the terminal does on Ctrl+C: SIGINT to the whole foreground
    # process group, conch included. A new session keeps the signal away from pytest's group.
    # The child is Python, not sh: dash defers a SIGINT that lands while it forks.
    script = textwrap.dedent(
        """
        import sys
        from pathlib import Path
        from conch.execute.run import run_interactive
        child = "import os, signal, time; os.killpg(0, signal.SIGINT); time.sleep(5)"
        result = run_interactive([sys.executable, "-c", child], cwd=Path("."))
        print("conch survived, child exit", result.exit_code, result.interrupted)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
        start_new_session=True,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "conch survived, child exit 130 True"


def test_exactly_one_of_argv_and_shell_command_is_required(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        run_interactive(cwd=tmp_path)
    with pytest.raises(ValueError):
        run_captured(["true"], shell_command="true", cwd=tmp_path)
    with pytest.raises(ValueError):
        run_captured([], cwd=tmp_path)


# --- run_captured -------------------------------------------------------------------------


def test_captured_output_and_exit_code_are_returned(tmp_path: Path) -> None:
    result = run_captured(shell_command="echo out; echo err >&2; exit 5", cwd=tmp_path)

    assert (result.exit_code, result.stdout, result.stderr) == (5, "out\n", "err\n")
    assert not result.stdout_truncated and not result.stderr_truncated and not result.timed_out


def test_captured_stdin_is_empty_so_a_reader_does_not_wait(tmp_path: Path) -> None:
    result = run_captured(["cat"], cwd=tmp_path, timeout=PROMPT_S)

    assert (result.exit_code, result.stdout, result.timed_out) == (0, "", False)


def test_a_captured_program_that_cannot_start_gives_127_or_126(tmp_path: Path) -> None:
    missing = run_captured(["conch-no-such-program-xyz"], cwd=tmp_path)
    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\necho hi\n", encoding="utf-8")

    denied = run_captured([str(script)], cwd=tmp_path)

    assert (missing.exit_code, missing.error) == (
        127,
        "command not found: conch-no-such-program-xyz",
    )
    assert (denied.exit_code, denied.error) == (126, f"permission denied: {script}")


def test_stdout_beyond_the_cap_is_discarded_and_noted(tmp_path: Path) -> None:
    result = run_captured(["head", "-c", "3000000", "/dev/zero"], cwd=tmp_path, max_stdout=1000)

    assert result.exit_code == 0  # the rest was read, so head never hit a broken pipe
    assert result.stdout_truncated
    assert result.stdout == "\0" * 1000 + "\n(output truncated after 1000 bytes)"
    assert not result.stderr_truncated


def test_stderr_beyond_its_cap_is_discarded_and_noted(tmp_path: Path) -> None:
    result = run_captured(shell_command="seq 1 1000 >&2", cwd=tmp_path, max_stderr=10)

    assert result.stderr_truncated
    assert result.stderr == "1\n2\n3\n4\n5\n(output truncated after 10 bytes)"


def test_a_captured_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    start = time.monotonic()

    result = run_captured(shell_command="sleep 30 & echo $!; sleep 30", cwd=tmp_path, timeout=0.5)

    assert time.monotonic() - start < PROMPT_S
    assert result.timed_out
    assert result.error == "timed out after 0.5s"
    grandchild = int(result.stdout.split()[0])
    assert gone_within(grandchild, PROMPT_S)


def test_ctrl_c_typed_on_a_real_terminal_stops_the_child_and_not_conch(tmp_path: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    # The child announces itself only once its own SIGINT handling is in place.
    script = textwrap.dedent(
        """
        import sys
        from pathlib import Path
        from conch.execute.run import run_interactive
        child = "import time; print('started', flush=True); time.sleep(30)"
        result = run_interactive([sys.executable, "-c", child], cwd=Path("."))
        print("child exit", result.exit_code)
        """
    )
    child = pexpect.spawn(sys.executable, ["-c", script], cwd=str(tmp_path), timeout=20)
    try:
        child.expect("started")
        child.sendintr()
        child.expect(r"child exit (\d+)")
        assert child.match.group(1) == b"130"
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


def test_a_missing_python_names_python3_when_that_is_there(tmp_path: Path) -> None:
    from conch.execute.stages import not_found

    (tmp_path / "python3").write_text("#!/bin/sh\n")
    (tmp_path / "python3").chmod(0o755)
    assert not_found("python", {"PATH": str(tmp_path)}) == (
        "command not found: python (python3 is installed: use python3)"
    )
    assert not_found("python", {"PATH": str(tmp_path / "none")}) == "command not found: python"
    assert not_found("gcc", {"PATH": str(tmp_path)}) == "command not found: gcc"
