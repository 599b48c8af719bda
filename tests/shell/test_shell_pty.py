"""``conch shell`` on a real pseudo-terminal, as a user at a keyboard drives it: typed
commands and their output reaching the model, ``cd``, a full-screen program, Ctrl+C, a
suggested command edited and run, a destructive step of autonomous mode, meta commands.

Typed lines that print a marker spell it with empty quotes (``echo made""-it``), so the
echo of the typed line never matches the marker the command prints.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from cliutil import plain_terminal, script, spawn_conch, step, write_config
from conch.config.paths import Paths
from conch.shell.sessions import SavedSession

PROMPT = "[conch:scripted]$"  # the space after it is drawn as a cursor move
START_S = 10  # a new process: imports and the user's aliases
STEP_S = 5


@pytest.fixture(autouse=True)
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    plain_terminal(monkeypatch)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def start(work: Path) -> pexpect.spawn:
    """``conch shell`` in ``work``, at its first prompt."""
    child = spawn_conch(work, "shell")
    child.timeout = STEP_S
    child.expect_exact(PROMPT, timeout=START_S)
    return child


@pytest.fixture
def started() -> Iterator[list[pexpect.spawn]]:
    """The shells a test starts, closed at its end however it ends."""
    children: list[pexpect.spawn] = []
    yield children
    for child in children:
        child.close(force=True)


def finish(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF)
    child.close()
    status: int = child.exitstatus
    return status


def test_a_typed_command_s_output_reaches_the_next_model_turn(
    isolated_dirs: Path, work: Path
) -> None:
    script(isolated_dirs, "It printed a marker.")
    child = spawn_conch(work, "shell")
    child.timeout = STEP_S
    child.expect_exact(PROMPT, timeout=START_S)
    child.send('echo hello""-marker\r')
    child.expect_exact("hello-marker\r\n")
    child.expect_exact(PROMPT)
    child.send("what did that print\r")
    child.expect_exact("It printed a marker.")
    child.expect_exact(PROMPT)
    child.send(":quit\r")
    assert finish(child) == 0
    session = SavedSession.last(Paths.default().state_dir)
    assert session is not None
    asked = session.turns()[0].content
    assert asked.startswith('[exec output]\n$ echo hello""-marker\nexit code: 0\nhello-marker')
    assert asked.endswith("\n\nwhat did that print")


def test_cd_persists_and_the_prompt_follows(
    isolated_dirs: Path, work: Path, started: list[pexpect.spawn]
) -> None:
    write_config(isolated_dirs, "ai:\n  provider: scripted\n")
    (work / "sub").mkdir()
    shell = start(work)
    started.append(shell)
    shell.send("cd sub\r")
    shell.expect_exact(f"sub {PROMPT}")
    shell.send("pwd\r")
    shell.expect_exact(f"{work}/sub\r\n")
    shell.expect_exact(f"sub {PROMPT}")
    shell.send("cd -\r")
    shell.expect_exact(f"{work}\r\n")
    shell.expect_exact(f"work {PROMPT}")


def test_less_runs_full_screen_and_q_returns_to_the_prompt(
    isolated_dirs: Path, work: Path, started: list[pexpect.spawn]
) -> None:
    write_config(isolated_dirs, "ai:\n  provider: scripted\n")
    (work / "notes.txt").write_text("first line\nsecond line\n", encoding="utf-8")
    shell = start(work)
    started.append(shell)
    shell.send("less notes.txt\r")
    shell.expect_exact("second line")
    shell.expect_exact("(END)")
    shell.send("q")
    shell.expect_exact(PROMPT)
    shell.send('echo still""-alive\r')
    shell.expect_exact("still-alive\r\n")
    shell.expect_exact(PROMPT)


def test_tab_completes_a_path_and_ctrl_r_finds_an_earlier_line(
    isolated_dirs: Path, work: Path, started: list[pexpect.spawn]
) -> None:
    write_config(isolated_dirs, "ai:\n  provider: scripted\n")
    (work / "greeting-file.txt").write_text("hello from the file\n", encoding="utf-8")
    shell = start(work)
    started.append(shell)
    shell.send("cat greet\t")
    shell.expect_exact("ing-file.txt")  # drawn after what was typed
    shell.send("\r")
    shell.expect_exact("hello from the file\r\n")
    shell.expect_exact(PROMPT)
    shell.send('echo first""-line\r')
    shell.expect_exact("first-line\r\n")
    shell.expect_exact(PROMPT)
    shell.send("\x12greet")  # Ctrl+R, then part of the earlier line
    shell.expect_exact("(reverse-i-search)`greet': cat ")
    shell.send("\r")  # the found line into the input line
    shell.expect_exact("$ cat greeting-file.txt")
    shell.send("\r")
    shell.expect_exact("hello from the file\r\n")
    shell.expect_exact(PROMPT)


def test_ctrl_c_kills_a_running_command_and_the_prompt_comes_back(
    isolated_dirs: Path, work: Path, started: list[pexpect.spawn]
) -> None:
    write_config(isolated_dirs, "ai:\n  provider: scripted\n")
    shell = start(work)
    started.append(shell)
    shell.send('echo sleep""ing; sleep 100\r')
    shell.expect_exact("sleeping\r\n")
    shell.sendintr()
    shell.expect_exact(PROMPT)
    shell.send('echo back""-again\r')
    shell.expect_exact("back-again\r\n")
    shell.expect_exact(PROMPT)  # keys sent while a command runs are the command's
    shell.send(":q\r")
    assert finish(shell) == 0


def test_a_suggested_command_is_edited_confirmed_and_run(
    isolated_dirs: Path, work: Path, started: list[pexpect.spawn]
) -> None:
    script(isolated_dirs, "echo from-model")
    shell = start(work)
    started.append(shell)
    shell.send("say something for me\r")  # asks for a command: the one-shot pipeline's
    shell.expect_exact("read-only")
    shell.expect_exact("Run it? [y]es, [e]dit, [n]o [n] ")
    shell.send("e\r")
    shell.expect_exact(f"{PROMPT} echo from-model")  # the input line, pre-filled
    shell.send("-edited\r")
    shell.expect_exact("from-model-edited\r\n")
    shell.expect_exact(PROMPT)
    shell.send(":history\r")
    shell.expect_exact("$ echo from-model-edited  [exit 0]")
    shell.expect_exact(PROMPT)


def test_a_destructive_step_of_auto_halts_for_a_typed_yes(
    isolated_dirs: Path, work: Path, started: list[pexpect.spawn]
) -> None:
    script(isolated_dirs, step("bash", command="rm -r victim"), "I left it alone.")
    (work / "victim").mkdir()
    shell = start(work)
    started.append(shell)
    shell.send(":auto clean up the victim directory\r")
    shell.expect_exact("HALT: the agent wants to run a destructive command:")
    shell.expect_exact("rm -r victim")
    shell.expect_exact("Type yes to run it; anything else refuses it: ")
    shell.send("y\r")
    shell.expect_exact("I left it alone.")
    shell.expect_exact(PROMPT)
    assert (work / "victim").is_dir()


def test_an_unknown_model_name_is_one_line_and_quit_exits_0(
    isolated_dirs: Path, work: Path
) -> None:
    write_config(
        isolated_dirs,
        "ai:\n  provider: scripted\nmodels:\n  fast:\n    provider: scripted\n",
    )
    child = spawn_conch(work, "shell")
    child.timeout = STEP_S
    child.expect_exact(PROMPT, timeout=START_S)
    child.send(":model nope\r")
    child.expect_exact("conch: :model nope: no such model; known models: fast\r\n")
    child.expect_exact(PROMPT)
    child.send(":model fast\r")
    child.expect_exact("[conch:fast]$")
    child.send(":quit\r")
    assert finish(child) == 0


def test_alt_enter_sends_a_command_line_to_the_model(
    isolated_dirs: Path, work: Path, started: list[pexpect.spawn]
) -> None:
    script(isolated_dirs, "That lists files.")
    shell = start(work)
    started.append(shell)
    shell.send("ls -la\x1b\r")
    shell.expect_exact("That lists files.")
    shell.expect_exact(PROMPT)
    shell.sendeof()
    assert finish(shell) == 0
    session = SavedSession.last(Paths.default().state_dir)
    assert session is not None
    # Ctrl+D remembers the session (the scripted model has no reply left: a digest).
    assert [r["type"] for r in session.records()] == ["start", "turn", "turn", "memory"]


def test_made_up_output_never_reaches_the_screen_and_a_wrong_path_is_not_offered(
    isolated_dirs: Path, work: Path, started: list[pexpect.spawn]
) -> None:
    invented = (
        "Let me look.\nCMD: ls logs\nexit code: 0\napp.log  made-up-listing.log\n\n"
        "CMD: tail -n 3 app.log\nexit code: 0\nmade-up line one\nmade-up line two\n\n"
        "This shows the last three lines."
    )
    script(isolated_dirs, invented, "tail -n 3 logs/app.log")
    (work / "logs").mkdir()
    lines = "".join(f"log entry {n}\n" for n in range(1, 6))
    (work / "logs" / "app.log").write_text(lines, encoding="utf-8")
    canary = work.parent / "canary.txt"  # outside the directory the shell works in
    canary.write_text("untouched\n", encoding="utf-8")
    shell = start(work)
    started.append(shell)
    shell.send("ls logs\r")
    shell.expect_exact("app.log\r\n")
    shell.expect_exact(PROMPT)
    shell.send("> show the 3 most recent lines of app.log\r")  # a conversation
    shell.expect_exact("Run it? [y]es, [e]dit, [n]o [n] ")
    screen = shell.before
    for made_up in ("made-up-listing.log", "made-up line one", "made-up line two", "exit code"):
        assert made_up not in screen
    assert "Let me look." in screen and "This shows the last three lines." in screen
    assert "left out 6 lines the model made up as command output" in screen
    assert "problem: 'app.log' does not exist in the current directory" in screen
    assert "(there is logs/app.log)" in screen
    offered = screen.split("the model's correction:", 1)[1]
    assert "tail -n 3 logs/app.log" in offered  # the wrong command is never asked about
    shell.send("y\r")
    shell.expect_exact("log entry 5\r\n")
    shell.expect_exact(PROMPT)
    assert "log entry 2" not in shell.before
    shell.send(":quit\r")
    assert finish(shell) == 0
    assert canary.read_text(encoding="utf-8") == "untouched\n"
    assert (work / "logs" / "app.log").read_text(encoding="utf-8") == lines
    session = SavedSession.last(Paths.default().state_dir)
    assert session is not None
    ran = [(r["command"], r["source"]) for r in session.records() if r["type"] == "exec"]
    assert ran == [("ls logs", "typed"), ("tail -n 3 logs/app.log", "suggested")]
