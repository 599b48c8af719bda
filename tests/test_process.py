"""The one capped process runner: time limits, output caps, process groups, stdin."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conch.host.process import ProcessResult, command_line, run_process
from procutil import gone_within

# Generous bounds: they only have to tell "promptly" from "waited for sleep 30".
PROMPT_S = 8.0


def test_output_exit_code_and_duration_are_returned(tmp_path: Path) -> None:
    result = run_process(shell_command="echo out; echo err >&2; exit 5", cwd=tmp_path)

    assert (result.stdout, result.stderr, result.exit_code) == (b"out\n", b"err\n", 5)
    assert not (result.timed_out or result.truncated or result.stopped_at_cap)
    assert result.duration >= 0


def test_argv_runs_without_a_shell_in_the_given_cwd_and_env(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "GREETING": "hello"}

    result = run_process(
        ["sh", "-c", 'echo "$GREETING" "$(pwd)" "$0"', "a;b"], cwd=tmp_path, env=env
    )

    assert result.stdout.decode() == f"hello {tmp_path.resolve()} a;b\n"


def test_a_shell_command_runs_in_the_given_shell() -> None:
    assert command_line(None, "echo hi", "/bin/bash") == ["/bin/bash", "-c", "echo hi"]
    assert run_process(shell_command="echo $0", shell="/bin/sh").stdout == b"/bin/sh\n"


def test_stdin_is_empty_unless_bytes_are_given() -> None:
    assert run_process(["cat"], timeout=PROMPT_S).stdout == b""
    data = b"x" * 300_000  # more than a pipe holds: written while the output is read

    result = run_process(["cat"], stdin=data, timeout=PROMPT_S, max_stdout=len(data))

    assert result.stdout == data and not result.timed_out


def test_a_program_that_ignores_its_stdin_does_not_block_the_writer() -> None:
    result = run_process(["true"], stdin=b"x" * 1_000_000, timeout=PROMPT_S)

    assert (result.exit_code, result.timed_out) == (0, False)


def test_output_past_the_cap_is_read_and_dropped(tmp_path: Path) -> None:
    result = run_process(["head", "-c", "3000000", "/dev/zero"], max_stdout=1000)

    assert result.exit_code == 0  # read to the end, so head never met a broken pipe
    assert result.stdout == b"\0" * 1000
    assert result.stdout_truncated and result.truncated and not result.stderr_truncated


def test_stderr_has_its_own_cap() -> None:
    result = run_process(shell_command="seq 1 1000 >&2; echo ok", max_stderr=10)

    assert (result.stdout, result.stderr) == (b"ok\n", b"1\n2\n3\n4\n5\n")
    assert result.stderr_truncated and not result.stdout_truncated


def test_stop_at_cap_kills_a_program_that_prints_forever() -> None:
    start = time.monotonic()

    result = run_process(["yes"], max_stdout=4096, stop_at_cap=True, timeout=30, kill_grace=0)

    assert time.monotonic() - start < PROMPT_S
    assert result.stopped_at_cap and result.truncated and not result.timed_out
    assert result.stdout == b"y\n" * 2048
    assert result.exit_code == 128 + signal.SIGKILL


def test_stderr_can_go_into_stdout_or_nowhere() -> None:
    command = "echo out; echo err >&2"

    merged = run_process(shell_command=command, stderr="stdout")
    dropped = run_process(shell_command=command, stderr="discard")

    assert (merged.stdout, merged.stderr) == (b"out\nerr\n", b"")
    assert (dropped.stdout, dropped.stderr) == (b"out\n", b"")


def test_large_stdout_and_stderr_together_do_not_deadlock() -> None:
    # stderr first: a reader that drained stdout to EOF before stderr would hang here.
    command = "head -c 2000000 /dev/zero >&2; head -c 3000000 /dev/zero; head -c 1 /dev/zero >&2"

    result = run_process(shell_command=command, timeout=30, max_stdout=10**7)

    assert not result.timed_out
    assert (len(result.stdout), len(result.stderr)) == (3_000_000, 2_000_001)


def test_a_timeout_kills_the_whole_process_group() -> None:
    start = time.monotonic()

    result = run_process(shell_command="sleep 30 & echo $!; sleep 30", timeout=0.5)

    assert time.monotonic() - start < PROMPT_S
    assert result.timed_out and result.exit_code == 128 + signal.SIGTERM
    grandchild = int(result.stdout.split()[0])  # printed before the timeout: still captured
    assert gone_within(grandchild, PROMPT_S)


def test_a_program_that_ignores_sigterm_is_killed_after_the_grace() -> None:
    script = "trap '' TERM; echo ready; while :; do :; done"

    result = run_process(shell_command=script, timeout=0.5, kill_grace=0.2)

    assert result.timed_out and result.exit_code == 128 + signal.SIGKILL
    assert result.stdout == b"ready\n"


def test_a_background_job_holding_the_pipe_does_not_keep_the_capture_waiting() -> None:
    start = time.monotonic()

    result = run_process(shell_command="sleep 30 & echo $!")

    assert time.monotonic() - start < PROMPT_S
    assert (result.exit_code, result.timed_out) == (0, False)
    os.kill(int(result.stdout), signal.SIGTERM)  # it was left running on purpose; clean up


def test_a_program_that_closes_its_output_is_still_timed() -> None:
    result = run_process(shell_command="exec >&- 2>&-; sleep 30", timeout=0.5)

    assert result.timed_out and result.stdout == b""


def test_what_cannot_start_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        run_process(["conch-no-such-program-xyz"])
    with pytest.raises(FileNotFoundError):
        run_process(["true"], cwd=tmp_path / "gone")
    with pytest.raises(ValueError):
        run_process([])
    with pytest.raises(ValueError):
        run_process(["true"], shell_command="true")


def test_ctrl_c_kills_the_group_and_passes_through(tmp_path: Path) -> None:
    # The command sends SIGINT to its parent (the runner) the way Ctrl+C would reach conch;
    # the runner must kill what the command started before the KeyboardInterrupt goes on.
    script = textwrap.dedent(
        """
        from conch.host.process import run_process
        try:
            run_process(shell_command="sleep 30 & echo $! > pid; kill -INT $PPID; wait")
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
    assert gone_within(int((tmp_path / "pid").read_text()), PROMPT_S)


def test_the_result_is_frozen() -> None:
    result = ProcessResult(b"", b"", 0)
    with pytest.raises(AttributeError):
        result.exit_code = 1  # type: ignore[misc]


def test_ctrl_c_while_the_program_starts_stops_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # Ctrl+C lands just as the program has started, before run_process holds it: the
    # interrupt is raised once it does, and the program is stopped, not left running.
    started: list[int] = []
    real = subprocess.Popen

    def popen_then_ctrl_c(*args: object, **kwargs: object) -> subprocess.Popen[bytes]:
        proc: subprocess.Popen[bytes] = real(*args, **kwargs)  # type: ignore[call-overload]
        started.append(proc.pid)
        os.kill(os.getpid(), signal.SIGINT)
        return proc

    monkeypatch.setattr(subprocess, "Popen", popen_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        run_process(["sleep", "30"], cwd=Path("/"))
    assert started and gone_within(started[0], 5.0)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
