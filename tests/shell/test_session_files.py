"""Files a reply of ``ShellSession`` proposes: shown as a diff, written only after the user's
yes (``Question("file")``), never offered as commands, never written outside the shell's
directory."""

from __future__ import annotations

from pathlib import Path

from sessionutil import Front, open_shell, said

from conch.execute.checked import Answer
from conch.shell.diffs import FILE_PROMPT
from conch.shell.events import CommandShown, FileShown, ShellEvent
from conch.shell.sessions import SavedSession

NEW_FILE = "Here it is:\nFILE: notes.txt\n```text\nhello\n```\n"


def shown_files(events: list[ShellEvent]) -> list[FileShown]:
    return [e for e in events if isinstance(e, FileShown)]


def test_the_system_prompt_says_how_to_propose_a_file(tmp_path: Path) -> None:
    with open_shell(tmp_path, "Fine.") as shell:
        shell.line("> hello?")
        assert FILE_PROMPT in shell.provider.sent[0].messages[0].content
    off = {"shell": {"propose_files": False}}
    with open_shell(tmp_path, "Fine.", sections=off) as shell:
        shell.line("> hello?")
        assert FILE_PROMPT not in shell.provider.sent[0].messages[0].content


def test_a_proposed_file_is_shown_as_a_diff_and_written_after_yes(tmp_path: Path) -> None:
    with open_shell(tmp_path, NEW_FILE, front=Front([Answer.run()])) as shell:
        events = shell.line("> write me a notes file")
        (shown,) = shown_files(events)
        assert shown.change.new and shown.change.diff.startswith("--- /dev/null\n+++ b/notes.txt")
        (question,) = shell.front.asked
        assert (question.kind, question.command, question.change) == (
            "file",
            "notes.txt",
            shown.change,
        )
        assert (shell.work / "notes.txt").read_text(encoding="utf-8") == "hello\n"
        assert "wrote notes.txt: new file, 1 line" in said(events)
        saved = SavedSession.last(shell.state_dir)
        assert saved is not None
        files = [r for r in saved.records() if r["type"] == "file"]
        assert [(r["path"], r["written"]) for r in files] == [("notes.txt", True)]


def test_no_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    reply = "FILE: app.py\n```python\nprint('new')\n```\n"
    with open_shell(tmp_path, reply) as shell:
        (shell.work / "app.py").write_text("print('old')\n", encoding="utf-8")
        events = shell.line("> change the greeting in app.py")
        (shown,) = shown_files(events)
        assert "-print('old')\n+print('new')\n" in shown.change.diff
        assert (shown.change.added, shown.change.removed) == (1, 1)
        assert "app.py not written" in said(events)
        assert (shell.work / "app.py").read_text(encoding="utf-8") == "print('old')\n"


def test_a_bash_file_is_not_also_offered_as_a_command(tmp_path: Path) -> None:
    reply = "FILE: build.sh\n```bash\ntouch built-by-script\n```\n"
    with open_shell(tmp_path, reply, front=Front([Answer.run()])) as shell:
        events = shell.line("> write a build script")
        assert not [e for e in events if isinstance(e, CommandShown)]
        assert [q.kind for q in shell.front.asked] == ["file"]
        assert (shell.work / "build.sh").exists()
        assert not (shell.work / "built-by-script").exists()


def test_a_file_after_a_suggested_command_is_kept_and_offered_first(tmp_path: Path) -> None:
    reply = "CMD: python3 app.py\nFILE: app.py\n```python\nprint(1)\n```\n"
    with open_shell(tmp_path, reply, front=Front([Answer.abort(), Answer.abort()])) as shell:
        events = shell.line("> make a script and run it")
        assert "```python\nprint(1)\n```" in shell.session.context.turns[-1].content
        assert [q.kind for q in shell.front.asked] == ["file", "suggestion"]
        (command,) = [e for e in events if isinstance(e, CommandShown)]
        assert command.command == "python3 app.py"


def test_a_file_outside_the_shell_s_directory_is_never_written_or_asked_about(
    tmp_path: Path,
) -> None:
    reply = "FILE: ../escape.txt\n```text\nout\n```\n"
    with open_shell(tmp_path, reply) as shell:
        events = shell.line("> write a file next door")
        (shown,) = shown_files(events)
        assert shown.change.problem == "outside the shell's directory; not written"
        assert shell.front.asked == []
        assert "not written: ../escape.txt: outside the shell's directory; not written" in said(
            events
        )
        assert not (tmp_path / "escape.txt").exists()


def test_with_propose_files_off_a_file_block_is_only_text(tmp_path: Path) -> None:
    off = {"shell": {"propose_files": False}}
    with open_shell(tmp_path, NEW_FILE, sections=off) as shell:
        events = shell.line("> write me a notes file")
        assert shown_files(events) == [] and shell.front.asked == []
        assert not (shell.work / "notes.txt").exists()
