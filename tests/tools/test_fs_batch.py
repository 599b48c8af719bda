"""The unified ``fs`` tool: single actions, and batches with their caps and ordering rules."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from conch.messages import ToolResult
from conch.tools import Tool, fs_tools
from conch.tools.caps import BATCH_BODY_CLIP, BATCH_MAX_FILES, BATCH_MAX_OPS

Call = Callable[..., ToolResult]


@pytest.fixture
def call(sandbox: Path, caller: Callable[[Iterable[Tool]], Call]) -> Call:
    return caller(fs_tools(sandbox, "unified"))


def batch(call: Call, ops: list[dict[str, Any]], **extra: Any) -> ToolResult:
    return call("fs", action="ops", ops=ops, **extra)


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


# -- caps --------------------------------------------------------------------------------


def test_51_ops_are_refused_and_none_of_them_runs(call: Call, sandbox: Path) -> None:
    ops = [{"action": "write", "path": "made.txt", "content": "x"}]
    ops += [{"action": "list"}] * BATCH_MAX_OPS
    result = batch(call, ops)
    assert result.is_error
    assert f"{BATCH_MAX_OPS + 1} ops in one call; at most {BATCH_MAX_OPS}" in result.content
    assert not (sandbox / "made.txt").exists()


def test_50_ops_are_accepted(call: Call) -> None:
    result = batch(call, [{"action": "list"}] * BATCH_MAX_OPS)
    assert not result.is_error
    assert result.content.startswith(f"batch: {BATCH_MAX_OPS} ops across 0 files")


def test_21_distinct_files_are_refused_and_nothing_is_written(call: Call, sandbox: Path) -> None:
    ops = [
        {"action": "write", "path": f"f{n}.txt", "content": "x"} for n in range(BATCH_MAX_FILES + 1)
    ]
    result = batch(call, ops)
    assert result.is_error
    assert f"names {BATCH_MAX_FILES + 1} different files; at most {BATCH_MAX_FILES}" in (
        result.content
    )
    assert list(sandbox.iterdir()) == []


def test_20_files_with_repeats_and_free_list_glob_grep_ops_are_accepted(
    call: Call, sandbox: Path
) -> None:
    ops: list[dict[str, Any]] = [
        {"action": "write", "path": f"f{n}.txt", "content": "x\n"} for n in range(BATCH_MAX_FILES)
    ]
    ops += [{"action": "read", "path": "f0.txt"}, {"action": "read", "path": "./f1.txt"}]
    ops += [{"action": "list"}, {"action": "glob", "pattern": "*"}]
    ops += [{"action": "grep", "pattern": "x", "path": "f5.txt"}]
    result = batch(call, ops)
    assert not result.is_error
    assert result.content.splitlines()[0].startswith(
        f"batch: {len(ops)} ops across {BATCH_MAX_FILES} files (f0.txt, f1.txt, "
    )
    assert len(list(sandbox.iterdir())) == BATCH_MAX_FILES


# -- edits -------------------------------------------------------------------------------


def test_same_file_edits_use_original_line_numbers_applied_bottom_up(
    call: Call, sandbox: Path
) -> None:
    target = sandbox / "f.txt"
    target.write_text("a\nb\nc\nd\ne\n", encoding="utf-8")
    ops: list[dict[str, Any]] = [
        {"action": "edit", "path": "f.txt", "start_line": 2, "new_text": "b1\nb2\nb3"},
        {"action": "edit", "path": "f.txt", "start_line": 4, "end_line": 5, "new_text": "DE"},
        {"action": "edit", "path": "f.txt", "old_text": "a", "new_text": "A"},
    ]
    result = batch(call, ops)
    assert not result.is_error, result.content
    assert lines_of(target) == ["A", "b1", "b2", "b3", "c", "DE"]
    assert "[2] edit f.txt: ok\nedited 'f.txt' at line 4" in result.content


def test_edits_after_a_read_see_the_file_as_the_earlier_edits_left_it(
    call: Call, sandbox: Path
) -> None:
    target = sandbox / "f.txt"
    target.write_text("a\nb\n", encoding="utf-8")
    ops: list[dict[str, Any]] = [
        {"action": "edit", "path": "f.txt", "start_line": 1, "new_text": "x\ny"},
        {"action": "read", "path": "f.txt"},
        {"action": "edit", "path": "f.txt", "start_line": 3, "new_text": "z"},
    ]
    result = batch(call, ops)
    assert "1|x\n2|y\n3|b" in result.content
    assert lines_of(target) == ["x", "y", "z"]


def test_overlapping_edits_to_one_file_are_an_error(call: Call, sandbox: Path) -> None:
    (sandbox / "f.txt").write_text("a\nb\nc\n", encoding="utf-8")
    ops: list[dict[str, Any]] = [
        {"action": "edit", "path": "f.txt", "start_line": 1, "end_line": 2, "new_text": "x"},
        {"action": "edit", "path": "f.txt", "old_text": "b", "new_text": "y"},
    ]
    result = batch(call, ops, continue_on_error=True)
    assert "[2] edit f.txt: error: this edit overlaps op 1" in result.content
    assert lines_of(sandbox / "f.txt") == ["x", "c"]


def test_an_edit_with_lines_outside_the_file_is_an_error(call: Call, sandbox: Path) -> None:
    (sandbox / "f.txt").write_text("a\n", encoding="utf-8")
    result = batch(call, [{"action": "edit", "path": "f.txt", "start_line": 3, "new_text": "x"}])
    assert "lines 3-3 are not in 'f.txt', which has 1 lines" in result.content


# -- failures ----------------------------------------------------------------------------


def failing_ops() -> list[dict[str, Any]]:
    return [
        {"action": "write", "path": "one.txt", "content": "1"},
        {"action": "read", "path": "missing.txt"},
        {"action": "write", "path": "three.txt", "content": "3"},
    ]


def test_by_default_the_batch_stops_at_the_first_failure_and_says_what_ran(
    call: Call, sandbox: Path
) -> None:
    result = batch(call, failing_ops())
    assert not result.is_error  # the report is the result; the failure is inside it
    lines = result.content.splitlines()
    assert lines[1] == "[1] write one.txt: ok"
    assert lines[3].startswith("[2] read missing.txt: error: no such file 'missing.txt'")
    assert lines[4] == "[3] write three.txt: not run"
    assert lines[5] == (
        "stopped at op 2 (continue_on_error is false); ran: 1; ops after 2 did not run"
    )
    assert (sandbox / "one.txt").exists() and not (sandbox / "three.txt").exists()


def test_with_continue_on_error_every_op_runs(call: Call, sandbox: Path) -> None:
    result = batch(call, failing_ops(), continue_on_error=True)
    assert "[2] read missing.txt: error:" in result.content
    assert "[3] write three.txt: ok" in result.content
    assert "stopped" not in result.content
    assert (sandbox / "three.txt").exists()


def test_a_failed_edit_stops_the_ops_after_it_but_keeps_the_ones_before(
    call: Call, sandbox: Path
) -> None:
    (sandbox / "a.txt").write_text("x\n", encoding="utf-8")
    (sandbox / "b.txt").write_text("y\n", encoding="utf-8")
    ops: list[dict[str, Any]] = [
        {"action": "edit", "path": "a.txt", "old_text": "x", "new_text": "X"},
        {"action": "edit", "path": "b.txt", "old_text": "nope", "new_text": "N"},
        {"action": "edit", "path": "a.txt", "old_text": "X", "new_text": "again"},
    ]
    result = batch(call, ops)
    assert "[3] edit a.txt: not run" in result.content
    assert lines_of(sandbox / "a.txt") == ["X"]
    assert lines_of(sandbox / "b.txt") == ["y"]


def test_errors_are_shown_whole_even_past_the_2_kib_clip(call: Call) -> None:
    long_path = "../" + "x" * (3 * BATCH_BODY_CLIP)
    result = batch(call, [{"action": "read", "path": long_path}])
    error = result.content.splitlines()[1]
    assert error.startswith(f"[1] read {long_path}: error: '{long_path}' is outside the sandbox")
    assert "clipped" not in result.content


# -- the report --------------------------------------------------------------------------


def test_reads_in_a_batch_are_clipped_to_2_kib_but_not_alone(call: Call, sandbox: Path) -> None:
    (sandbox / "big.txt").write_text("".join(f"{n:07d}\n" for n in range(2000)), encoding="utf-8")
    result = batch(call, [{"action": "read", "path": "big.txt"}])
    body = result.content.split("\n", 2)[2]
    assert len(body.encode("utf-8")) < BATCH_BODY_CLIP + 200
    assert body.splitlines()[-1].startswith(f"[clipped: showed {BATCH_BODY_CLIP} of ")
    assert 'call fs with action "read" alone' in body

    alone = call("fs", action="read", path="big.txt").content
    assert len(alone.encode("utf-8")) > 8 * BATCH_BODY_CLIP


def test_the_header_names_the_files_the_batch_touches(call: Call, sandbox: Path) -> None:
    (sandbox / "a.txt").write_text("1\n", encoding="utf-8")
    ops = [
        {"action": "read", "path": "a.txt"},
        {"action": "diff", "path": "a.txt", "other": "b.txt"},
        {"action": "mkdir", "path": "d"},
    ]
    header = batch(call, ops, continue_on_error=True).content.splitlines()[0]
    assert header == "batch: 3 ops across 3 files (a.txt, b.txt, d)"


def test_move_renames_one_file_or_every_match_of_a_pattern(call: Call, sandbox: Path) -> None:
    for name in ("a.txt", "b.txt", "keep.md"):
        (sandbox / name).write_text(name, encoding="utf-8")
    one = call("fs", action="move", path="keep.md", destination="kept.md")
    assert not one.is_error and (sandbox / "kept.md").read_text(encoding="utf-8") == "keep.md"
    result = batch(call, [{"action": "move", "path": "*.txt", "destination": "*.log"}])
    assert not result.is_error, result.content
    assert sorted(p.name for p in sandbox.iterdir()) == ["a.log", "b.log", "kept.md"]
    assert "destination is required" in call("fs", action="move", path="kept.md").content
    renamed = call("fs", action="rename", path="kept.md", destination="final.md")
    assert not renamed.is_error and (sandbox / "final.md").exists()


def test_hints_name_the_fs_tool_and_its_actions(call: Call, sandbox: Path) -> None:
    """The unified mode has no fs_move or fs_write: its hints say how to call fs instead,
    and the calls they offer run as given."""
    (sandbox / "notes").mkdir()
    (sandbox / "notes" / "draft_a.txt").write_text("a", encoding="utf-8")
    result = call("fs", action="edit", path="notes", old_text="draft_", new_text="final_")
    assert result.is_error
    assert 'call fs with action "move" for each' in result.content
    offered = result.content.split("for each: ")[1]
    assert offered == (
        '{"action": "move", "path": "notes/draft_a.txt", "destination": "notes/final_a.txt"}'
    )
    assert not call("fs", **json.loads(offered)).is_error
    assert (sandbox / "notes" / "final_a.txt").exists()
    missing = call("fs", action="edit", path="new.txt", old_text="a", new_text="b").content
    assert 'write its whole content with fs with action "write"' in missing
    assert "fs_write" not in missing


# -- single actions and argument mistakes ------------------------------------------------


def test_single_actions_work_without_a_batch(call: Call, sandbox: Path) -> None:
    assert call("fs", action="write", path="a.txt", content="hi\n").content.startswith("created")
    assert call("fs", action="read", path="a.txt").content.startswith("1|hi")
    edited = call("fs", action="edit", path="a.txt", old_text="hi", new_text="ho")
    assert edited.content.startswith("edited 'a.txt'")
    assert (sandbox / "a.txt").read_text(encoding="utf-8") == "ho\n"
    assert call("fs", action="glob", pattern="*.txt").content == "a.txt"


def test_a_failing_single_action_is_an_error_result(call: Call, sandbox: Path) -> None:
    result = call("fs", action="read", path="nope.txt")
    assert result.is_error and "no such file 'nope.txt'" in result.content
    edit = call("fs", action="edit", path="nope.txt", old_text="a", new_text="b")
    assert edit.is_error


def test_missing_or_misplaced_arguments_are_explained(call: Call) -> None:
    assert "needs ops" in call("fs", action="ops").content
    assert 'only for action "ops"' in call("fs", action="list", ops=[]).content
    assert "ops is empty" in batch(call, []).content
    assert "path is required" in call("fs", action="read").content
    assert call("fs", action="ops", ops=[{"action": "fly"}]).is_error


def test_a_batch_cannot_leave_the_sandbox(call: Call, tmp_path: Path) -> None:
    result = batch(call, [{"action": "write", "path": "../escape.txt", "content": "x"}])
    assert "outside the sandbox" in result.content
    assert not (tmp_path / "escape.txt").exists()
