"""``conch shell``'s front end without a terminal: a reply's code blocks coloured only on a
terminal without NO_COLOR, a proposed file drawn as a diff, and the question before writing
it."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from conch.cli.environment import Environment
from conch.cli.shellview import FILE_QUESTION, ShellView
from conch.config.settings import LoadedSettings, Settings
from conch.errors import NoOneToAsk
from conch.execute.checked import Choice
from conch.messages import TextDelta
from conch.policy import PolicyContext, assess
from conch.shell.diffs import Proposed, change_for
from conch.shell.events import FileShown, Question, TurnStarted

REPLY = "Like this:\n```python\nx = 1\n```\n"


def view(
    tmp_path: Path,
    *,
    tty: bool = True,
    environ: dict[str, str] | None = None,
    answers: str = "",
    shell: dict[str, object] | None = None,
    terminal: bool = True,
) -> tuple[ShellView, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    env = Environment(
        stdout=out,
        stderr=err,
        stdin_isatty=False,
        stdout_isatty=tty,
        stderr_isatty=False,
        environ={"TERM": "xterm-256color"} if environ is None else environ,
        cwd=tmp_path,
        terminal=io.StringIO(answers) if terminal else None,
        terminal_checked=not terminal,
    )
    settings = Settings.model_validate({"shell": shell or {}})
    loaded = LoadedSettings(settings, tmp_path / "config.yaml", False)
    return ShellView(env, ["shell"], loaded), out, err


def test_code_blocks_are_coloured_on_a_terminal(tmp_path: Path) -> None:
    shell, out, _ = view(tmp_path)
    shell.render(TextDelta(REPLY))
    text = out.getvalue()
    assert "\x1b[" in text and "Like this:\n```python\n" in text


@pytest.mark.parametrize(
    ("tty", "environ", "shell"),
    [
        (False, None, None),  # not a terminal
        (True, {"TERM": "xterm", "NO_COLOR": "1"}, None),
        (True, {"TERM": "dumb"}, None),
        (True, None, {"highlight": False}),
    ],
)
def test_code_blocks_stay_plain_otherwise(
    tmp_path: Path, tty: bool, environ: dict[str, str] | None, shell: dict[str, object] | None
) -> None:
    front, out, _ = view(tmp_path, tty=tty, environ=environ, shell=shell)
    front.render(TextDelta(REPLY))
    assert "```python\nx = 1\n```" in out.getvalue()
    assert "\x1b[" not in out.getvalue()


def test_a_proposed_file_is_drawn_as_a_diff_and_asked_about(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("print('old')\n", encoding="utf-8")
    change = change_for(Proposed("app.py", "print('new')\n"), tmp_path)
    shell, out, err = view(tmp_path, tty=False, answers="y\n")
    shell.render(FileShown(change))
    drawn = out.getvalue()
    assert drawn.startswith("the model proposes: app.py: +1 -1\n--- a/app.py\n+++ b/app.py\n")
    assert "-print('old')\n+print('new')\n" in drawn
    answer = shell.approve(Question("file", "app.py", change=change))
    assert answer.choice is Choice.RUN
    assert FILE_QUESTION in err.getvalue()
    shell, _, _ = view(tmp_path, tty=False, answers="\n")
    assert shell.approve(Question("file", "app.py", change=change)).choice is Choice.ABORT


def test_a_snippet_is_drawn_with_its_warning(tmp_path: Path) -> None:
    change = change_for(
        Proposed("new.py", "def f():\n    # ... rest of the file unchanged\n"), tmp_path
    )
    shell, out, _ = view(tmp_path, tty=False)
    shell.render(FileShown(change))
    assert "  - warning: it leaves text out" in out.getvalue()


def test_an_agent_s_reply_streams_as_it_is(tmp_path: Path) -> None:
    shell, out, _ = view(tmp_path)
    shell.render(TurnStarted("goal", "tidy up"))
    shell.render(TextDelta(REPLY))
    assert "```python\nx = 1\n```" in out.getvalue() and "\x1b[3" not in out.getvalue()


def test_a_halt_with_no_terminal_to_type_yes_on_is_not_asked(tmp_path: Path) -> None:
    # Raised, not answered no: the library audits the step as unasked, not as declined.
    shell, _, err = view(tmp_path, tty=False, terminal=False)
    question = Question("halt", "shutdown now", assess("shutdown now", PolicyContext()))
    with pytest.raises(NoOneToAsk):
        shell.approve(question)
    assert "HALT: the agent wants to run" in err.getvalue()
    assert "refused" not in err.getvalue()
