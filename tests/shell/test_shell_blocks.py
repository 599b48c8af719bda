"""A command of a shell code block that spans lines: a here-document, a loop, an ``if``, an
open quote. ``suggested_commands`` offers it as one command, as written, so its body is never
offered line by line (and ``cat > notes.txt <<'EOF'`` never runs without its text).

Commands that run do so in the test's work directory under a temporary HOME; a canary file
outside it must come through untouched.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from sessionutil import (
    Front,
    canary,  # noqa: F401 (autouse: checked after every test)
    open_shell,
)

from conch.execute.checked import Answer
from conch.shell.context import COMMAND_LINES, suggested_commands
from conch.shell.events import CommandRan, CommandShown

KNOWN = frozenset({"cat", "echo", "ls", "python3", "wc", "make"})

HEREDOC = "cat > notes.txt <<'EOF'\nfirst line\n\n# not a comment here\nEOF"


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        (f"```bash\n{HEREDOC}\nwc -l notes.txt\n```", [HEREDOC, "wc -l notes.txt"]),
        (
            '```sh\nfor f in *.txt; do\n  wc -l "$f"\ndone\nls\n```',
            ['for f in *.txt; do\n  wc -l "$f"\ndone', "ls"],
        ),
        ("```bash\nif [ -f a ]; then\n  echo yes\nfi\n```", ["if [ -f a ]; then\n  echo yes\nfi"]),
        ("```bash\necho 'two\nlines'\n```", ["echo 'two\nlines'"]),
        # an unlabelled block counts when its commands are commands, the body included
        (f"```\n{HEREDOC}\n```", [HEREDOC]),
        # indented as a whole (inside a list), kept as written relative to the block
        (
            "```bash\n    python3 - <<'EOF'\n    if True:\n        print(1)\n    EOF\n```",
            ["python3 - <<'EOF'\nif True:\n    print(1)\nEOF"],
        ),
    ],
)
def test_a_command_that_spans_lines_is_one_suggestion_as_written(
    block: str, expected: list[str]
) -> None:
    assert suggested_commands(f"Like this:\n{block}\n", KNOWN) == expected


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        # backslash continuations are joined with a space, as before
        ("```bash\nmake \\\n  -j4 \\\n  all\n```", ["make -j4 all"]),
        # a line that never closes stays a line of its own, and the rest are read on
        ("```bash\necho (\nls\nwc -l a\n```", ["echo (", "ls", "wc -l a"]),
        # another shell's syntax (fish) is read line by line
        ("```fish\nfor f in *\n  echo $f\nend\n```", ["for f in *", "echo $f", "end"]),
        # a transcript keeps its prompt lines only
        ("```console\n$ ls\na.txt\n$ wc -l a.txt\n1 a.txt\n```", ["ls", "wc -l a.txt"]),
    ],
)
def test_lines_that_are_whole_stay_one_command_each(block: str, expected: list[str]) -> None:
    assert suggested_commands(block, KNOWN) == expected


def test_a_here_document_past_the_bound_is_not_joined() -> None:
    body = "\n".join(f"line {n}" for n in range(COMMAND_LINES + 5))
    commands = suggested_commands(f"```bash\ncat <<'EOF'\n{body}\nEOF\n```", KNOWN)
    assert commands[0] == "cat <<'EOF'"


def test_a_here_document_is_offered_once_and_writes_its_text_after_yes(tmp_path: Path) -> None:
    reply = f"Write the notes:\n```bash\n{HEREDOC}\n```\n"
    sections = {"shell": {"append_history": True}}
    with open_shell(tmp_path, reply, front=Front([Answer.run()]), sections=sections) as shell:
        events = shell.line("> make a notes file")
        assert [e.command for e in events if isinstance(e, CommandShown)] == [HEREDOC]
        assert [q.command for q in shell.front.asked] == [HEREDOC]
        assert CommandRan(HEREDOC, 0, "suggested") in events
        notes = shell.work / "notes.txt"
        assert notes.read_text(encoding="utf-8") == "first line\n\n# not a comment here\n"
        # a history file holds one command a line: a command that spans lines is left out
        assert not (tmp_path / "home" / ".bash_history").exists()


def test_the_lines_of_a_command_that_spans_lines_are_drawn_under_its_first(
    tmp_path: Path,
) -> None:
    from conch.cli.environment import Environment
    from conch.cli.shellview import ShellView
    from conch.config.settings import LoadedSettings, Settings
    from conch.shell.turns import judge

    err = io.StringIO()
    env = Environment(
        stdout=io.StringIO(),
        stderr=err,
        stdin_isatty=False,
        stdout_isatty=False,
        stderr_isatty=False,
        environ={},
        cwd=tmp_path,
    )
    loaded = LoadedSettings(Settings(), tmp_path / "config.yaml", False)
    view = ShellView(env, ["shell"], loaded)
    view.render(CommandShown("the model suggests:", HEREDOC, judge(HEREDOC, tmp_path)))
    drawn = err.getvalue()
    assert "  cat > notes.txt <<'EOF'\n  first line\n  \n  # not a comment here\n  EOF\n" in drawn
    assert "  risk: writes" in drawn
