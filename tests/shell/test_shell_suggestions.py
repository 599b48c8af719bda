"""``conch shell`` in this process with a scripted model: a reply's made-up command output is
never shown, and a suggestion with a wrong path is caught before it is offered (corrected by
the model, or shown with its problem and always asked about). The lines are forced to the
model (``> ``), so each is a conversation whose reply suggests the command; a line that
asks for a command unforced goes to the one-shot pipeline instead (tests/shell/test_shell_session.py).

Commands that run do so in the test's work directory under a temporary HOME; a canary file
outside that directory must come through untouched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cliutil import CliResult, capture, write_config
from conch.config.paths import Paths
from conch.shell.sessions import SavedSession

Conch = Callable[..., CliResult]

APP_LOG = "'app.log' does not exist in the current directory (there is logs/app.log)"
INVENTED = (
    "CMD: ls logs\nexit code: 0\napp.log  invented-listing.log\n\n"
    "CMD: tail -n 3 logs/app.log\nexit code: 0\ninvented line one\ninvented line two"
)


@pytest.fixture
def work(tmp_path: Path) -> Iterator[Path]:
    """The project (the directory the shell starts in, as the ``conch`` fixture runs it),
    with ``logs/app.log``; a canary outside it, checked untouched at the end."""
    work = tmp_path / "work"
    (work / "logs").mkdir(parents=True)
    lines = "".join(f"2024-05-02 line {n}\n" for n in range(1, 6))
    (work / "logs" / "app.log").write_text(lines, encoding="utf-8")
    canary = tmp_path / "canary.txt"
    canary.write_text("untouched\n", encoding="utf-8")
    yield work
    assert canary.read_text(encoding="utf-8") == "untouched\n"
    assert (work / "logs" / "app.log").read_text(encoding="utf-8") == lines


def executed() -> list[tuple[str, str]]:
    session = SavedSession.last(Paths.default().state_dir)
    assert session is not None
    return [(r["command"], r["source"]) for r in session.records() if r["type"] == "exec"]


def test_made_up_command_output_is_never_shown(
    conch: Conch, isolated_dirs: Path, work: Path
) -> None:
    capture(isolated_dirs, "shell-invented", INVENTED)
    result = conch(
        "shell", stdin="ls logs\n> show the 3 most recent lines of app.log\n", answers="n\n"
    )
    assert result.code == 0, result.err
    shown = result.out + result.err
    for invented in ("invented-listing.log", "invented line one", "invented line two"):
        assert invented not in shown
    assert "exit code: 0" not in shown
    assert "CMD: tail -n 3 logs/app.log" in result.out
    assert "left out 6 lines the model made up as command output (nothing ran)" in result.err
    assert "the model suggests:\n  tail -n 3 logs/app.log\n  risk: read-only\n" in result.err
    assert "  ls logs\n" not in result.err  # the replay of what ran is not offered again
    [_, reply] = [r for r in SavedSession.last(Paths.default().state_dir).turns()]
    assert reply.content == "CMD: tail -n 3 logs/app.log"


def test_a_wrong_path_is_caught_and_the_model_s_correction_is_offered_and_runs(
    conch: Conch, isolated_dirs: Path, work: Path
) -> None:
    provider = capture(
        isolated_dirs, "shell-wrong-path", "CMD: tail -n 3 app.log", "tail -n 3 logs/app.log"
    )
    result = conch("shell", stdin="> show the 3 most recent lines of app.log\n", answers="y\n")
    assert result.code == 0, result.err
    assert f"  tail -n 3 app.log\n  risk: read-only\n  - problem: {APP_LOG}\n" in result.err
    assert "conch: asking the model to correct it" in result.err
    assert "the model's correction:\n  tail -n 3 logs/app.log\n  risk: read-only\n" in result.err
    assert result.err.count("Run it?") == 1  # the wrong command is never offered
    assert "2024-05-02 line 5" in result.out and "2024-05-02 line 2" not in result.out
    assert executed() == [("tail -n 3 logs/app.log", "suggested")]
    repair = provider.sent[1].messages
    assert repair[-2].content == "CMD: tail -n 3 app.log"
    assert APP_LOG in repair[-1].content


def test_a_correction_that_is_no_better_leaves_the_suggestion_shown_with_its_problem(
    conch: Conch, isolated_dirs: Path, work: Path
) -> None:
    capture(isolated_dirs, "shell-no-better", "CMD: cat notes.txt", "cat notes.txt")
    write_config(isolated_dirs, "ai:\n  provider: shell-no-better\nshell:\n  confirm_cmd: false\n")
    result = conch("shell", stdin="> show my notes\n", answers="n\n")
    assert result.code == 0, result.err
    problem = "'notes.txt' does not exist in the current directory"
    assert f"  cat notes.txt\n  risk: read-only\n  - problem: {problem}\n" in result.err
    assert "conch: the model suggests the same command again" in result.err
    # confirm_cmd is off, but a command with a problem is never run without a question.
    assert "Run it? [y]es, [e]dit, [n]o [n] " in result.err
    assert executed() == []


def test_without_repair_a_wrong_path_is_shown_and_asked_about(
    conch: Conch, isolated_dirs: Path, work: Path
) -> None:
    provider = capture(isolated_dirs, "shell-no-repair", "CMD: tail -n 3 app.log")
    write_config(
        isolated_dirs,
        "ai:\n  provider: shell-no-repair\ngeneration:\n  repair: false\n"
        "shell:\n  confirm_cmd: false\n  memory: false\n",
    )
    result = conch("shell", stdin="> show the end of app.log\n", answers="n\n")
    assert result.code == 0, result.err
    assert f"  - problem: {APP_LOG}\n" in result.err
    assert "correct it" not in result.err
    assert "Run it?" in result.err
    assert len(provider.sent) == 1
    assert executed() == []


def test_a_right_suggestion_runs_without_a_question_when_confirm_cmd_is_off(
    conch: Conch, isolated_dirs: Path, work: Path
) -> None:
    capture(isolated_dirs, "shell-right", "CMD: tail -n 1 logs/app.log")
    write_config(isolated_dirs, "ai:\n  provider: shell-right\nshell:\n  confirm_cmd: false\n")
    result = conch("shell", stdin="> show the last line of app.log\n")
    assert result.code == 0, result.err
    assert "problem:" not in result.err and "Run it?" not in result.err
    assert "2024-05-02 line 5" in result.out
    assert executed() == [("tail -n 1 logs/app.log", "suggested")]
