"""Shell lines of ``conch shell`` in a pseudo-terminal: exit codes, the tail kept for the model,
keys, Ctrl+C, full-screen programs, and the shell history file.

The Ctrl+C, ``less`` and window-size tests run a small driver program on a real terminal
(pexpect), because raw mode and Ctrl+C only mean something there.
"""

from __future__ import annotations

import io
import os
import re
import select
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pexpect
import pytest

from conch.execute.run import ExecResult, Ran
from conch.shell.context import TAIL_CHARS, TAIL_LINES, output_tail
from conch.shell.run import (
    CAPTURE_BYTES,
    CUT_MARKER,
    append_history,
    history_file,
    run_in_pty,
    run_line,
)
from conch.shell.state import ShellState

DRIVER = """
import sys, termios
from conch.shell.run import run_in_pty
from conch.shell.state import ShellState
state = ShellState.from_environment(cwd=sys.argv[2])
before = termios.tcgetattr(0)
ran = run_in_pty(sys.argv[1], state)
restored = termios.tcgetattr(0) == before
print(f"RESULT exit={ran.exit_code} interrupted={ran.result.interrupted} restored={restored}")
"""
RESULT = re.compile(rb"RESULT exit=(\d+) interrupted=(\w+) restored=(\w+)")


def make_state(tmp_path: Path, **env: str) -> ShellState:
    environ = {"HOME": str(tmp_path), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env}
    state = ShellState.from_environment(environ, cwd=str(tmp_path))
    state.shell = "/bin/sh"
    return state


def run(line: str, state: ShellState, keys: bytes = b"") -> tuple[Ran, bytes]:
    out = io.BytesIO()
    ran = run_in_pty(line, state, out=out, keys=keys)
    return ran, out.getvalue()


def tail(ran: Ran) -> str:
    """What the model is shown of the run's output."""
    return output_tail(ran.output)


def drive(command: str, tmp_path: Path, dimensions: tuple[int, int] = (24, 80)) -> pexpect.spawn:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LESS", "PAGER"))}
    env.update(TERM="xterm", LESS="", LESSHISTFILE="-", HOME=str(tmp_path), SHELL="/bin/sh")
    return pexpect.spawn(
        sys.executable,
        ["-c", DRIVER, command, str(tmp_path)],
        env=env,
        timeout=10,
        dimensions=dimensions,
    )


def result(child: pexpect.spawn, timeout: float = 5) -> tuple[int, bool, bool]:
    child.expect(RESULT, timeout=timeout)
    match = child.match
    assert isinstance(match, re.Match)
    child.expect(pexpect.EOF)
    child.close()
    return int(match.group(1)), match.group(2) == b"True", match.group(3) == b"True"


# running and the tail


def test_echo_runs_and_its_output_is_copied_live_and_kept_as_the_tail(tmp_path: Path) -> None:
    ran, live = run("echo hi", make_state(tmp_path))
    assert (ran.command, ran.exit_code, tail(ran)) == ("echo hi", 0, "hi")
    assert not ran.result.interrupted
    assert live == b"hi\r\n"
    assert 0 <= ran.result.duration_s < 5


def test_the_exit_code_of_the_line_is_reported(tmp_path: Path) -> None:
    ran, _ = run("exit 3", make_state(tmp_path))
    assert (ran.exit_code, tail(ran), ran.result.interrupted) == (3, "", False)


def test_output_longer_than_the_tail_shows_the_model_only_its_end(tmp_path: Path) -> None:
    ran, live = run(f"seq 1 {TAIL_LINES * 5}", make_state(tmp_path))
    lines = tail(ran).splitlines()
    assert lines[0] == f"[... {TAIL_LINES * 4} earlier lines cut]"
    assert lines[1:] == [str(n) for n in range(TAIL_LINES * 4 + 1, TAIL_LINES * 5 + 1)]
    assert live.count(b"\n") == TAIL_LINES * 5


def test_one_line_longer_than_the_tail_keeps_its_end(tmp_path: Path) -> None:
    ran, _ = run(f"printf '%0{TAIL_CHARS * 3}d' 7", make_state(tmp_path))
    marker, kept = tail(ran).split("\n")
    assert marker == f"[... {TAIL_CHARS * 2} earlier characters cut]"
    assert kept == "0" * (TAIL_CHARS - 1) + "7"


def test_output_beyond_what_is_kept_loses_its_start_behind_a_marker(tmp_path: Path) -> None:
    ran, live = run(f"printf '%0{CAPTURE_BYTES * 2}d' 7", make_state(tmp_path))
    marker, kept = ran.output.split("\n")
    assert marker == CUT_MARKER
    assert len(kept) <= CAPTURE_BYTES and kept.endswith("07")
    assert len(live) == CAPTURE_BYTES * 2


def test_escape_sequences_are_removed_from_the_tail_only(tmp_path: Path) -> None:
    line = r"printf '\033]0;title\007\033[1;31mred\033[0m plain\nab\rcd\n'"
    ran, live = run(line, make_state(tmp_path))
    assert tail(ran) == "red plain\ncd"
    assert b"\x1b[1;31mred\x1b[0m" in live


def test_the_line_runs_in_the_states_directory_and_environment(tmp_path: Path) -> None:
    state = make_state(tmp_path, A="from-state")
    (tmp_path / "sub").mkdir()
    state.builtin("cd sub")
    ran, _ = run('pwd; echo "$A"', state)
    assert tail(ran) == f"{tmp_path / 'sub'}\nfrom-state"


def test_a_command_reading_the_terminal_gets_the_given_keys(tmp_path: Path) -> None:
    ran, _ = run('read name; echo "hello $name"', make_state(tmp_path), keys=b"conch\n")
    assert ran.exit_code == 0
    assert tail(ran).splitlines()[-1] == "hello conch"


def test_keys_from_a_given_descriptor_are_forwarded(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, b"one\ntwo\n")
    os.close(write_end)
    try:
        out = io.BytesIO()
        ran = run_in_pty(
            "read a; read b; echo $b$a", make_state(tmp_path), stdin_fd=read_end, out=out
        )
    finally:
        os.close(read_end)
    assert tail(ran).splitlines()[-1] == "twoone"


def test_a_line_that_cannot_start_reports_127(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    state.cwd = str(tmp_path / "gone")
    ran, live = run("echo hi", state)
    assert ran.exit_code == 127
    assert b"cannot run" in live


def test_run_line_expands_aliases_and_runs_builtins_in_process(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    (tmp_path / "sub").mkdir()
    state.aliases.update({"go": "cd sub", "say": "echo said"})
    out = io.BytesIO()
    assert run_line("go", state, out=out) == Ran("cd sub", ExecResult(0))
    assert state.cwd == str(tmp_path / "sub")
    ran = run_line("say it", state, out=out)
    assert (ran.command, tail(ran)) == ("echo said it", "said it")
    assert run_line("cd missing", state, out=out).exit_code == 1
    assert out.getvalue().endswith(b"cd: missing: No such file or directory\n")


def test_export_then_listing_shows_the_variable_from_the_shell(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    run_line("export GREETING=hello", state, out=io.BytesIO())
    ran = run_line("export -p", state, out=io.BytesIO())
    assert "GREETING" in tail(ran)
    assert "hello" in tail(ran)


def test_a_cd_combined_with_another_command_does_not_persist(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    (tmp_path / "sub").mkdir()
    ran = run_line("cd sub && pwd", state, out=io.BytesIO())
    assert tail(ran) == str(tmp_path / "sub")
    assert state.cwd == str(tmp_path)


# on a real terminal


def test_ctrl_c_stops_a_running_command_and_the_terminal_is_restored(tmp_path: Path) -> None:
    child = drive("echo started; sleep 100", tmp_path)
    child.expect("started")
    child.send("\x03")
    assert result(child) == (130, True, True)


def test_a_second_ctrl_c_kills_a_command_that_ignores_the_first(tmp_path: Path) -> None:
    child = drive("trap '' INT; echo started; sleep 100", tmp_path)
    child.expect("started")
    child.send("\x03")
    child.send("\x03")
    exit_code, interrupted, restored = result(child)
    assert exit_code == 137  # SIGKILL
    assert interrupted and restored


def test_ctrl_c_twice_is_left_to_a_program_that_reads_raw_keys(tmp_path: Path) -> None:
    child = drive("stty raw -echo; echo started; head -c 2 | od -An -c; stty sane", tmp_path)
    child.expect("started")
    child.send("\x03")
    child.send("\x03")
    child.expect(r"003 +003")
    assert result(child) == (0, False, True)


def test_sigint_sent_to_conch_itself_reaches_the_command(tmp_path: Path) -> None:
    code = DRIVER.replace("before = termios.tcgetattr(0)", "before = None").replace(
        "termios.tcgetattr(0) == before", "True"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "echo started; sleep 100", str(tmp_path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 10)
        assert ready and proc.stdout.readline().strip() == b"started"
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=5)
    finally:
        proc.kill()
        proc.wait()
    assert b"RESULT exit=130 interrupted=True" in out


def test_less_shows_the_file_and_quits_on_q(tmp_path: Path) -> None:
    text = "".join(f"line {n}\n" for n in range(1, 201))
    (tmp_path / "big.txt").write_text(text, encoding="utf-8")
    child = drive("less big.txt", tmp_path)
    child.expect("line 1")
    child.expect("line 20")
    child.send("q")
    assert result(child) == (0, False, True)


def test_the_window_size_is_passed_on_and_follows_resizes(tmp_path: Path) -> None:
    child = drive("stty size; echo ready; read x; stty size", tmp_path, dimensions=(30, 100))
    child.expect("30 100")
    child.expect("ready")
    child.setwinsize(40, 120)
    child.send("go\r")
    child.expect("40 120")
    assert result(child) == (0, False, True)


# shell history


@pytest.mark.parametrize(
    ("shell", "env", "expected"),
    [
        ("/bin/bash", {}, "home/.bash_history"),
        ("/usr/bin/zsh", {}, "home/.zsh_history"),
        ("/usr/bin/zsh", {"HISTFILE": "~/.histories/zsh"}, "home/.histories/zsh"),
        ("/bin/bash", {"HISTFILE": "/var/h"}, "/var/h"),
    ],
)
def test_the_history_file_follows_histfile_then_the_shell_name(
    tmp_path: Path, shell: str, env: dict[str, str], expected: str
) -> None:
    state = ShellState.from_environment({"HOME": str(tmp_path / "home"), **env}, cwd=str(tmp_path))
    state.shell = shell
    assert history_file(state) == tmp_path / expected


def test_a_shell_without_a_plain_history_file_has_none(tmp_path: Path) -> None:
    state = ShellState.from_environment({"HOME": str(tmp_path)}, cwd=str(tmp_path))
    state.shell = "/usr/bin/fish"
    assert history_file(state) is None


def test_accepted_commands_are_appended_to_the_history_file(tmp_path: Path) -> None:
    path = tmp_path / ".bash_history"
    path.write_text("ls\n", encoding="utf-8")
    append_history("git status\n", path)
    append_history("   ", path)
    append_history("make test", path)
    assert path.read_text(encoding="utf-8") == "ls\ngit status\nmake test\n"


def test_concurrent_appends_keep_every_line_whole(tmp_path: Path) -> None:
    path = tmp_path / ".zsh_history"
    lines = [f"echo {n} " + "x" * 2000 for n in range(20)]
    threads = [threading.Thread(target=append_history, args=(line, path)) for line in lines]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(path.read_text(encoding="utf-8").splitlines()) == sorted(lines)
