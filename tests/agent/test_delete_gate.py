"""A file tool's delete is decided as the ``rm`` that would do it: the policy, the execution
mode and the user, as the bash tool's commands are. In every mode but full-autonomous the
user is asked (or, with no one to ask, nothing is deleted); a delete the user refused is not
asked about again."""

from __future__ import annotations

from pathlib import Path

import pytest
from agentutil import Approver, call

from conch.agent.builtin import ToolOptions, default_tools
from conch.execute import AUDIT_LOG, Answer
from conch.policy import ExecutionMode
from conch.tools.tool import ToolRegistry


@pytest.fixture
def work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    (work / "victim").mkdir(parents=True)
    (work / "victim" / "keep.txt").write_text("precious\n", encoding="utf-8")
    (work / "old.log").write_text("x\n", encoding="utf-8")
    return work


def _tools(
    work: Path,
    mode: ExecutionMode,
    approver: Approver | None = None,
    fs_mode: str = "split",
) -> ToolRegistry:
    options = ToolOptions(
        root=work,
        mode=mode,
        confirm=approver,
        fs_mode=fs_mode,  # type: ignore[arg-type]
        state_dir=work.parent / "state",
        evaluate=False,
    )
    return ToolRegistry(default_tools(options))


def test_restricted_mode_asks_before_a_recursive_delete_and_a_no_keeps_the_files(
    work: Path,
) -> None:
    approver = Approver(Answer.abort())
    result = _tools(work, ExecutionMode.RESTRICTED, approver).call(
        call("fs_delete", path="victim", recursive=True)
    )
    assert approver.asked == ["rm -r -- victim"]
    assert result.is_error and "the user refused it; nothing was done" in result.content
    assert (work / "victim" / "keep.txt").read_text(encoding="utf-8") == "precious\n"


def test_a_refused_delete_is_refused_again_without_asking(work: Path) -> None:
    approver = Approver(Answer.abort())
    tools = _tools(work, ExecutionMode.RESTRICTED, approver)
    tools.call(call("fs_delete", path="old.log"))
    again = tools.call(call("fs_delete", path="old.log"))
    assert approver.asked == ["rm -- old.log"]
    assert again.is_error and "already refused" in again.content
    assert (work / "old.log").exists()


def test_a_yes_deletes(work: Path) -> None:
    approver = Approver(Answer.run())
    result = _tools(work, ExecutionMode.RESTRICTED, approver).call(
        call("fs_delete", path="victim", recursive=True)
    )
    assert not result.is_error, result.content
    assert not (work / "victim").exists()


def test_with_no_one_to_ask_nothing_is_deleted(work: Path) -> None:
    result = _tools(work, ExecutionMode.RESTRICTED).call(call("fs_delete", path="old.log"))
    assert result.is_error and "no one can be asked" in result.content
    assert (work / "old.log").exists()


def test_an_edit_of_the_question_counts_as_a_no(work: Path) -> None:
    approver = Approver(Answer.edit("rm -- other.log"))
    result = _tools(work, ExecutionMode.INTERACTIVE, approver).call(
        call("fs_delete", path="old.log")
    )
    assert result.is_error and (work / "old.log").exists()


def test_full_autonomous_mode_deletes_without_asking(work: Path) -> None:
    approver = Approver()
    result = _tools(work, ExecutionMode.FULL, approver).call(
        call("fs_delete", path="victim", recursive=True)
    )
    assert not result.is_error, result.content
    assert approver.asked == [] and not (work / "victim").exists()


def test_the_batch_tool_s_delete_is_asked_about_too(work: Path) -> None:
    approver = Approver(Answer.abort())
    result = _tools(work, ExecutionMode.RESTRICTED, approver, fs_mode="unified").call(
        call("fs", action="ops", ops=[{"action": "delete", "path": "victim", "recursive": True}])
    )
    assert approver.asked == ["rm -r -- victim"]
    assert "refused" in result.content
    assert (work / "victim" / "keep.txt").exists()


def test_a_missing_file_or_a_plain_directory_is_an_error_before_any_question(
    work: Path,
) -> None:
    approver = Approver()
    tools = _tools(work, ExecutionMode.RESTRICTED, approver)
    missing = tools.call(call("fs_delete", path="nope.txt"))
    directory = tools.call(call("fs_delete", path="victim"))
    assert approver.asked == []
    assert missing.is_error and "no such file" in missing.content
    assert directory.is_error and "set recursive to true" in directory.content


def test_a_path_with_spaces_is_quoted_in_the_question(work: Path) -> None:
    (work / "my notes.txt").write_text("x\n", encoding="utf-8")
    approver = Approver(Answer.run())
    _tools(work, ExecutionMode.RESTRICTED, approver).call(call("fs_delete", path="my notes.txt"))
    assert approver.asked == ["rm -- 'my notes.txt'"]
    assert not (work / "my notes.txt").exists()


def test_every_refused_delete_leaves_an_audit_line(work: Path) -> None:
    tools = _tools(work, ExecutionMode.RESTRICTED, Approver(Answer.abort(), Answer.abort()))
    tools.call(call("fs_delete", path="old.log"))  # the user says no
    tools.call(call("fs_delete", path="old.log"))  # refused earlier: not asked again
    _tools(work, ExecutionMode.RESTRICTED).call(call("fs_delete", path="victim", recursive=True))
    lines = (work.parent / "state" / AUDIT_LOG).read_text(encoding="utf-8").splitlines()
    assert [line.split(" | ", 2)[2] for line in lines] == [
        "rm -- old.log | refused:declined | 0.000s",
        "rm -- old.log | refused:declined | 0.000s",
        "rm -r -- victim | refused:unasked | 0.000s",  # no one to ask
    ]
    assert (work / "old.log").exists() and (work / "victim" / "keep.txt").exists()
