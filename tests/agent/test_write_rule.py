"""A file tool's write follows the one rule, as a command that writes would: asked about in
interactive and restricted-autonomous modes (refused when no one can be asked), run in
full-autonomous mode; the file is untouched whenever it was not allowed."""

from __future__ import annotations

from pathlib import Path

import pytest

from conch.agent.builtin import ToolOptions, default_tools
from conch.execute.checked import Answer
from conch.policy import ExecutionMode, Verdict
from conch.policy.confirm import Confirmation
from conch.tools import Tool


def _write_tool(
    root: Path, mode: ExecutionMode, answer: Answer | None
) -> tuple[Tool, list[tuple[str, Confirmation]]]:
    asked: list[tuple[str, Confirmation]] = []

    def confirm(command: str, verdict: Verdict, wanted: Confirmation) -> Answer:
        asked.append((command, wanted))
        assert answer is not None
        return answer

    options = ToolOptions(
        root=root, evaluate=False, mode=mode, confirm=None if answer is None else confirm
    )
    tools = {tool.name: tool for tool in default_tools(options)}
    return tools["fs_write"], asked


@pytest.mark.parametrize("exists", [True, False], ids=["replace", "create"])
def test_no_one_to_ask_means_no_write_in_restricted_mode(tmp_path: Path, exists: bool) -> None:
    target = tmp_path / "notes.txt"
    if exists:
        target.write_text("keep me\n", encoding="utf-8")
    tool, _ = _write_tool(tmp_path, ExecutionMode.RESTRICTED, None)
    with pytest.raises(Exception, match="no one can be asked"):
        tool.function(path="notes.txt", content="")
    if exists:
        assert target.read_text(encoding="utf-8") == "keep me\n"
    else:
        assert not target.exists()


def test_the_user_is_asked_and_no_keeps_the_file(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("keep me\n", encoding="utf-8")
    tool, asked = _write_tool(tmp_path, ExecutionMode.RESTRICTED, Answer.abort())
    with pytest.raises(Exception, match="refused"):
        tool.function(path="notes.txt", content="")
    assert target.read_text(encoding="utf-8") == "keep me\n"
    ((subject, wanted),) = asked
    assert subject == "fs_write notes.txt" and wanted.ask and wanted.reasons


def test_yes_writes_and_full_autonomous_writes_without_asking(tmp_path: Path) -> None:
    tool, asked = _write_tool(tmp_path, ExecutionMode.RESTRICTED, Answer.run())
    tool.function(path="a.txt", content="one\n")
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "one\n" and len(asked) == 1

    tool, asked = _write_tool(tmp_path, ExecutionMode.FULL, Answer.abort())
    tool.function(path="a.txt", content="two\n")
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "two\n" and asked == []


def test_moves_and_new_directories_follow_the_rule(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n", encoding="utf-8")
    asked: list[str] = []

    def no(command: str, verdict: Verdict, wanted: Confirmation) -> Answer:
        asked.append(command)
        return Answer.abort()

    options = ToolOptions(root=tmp_path, evaluate=False, mode=ExecutionMode.RESTRICTED, confirm=no)
    tools = {tool.name: tool for tool in default_tools(options)}
    with pytest.raises(Exception, match="refused"):
        tools["fs_move"].function(path="a.txt", destination="b.txt")
    with pytest.raises(Exception, match="refused"):
        tools["fs_mkdir"].function(path="new")
    assert (tmp_path / "a.txt").exists() and not (tmp_path / "b.txt").exists()
    assert not (tmp_path / "new").exists()
    assert asked[0].startswith("mv ") and asked[1] == "fs_write new"


def test_always_for_this_session_allows_the_like_of_it_without_a_question(tmp_path: Path) -> None:
    from conch.agent.bash import Shell

    asked: list[Confirmation] = []

    def always(command: str, verdict: Verdict, wanted: Confirmation) -> Answer:
        asked.append(wanted)
        assert wanted.always is not None
        return Answer.run_always(wanted.always)

    work = tmp_path / "work"  # a workspace that does not hold the home directory
    work.mkdir()
    shell = Shell(cwd=work, mode=ExecutionMode.RESTRICTED, confirm=always)
    shell.run("touch one.txt")
    shell.run("touch two.txt")  # allowed by the answer to the first: no question
    assert [w.always for w in asked] == ["touch*"]
    assert (work / "one.txt").exists() and (work / "two.txt").exists()
    # It stays within what was allowed: another program is asked about.
    shell.confirm = None
    with pytest.raises(Exception, match="no one can be asked"):
        shell.run("mkdir new")


def test_the_question_about_a_write_shows_the_change(tmp_path: Path) -> None:
    (tmp_path / "settings.ini").write_text("[server]\nport = 8080\n", encoding="utf-8")
    tool, asked = _write_tool(tmp_path, ExecutionMode.RESTRICTED, Answer.run())
    tool.function(path="settings.ini", content="[server]\nport = 9090\n")
    ((_, wanted),) = asked
    assert "-port = 8080" in wanted.detail and "+port = 9090" in wanted.detail
