"""``conch shell`` on a real pseudo-terminal with the real embedded model, answered by the warm
model service, default settings otherwise: a typed command's output reaching the model, a
suggested command confirmed and run (and one edited first), ``less``, ``cd`` and Ctrl+C, a
destructive step of ``:auto`` halting, and ``:quit``.

The model's wording is its own: the tests check what conch does with a reply (the turn it
sent, the commands it offered and ran, the prompt coming back) and, of the reply itself, only
that it speaks of what the command printed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest

from cliutil import CliResult, plain_terminal, spawn_conch
from conch.config.paths import Paths
from conch.shell.sessions import SavedSession

pytestmark = pytest.mark.e2e

Conch = Callable[..., CliResult]

PROMPT = "[conch:local]$"  # the space after it is drawn as a cursor move
QUESTION = "Run it? [y]es, [e]dit, [n]o [n] "
HALT = "Type yes to run it; anything else refuses it: "
START_S = 60  # a new process: imports and the user's aliases, on a busy machine
STEP_S = 10
TURN_S = 120  # one model turn of the 1.5B model on a slow 2-core CPU

_CSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")


@pytest.fixture(autouse=True)
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    plain_terminal(monkeypatch)


@pytest.fixture
def service(
    runtime_dir: Path, embedded_model: Path, monkeypatch: pytest.MonkeyPatch, conch: Conch
) -> None:
    """The warm model service switched on in the module's runtime dir, and started (its
    model loaded) before the shell asks it anything, so a model turn's time is the turn's."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime_dir))
    monkeypatch.delenv("CONCH_DAEMON", raising=False)
    started = conch("daemon", "start")
    assert started.code == 0, started.err


@pytest.fixture
def work(isolated_dirs: Path) -> Path:
    """The project, under the fresh home: the prompt shows ``~/project``, short enough that
    a typed line never wraps (a wrapped line would draw a newline before Enter)."""
    path = isolated_dirs / "project"
    path.mkdir()
    return path


@pytest.fixture
def started() -> Iterator[list[pexpect.spawn]]:
    """The shells a test starts, closed at its end however it ends."""
    children: list[pexpect.spawn] = []
    yield children
    for child in children:
        child.close(force=True)


def start(work: Path, started: list[pexpect.spawn]) -> pexpect.spawn:
    """``conch shell`` in ``work``, at its first prompt."""
    child = spawn_conch(work, "shell")
    started.append(child)
    child.timeout = STEP_S
    child.expect_exact(PROMPT, timeout=START_S)
    return child


def send_line(shell: pexpect.spawn, line: str) -> None:
    """Type ``line`` and Enter. The line editor draws the prompt once more as it takes the
    line; past the newline it ends with, a prompt is the next one."""
    shell.send(line + "\r")
    shell.expect_exact("\r\n")


def plain(text: str) -> str:
    """Terminal output without colours and carriage returns."""
    return _CSI.sub("", text).replace("\r", "")


def model_turn(shell: pexpect.spawn, answer: Callable[[list[str]], str]) -> list[str]:
    """Wait out a model turn until the prompt is back; each suggestion's question is answered
    with ``answer(shown)``. What was shown (``plain``), cut at each question: the first piece
    is the reply and the first suggestion, each later one what the answer ran (if anything)
    and the next suggestion, the last one what came before the prompt."""
    shown: list[str] = []
    while shell.expect_exact([PROMPT, QUESTION], timeout=TURN_S) == 1:
        shown.append(plain(shell.before))
        shell.send(answer(shown) + "\r")
    shown.append(plain(shell.before))
    return shown


def quit_shell(shell: pexpect.spawn) -> int:
    shell.send(":quit\r")
    shell.expect(pexpect.EOF)
    shell.close()
    status: int = shell.exitstatus
    return status


def session_records(kind: str | None = None) -> list[dict[str, Any]]:
    session = SavedSession.last(Paths.default().state_dir)
    assert session is not None, "no shell session was saved"
    return [r for r in session.records() if kind is None or r["type"] == kind]


def replies() -> list[str]:
    return [str(r["content"]) for r in session_records("turn") if r["role"] == "assistant"]


def test_a_typed_command_s_output_reaches_the_next_model_turn(
    service: None, work: Path, started: list[pexpect.spawn]
) -> None:
    error = "error: port 8123 already in use"
    (work / "notes.txt").write_text(f"starting the api server\n{error}\n", encoding="utf-8")
    shell = start(work, started)
    send_line(shell, "cat notes.txt")
    shell.expect_exact(f"{error}\r\n")
    shell.expect_exact(PROMPT)

    send_line(shell, "why did that fail?")
    shown = model_turn(shell, lambda shown: "n")  # this test runs none of its suggestions
    assert quit_shell(shell) == 0

    assert replies(), f"no reply was saved; the terminal showed: {shown!r}"
    [asked] = [r for r in session_records("turn") if r["role"] == "user"]
    assert asked["text"] == "why did that fail?"
    assert asked["content"].startswith("[exec output]\n$ cat notes.txt\nexit code: 0\n")
    assert f"\n{error}\n" in asked["content"]
    assert asked["content"].endswith("\n\nwhy did that fail?")
    assert [(r["command"], r["source"]) for r in session_records("exec")] == [
        ("cat notes.txt", "typed")
    ]
    [reply] = replies()
    assert re.search(r"8123|\bports?\b", reply, re.IGNORECASE), reply  # of what cat printed
    first_line = next(line.strip() for line in reply.splitlines() if line.strip())
    assert first_line in "".join(shown), (first_line, shown)  # streamed to the terminal


def test_a_suggested_command_runs_after_yes_and_the_prompt_comes_back(
    service: None, work: Path, started: list[pexpect.spawn]
) -> None:
    marker = "inventory-2024.csv"
    (work / marker).write_text("sku,count\nA-1,3\n", encoding="utf-8")
    (work / "readme.md").write_text("# stock\n", encoding="utf-8")
    shell = start(work, started)
    send_line(shell, "show the files in this directory")

    answers: list[str] = []

    def answer(shown: list[str]) -> str:
        # Yes to each read-only suggestion until a command that ran has listed the file (its
        # output opens the pieces after the first); no to anything else.
        listed = any(marker in piece for piece in shown[1:])
        answers.append("y" if "risk: read-only" in shown[-1] and not listed else "n")
        return answers[-1]

    shown = model_turn(shell, answer)
    if not answers:
        pytest.fail(f"the model suggested no command; the terminal showed: {shown!r}")
    accepted = [i for i, given in enumerate(answers) if given == "y"]
    if not accepted:
        pytest.fail(f"the model suggested no read-only command: {shown[:-1]!r}")
    ran_output = [shown[i + 1] for i in accepted]
    assert any(marker in output for output in ran_output), (shown, answers)

    # The prompt is back and takes lines as before.
    send_line(shell, 'echo back""-again')
    shell.expect_exact("back-again\r\n")
    shell.expect_exact(PROMPT)
    assert quit_shell(shell) == 0
    suggested = [r for r in session_records("exec") if r["source"] == "suggested"]
    assert len(suggested) == len(accepted), suggested
    assert any(r["exit_code"] == 0 for r in suggested), suggested


def test_cd_persists_and_ctrl_c_kills_a_running_command(
    work: Path, started: list[pexpect.spawn]
) -> None:
    (work / "sub").mkdir()
    shell = start(work, started)
    send_line(shell, "cd sub")
    shell.expect_exact(f"sub {PROMPT}")
    send_line(shell, "pwd")
    shell.expect_exact(f"{work}/sub\r\n")
    shell.expect_exact(f"sub {PROMPT}")

    send_line(shell, 'echo sleep""ing; sleep 100')
    shell.expect_exact("sleeping\r\n")
    shell.sendintr()
    shell.expect_exact(f"sub {PROMPT}")  # long before the 100 s are up
    send_line(shell, 'echo back""-again')
    shell.expect_exact("back-again\r\n")
    shell.expect_exact(PROMPT)
    assert quit_shell(shell) == 0
    exits = {r["command"]: r["exit_code"] for r in session_records("exec")}
    assert exits['echo sleep""ing; sleep 100'] != 0
    assert "cd sub" in exits and "pwd" in exits


def test_quit_exits_0_and_leaves_the_model_service_running(
    service: None, work: Path, started: list[pexpect.spawn], conch: Conch
) -> None:
    shell = start(work, started)
    assert quit_shell(shell) == 0
    assert [r["type"] for r in session_records()] == ["start"]  # :quit went to no one
    status = conch("daemon", "status", "--json")
    assert status.code == 0, status.err
    assert json.loads(status.out)["running"] is True


def test_less_runs_full_screen_and_a_question_follows_on_the_model(
    service: None, work: Path, started: list[pexpect.spawn]
) -> None:
    (work / "notes.txt").write_text("first line\nthe build needs port 8123\n", encoding="utf-8")
    shell = start(work, started)
    send_line(shell, "less notes.txt")
    shell.expect_exact("the build needs port 8123")
    shell.expect_exact("(END)")
    shell.send("q")
    shell.expect_exact(PROMPT)
    send_line(shell, 'echo still""-alive')
    shell.expect_exact("still-alive\r\n")
    shell.expect_exact(PROMPT)

    send_line(shell, "what is a pager?")
    shown = model_turn(shell, lambda shown: "n")
    assert quit_shell(shell) == 0
    assert replies(), f"no reply was saved; the terminal showed: {shown!r}"
    exits = {r["command"]: r["exit_code"] for r in session_records("exec")}
    assert exits["less notes.txt"] == 0, exits


def test_a_suggested_command_is_edited_then_confirmed_and_runs_as_edited(
    service: None, work: Path, started: list[pexpect.spawn]
) -> None:
    (work / "inventory-2024.csv").write_text("sku,count\nA-1,3\n", encoding="utf-8")
    shell = start(work, started)
    send_line(shell, "show the files in this directory")
    if shell.expect_exact([QUESTION, PROMPT], timeout=TURN_S) == 1:
        pytest.fail(f"the model suggested no command: {plain(shell.before)!r}")
    shell.send("e\r")
    shell.expect_exact(PROMPT)  # the input line, pre-filled with the suggestion
    # End of line, then the edit: the edited line is what runs.
    shell.send('\x05 && echo edit""ed-by-hand\r')
    shell.expect_exact("edited-by-hand\r\n", timeout=TURN_S)
    shell.expect_exact(PROMPT)
    assert quit_shell(shell) == 0
    ran = [r for r in session_records("exec") if r["command"].endswith('&& echo edit""ed-by-hand')]
    assert ran, session_records("exec")
    assert ran[0]["exit_code"] == 0, ran


def test_a_destructive_step_of_auto_halts_and_no_leaves_the_files(
    service: None, work: Path, started: list[pexpect.spawn]
) -> None:
    victim = work / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious\n", encoding="utf-8")
    shell = start(work, started)
    send_line(shell, ":auto delete the directory victim and everything in it")
    halted = shell.expect_exact(["HALT: the agent wants to", PROMPT], timeout=TURN_S * 3)
    if halted == 1:
        pytest.fail(f"the agent finished without a halt: {plain(shell.before)!r}")
    shell.expect_exact(HALT, timeout=STEP_S)
    shell.send("no\r")
    # The agent is told no; it may try again (each try halts too) or give up.
    while shell.expect_exact([HALT, PROMPT], timeout=TURN_S * 3) == 0:
        shell.send("no\r")
    assert quit_shell(shell) == 0
    assert (victim / "keep.txt").read_text(encoding="utf-8") == "precious\n"


_OFFERED = re.compile(r"(?:the model suggests|the model's correction):\n  (.+)\n((?:  .*\n)*)")


def test_after_ls_logs_the_command_offered_for_app_log_names_logs_app_log(
    service: None, work: Path, started: list[pexpect.spawn], isolated_dirs: Path
) -> None:
    (work / "logs").mkdir()
    entries = "".join(f"2024-05-02 09:14:0{n} INFO entry number {n}\n" for n in range(1, 7))
    (work / "logs" / "app.log").write_text(entries, encoding="utf-8")
    (work / "logs" / "error.log").write_text("2024-05-02 09:14:03 ERROR boom\n", encoding="utf-8")
    canary = isolated_dirs / "canary.txt"  # outside the project the shell works in
    canary.write_text("untouched\n", encoding="utf-8")
    shell = start(work, started)
    send_line(shell, "ls logs")
    shell.expect_exact("app.log")
    shell.expect_exact(PROMPT)
    send_line(shell, "show the 3 most recent lines of app.log")

    offered: list[tuple[str, bool]] = []  # each command asked about, and whether it has a problem

    def answer(shown: list[str]) -> str:
        # The command asked about is the last one shown; yes to the first that reads the log
        # and has no problem.
        command, notes = _OFFERED.findall(shown[-1])[-1]
        offered.append((command.strip(), "problem:" in notes))
        ready = [c for c, problem in offered if "logs/app.log" in c and not problem]
        return "y" if ready == [offered[-1][0]] and not offered[-1][1] else "n"

    shown = model_turn(shell, answer)
    assert quit_shell(shell) == 0
    assert offered, f"the model suggested no command; the terminal showed: {shown!r}"
    assert any("logs/app.log" in command for command, _ in offered), (offered, shown)
    for command, problem in offered:  # a command naming the file where it is not says so
        assert problem or not re.search(r"(?<![\w/.])app\.log", command), (command, shown)
    ran = [r for r in session_records("exec") if r["source"] == "suggested"]
    assert ran and ran[0]["exit_code"] == 0, (ran, shown)
    assert "entry number 6" in "".join(shown[1:]), shown
    assert canary.read_text(encoding="utf-8") == "untouched\n"
    assert (work / "logs" / "app.log").read_text(encoding="utf-8") == entries
