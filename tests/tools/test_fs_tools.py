"""The split file tools (fs_read, fs_write, ...), called the way a model calls them."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from conch.messages import ToolResult
from conch.tools import Tool, fs_tools
from conch.tools.caps import READ_BYTES_DEFAULT, READ_LINES_MAX

Call = Callable[..., ToolResult]
SPLIT = ["fs_read", "fs_write", "fs_edit", "fs_list", "fs_glob", "fs_grep", "fs_mkdir"]
SPLIT += ["fs_delete", "fs_move", "fs_diff"]


@pytest.fixture
def call(sandbox: Path, caller: Callable[[Iterable[Tool]], Call]) -> Call:
    return caller(fs_tools(sandbox))


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# -- the tool set ------------------------------------------------------------------------


def test_split_mode_gives_one_tool_per_action(sandbox: Path) -> None:
    assert [t.name for t in fs_tools(sandbox)] == SPLIT


def test_unified_mode_gives_the_batch_tool_and_both_gives_all(sandbox: Path) -> None:
    assert [t.name for t in fs_tools(sandbox, "unified")] == ["fs"]
    assert [t.name for t in fs_tools(sandbox, "both")] == [*SPLIT, "fs"]


def test_an_unknown_mode_is_refused(sandbox: Path) -> None:
    with pytest.raises(ValueError, match="unknown file tools mode"):
        fs_tools(sandbox, "all")  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["split", "unified"])
def test_every_tool_has_a_trigger_and_an_example_and_one_names_the_root(
    sandbox: Path, mode: str
) -> None:
    tools = fs_tools(sandbox, mode)  # type: ignore[arg-type]
    for item in tools:
        assert item.trigger and "\n" not in item.trigger
        assert "Example: {" in item.spec.description
    assert str(sandbox.resolve()) in tools[0].system
    assert all(not t.system for t in tools[1:])


# -- fs_read -----------------------------------------------------------------------------


def test_read_numbers_every_line_and_reports_the_total(call: Call, sandbox: Path) -> None:
    write(sandbox / "a.txt", "alpha\nbeta\n")
    result = call("fs_read", path="a.txt")
    assert not result.is_error
    assert result.content.splitlines() == [
        "1|alpha",
        "2|beta",
        "[a.txt: lines 1-2 of 2, bytes 0-10 of 11]",
    ]


def test_read_in_line_mode_says_how_to_read_on(call: Call, sandbox: Path) -> None:
    write(sandbox / "a.txt", "".join(f"line {n}\n" for n in range(1, 11)))
    lines = call("fs_read", path="a.txt", start_line=4, max_lines=3).content.splitlines()
    assert lines[:3] == ["4|line 4", "5|line 5", "6|line 6"]
    assert lines[3] == '[a.txt: lines 4-6 of 10; read on with {"path": "a.txt", "start_line": 7}]'


def test_read_in_line_mode_shows_at_most_2000_lines(call: Call, sandbox: Path) -> None:
    write(sandbox / "big.txt", "x\n" * 2500)
    lines = call("fs_read", path="big.txt", start_line=1, max_lines=5000).content.splitlines()
    assert len(lines) == READ_LINES_MAX + 1
    assert lines[-1].startswith(f"[big.txt: lines 1-{READ_LINES_MAX} of 2500;")


def test_read_in_byte_mode_clips_and_reading_on_continues_the_numbering(
    call: Call, sandbox: Path
) -> None:
    write(sandbox / "big.txt", "".join(f"{n:09d}\n" for n in range(1, 10_001)))  # 100,000 B
    first = call("fs_read", path="big.txt").content.splitlines()
    shown = len(first) - 1
    assert shown == READ_BYTES_DEFAULT // 10
    assert first[-1].endswith(
        f'clipped, read on with {{"path": "big.txt", "offset": {shown * 10}}}]'
    )
    again = call("fs_read", path="big.txt", offset=shown * 10, max_bytes=20).content.splitlines()
    assert again[0] == f"{shown + 1}|{shown + 1:09d}"


def test_read_past_the_end_is_an_error(call: Call, sandbox: Path) -> None:
    write(sandbox / "a.txt", "one\n")
    result = call("fs_read", path="a.txt", start_line=5)
    assert result.is_error
    assert "start_line 5 is past the end of 'a.txt' (1 lines)" in result.content


def test_read_of_a_missing_file_names_the_file_and_the_root(call: Call, sandbox: Path) -> None:
    result = call("fs_read", path="a.txt")
    assert result.is_error
    assert f"fs_read: no such file 'a.txt' under {sandbox.resolve()}" in result.content


def test_read_refuses_binary_files_and_directories(call: Call, sandbox: Path) -> None:
    (sandbox / "blob.bin").write_bytes(b"\x7fELF\x00\x01")
    (sandbox / "dir").mkdir()
    assert "looks like a binary file" in call("fs_read", path="blob.bin").content
    assert "is a directory" in call("fs_read", path="dir").content


def test_read_of_a_named_pipe_is_refused_instead_of_blocking(call: Call, sandbox: Path) -> None:
    os.mkfifo(sandbox / "pipe")
    result = call("fs_read", path="pipe")
    assert result.is_error and "is not a regular file" in result.content


def test_read_of_an_empty_file_says_so(call: Call, sandbox: Path) -> None:
    write(sandbox / "e.txt", "")
    assert call("fs_read", path="e.txt").content == "[e.txt: empty file]"


# -- fs_write ----------------------------------------------------------------------------


def test_write_creates_parents_and_reports_the_size(call: Call, sandbox: Path) -> None:
    result = call("fs_write", path="notes/todo.txt", content="buy milk\n")
    assert result.content == "created 'notes/todo.txt' (9 bytes, 1 lines)"
    assert (sandbox / "notes" / "todo.txt").read_text(encoding="utf-8") == "buy milk\n"
    assert (sandbox / "notes" / "todo.txt").stat().st_mode & 0o777 == 0o644


def test_write_replaces_the_file_atomically(call: Call, sandbox: Path) -> None:
    target = write(sandbox / "a.txt", "old\n")
    target.chmod(0o640)
    os.link(target, sandbox / "hardlink.txt")  # sees in-place writes, not a rename
    before = target.stat().st_ino

    result = call("fs_write", path="a.txt", content="new\n")

    assert result.content.startswith("replaced 'a.txt'")
    assert target.read_text(encoding="utf-8") == "new\n"
    assert (sandbox / "hardlink.txt").read_text(encoding="utf-8") == "old\n"
    assert target.stat().st_ino != before
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in sandbox.iterdir()) == ["a.txt", "hardlink.txt"]


def test_write_onto_a_directory_is_an_error(call: Call, sandbox: Path) -> None:
    (sandbox / "d").mkdir()
    assert "is a directory" in call("fs_write", path="d", content="x").content


# -- fs_edit -----------------------------------------------------------------------------


def test_edit_replaces_exact_text_once(call: Call, sandbox: Path) -> None:
    target = write(sandbox / "app.py", "DEBUG = True\nPORT = 1\n")
    result = call("fs_edit", path="app.py", old_text="DEBUG = True", new_text="DEBUG = False")
    assert result.content == "edited 'app.py': replaced 1 place (line 1)"
    assert target.read_text(encoding="utf-8") == "DEBUG = False\nPORT = 1\n"


def test_edit_of_missing_text_is_an_error_that_says_what_to_do(call: Call, sandbox: Path) -> None:
    write(sandbox / "app.py", "x = 1\n")
    result = call("fs_edit", path="app.py", old_text="y = 1", new_text="y = 2")
    assert result.is_error
    assert "was not found in 'app.py'" in result.content
    assert "read the file" in result.content


def test_edit_of_missing_text_shows_the_closest_line(call: Call, sandbox: Path) -> None:
    write(sandbox / "settings.json", '{\n  "name": "shop",\n  "debug": true\n}\n')
    result = call("fs_edit", path="settings.json", old_text="debug = true", new_text="x")
    assert result.is_error
    assert "'settings.json' (the closest is line 3: '\"debug\": true'); read" in result.content
    far = call("fs_edit", path="settings.json", old_text="completely different", new_text="x")
    assert "closest" not in far.content


def test_edit_of_ambiguous_text_names_the_lines_unless_replace_all(
    call: Call, sandbox: Path
) -> None:
    target = write(sandbox / "a.txt", "x\ny\nx\n")
    result = call("fs_edit", path="a.txt", old_text="x", new_text="z")
    assert result.is_error
    assert "occurs 2 times in 'a.txt' (lines 1, 3)" in result.content
    assert target.read_text(encoding="utf-8") == "x\ny\nx\n"

    result = call("fs_edit", path="a.txt", old_text="x", new_text="z", replace_all=True)
    assert result.content == "edited 'a.txt': replaced 2 places (line 1, 3)"
    assert target.read_text(encoding="utf-8") == "z\ny\nz\n"


def test_edit_keeps_windows_line_endings(call: Call, sandbox: Path) -> None:
    target = sandbox / "w.txt"
    target.write_bytes(b"one\r\ntwo\r\n")
    assert not call("fs_edit", path="w.txt", old_text="two", new_text="2").is_error
    assert target.read_bytes() == b"one\r\n2\r\n"


def test_edit_with_identical_old_and_new_is_an_error(call: Call, sandbox: Path) -> None:
    write(sandbox / "a.txt", "x\n")
    assert "are the same" in call("fs_edit", path="a.txt", old_text="x", new_text="x").content


# -- fs_list, fs_glob, fs_grep -----------------------------------------------------------


def test_list_shows_directories_with_a_slash_and_files_with_sizes(
    call: Call, sandbox: Path
) -> None:
    write(sandbox / "b.txt", "12345")
    write(sandbox / "src" / "main.py", "print()\n")
    (sandbox / "link").symlink_to("b.txt")
    assert call("fs_list").content.splitlines() == [
        "contents of '.':",
        "b.txt  5 B",
        "link -> b.txt",
        "src/",
    ]
    assert "src/main.py  8 B" in call("fs_list", recursive=True).content.splitlines()


def test_list_marks_executable_files(call: Call, sandbox: Path) -> None:
    write(sandbox / "run.sh", "echo hi\n")
    write(sandbox / "notes", "x\n")
    (sandbox / "run.sh").chmod(0o755)
    (sandbox / "notes").chmod(0o644)
    assert call("fs_list").content.splitlines() == [
        "contents of '.':",
        "notes  2 B",
        "run.sh  8 B  executable",
    ]


def test_list_of_an_empty_directory_and_of_a_file(call: Call, sandbox: Path) -> None:
    (sandbox / "empty").mkdir()
    write(sandbox / "a.txt", "x")
    assert call("fs_list", path="empty").content == "'empty' is empty"
    assert call("fs_list", path="a.txt").is_error


def test_glob_star_is_one_level_and_double_star_any_depth(call: Call, sandbox: Path) -> None:
    for name in ["a.py", "pkg/b.py", "pkg/deep/c.py", "pkg/d.toml", "e.md"]:
        write(sandbox / name, "")
    assert call("fs_glob", pattern="*.py").content.splitlines() == ["a.py"]
    assert sorted(call("fs_glob", pattern="**/*.py").content.splitlines()) == [
        "a.py",
        "pkg/b.py",
        "pkg/deep/c.py",
    ]
    assert sorted(call("fs_glob", pattern="pkg/*.{py,toml}").content.splitlines()) == [
        "pkg/b.py",
        "pkg/d.toml",
    ]
    assert call("fs_glob", pattern="*.rs").content == "no paths match '*.rs' under '.'"


def test_glob_does_not_follow_a_symlinked_directory_outside(
    call: Call, sandbox: Path, tmp_path: Path
) -> None:
    write(tmp_path / "outside" / "secret.py", "")
    (sandbox / "out").symlink_to(tmp_path / "outside", target_is_directory=True)
    assert "secret" not in call("fs_glob", pattern="**/*.py").content


def test_glob_refuses_patterns_that_leave_the_directory(call: Call) -> None:
    assert call("fs_glob", pattern="../*").is_error
    assert call("fs_glob", pattern="/etc/*").is_error


def test_grep_finds_lines_as_file_line_text(call: Call, sandbox: Path) -> None:
    write(sandbox / "src" / "a.py", "x = 1\n# TODO: fix\n")
    write(sandbox / "notes.md", "todo: call\n")
    result = call("fs_grep", pattern="TODO", glob="*.py")
    assert result.content.splitlines() == ["src/a.py:2:# TODO: fix", "[1 matches in 1 files]"]
    both = call("fs_grep", pattern="todo", ignore_case=True).content.splitlines()
    assert both[:2] == ["notes.md:1:todo: call", "src/a.py:2:# TODO: fix"]


def test_grep_counts_the_lines_a_file_has_and_no_more(call: Call, sandbox: Path) -> None:
    write(sandbox / "three.log", "a\nb\n\n")  # the third line is empty; no fourth one
    lines = call("fs_grep", pattern=".*", path="three.log").content.splitlines()
    assert lines == ["three.log:1:a", "three.log:2:b", "three.log:3:", "[3 matches in 1 files]"]
    write(sandbox / "open.log", "a\nb")  # no newline at the end: still two lines
    assert call("fs_grep", pattern=".*", path="open.log").content.splitlines()[-1] == (
        "[2 matches in 1 files]"
    )


def test_a_write_of_copied_listing_or_grep_lines_says_so(call: Call, sandbox: Path) -> None:
    listing = "sub/\na.csv  0 B\nb.csv  4 B\nhuge.bin  4.9 KiB\nbuild  21 B  executable\n"
    result = call("fs_write", path="empty.txt", content=listing)
    assert not result.is_error
    assert "these lines are fs_list's output (sizes after the names), copied" in result.content
    assert (sandbox / "empty.txt").read_text() == listing  # written as given all the same
    grepped = call("fs_write", path="todo.txt", content="src/main.py:2\nsrc/io/reader.py:1:# x\n")
    assert "fs_grep's output (file:line:text)" in grepped.content
    for plain in ("a.csv\nc.csv\n", "host: db\nport: 5432\n", "only one line  4 B\n"):
        assert "note:" not in call("fs_write", path="plain.txt", content=plain).content


def test_grep_stops_at_max_matches_and_says_so(call: Call, sandbox: Path) -> None:
    write(sandbox / "many.txt", "hit\n" * 50)
    lines = call("fs_grep", pattern="hit", max_matches=5).content.splitlines()
    assert len(lines) == 6
    assert lines[-1].startswith("[stopped at 5 matches")


def test_grep_reports_a_bad_regular_expression(call: Call) -> None:
    result = call("fs_grep", pattern="(")
    assert result.is_error
    assert "bad regular expression" in result.content


def test_grep_skips_binary_files_and_symlinks_that_lead_outside(
    call: Call, sandbox: Path, tmp_path: Path
) -> None:
    write(tmp_path / "outside" / "secret.txt", "password\n")
    (sandbox / "peek.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    (sandbox / "blob.bin").write_bytes(b"password\x00")
    assert call("fs_grep", pattern="password").content == (
        "no matches for 'password' in '.' (fs_grep searches the text inside files; fs_glob "
        "finds files by name)"
    )


def test_editing_a_directory_points_to_fs_move(call: Call, sandbox: Path) -> None:
    (sandbox / "photos").mkdir()
    result = call("fs_edit", path="photos", old_text="IMG_", new_text="holiday_")
    assert result.is_error
    assert (
        "'photos' is a directory (use fs_list to see it); to rename or move files, use fs_move"
        in (result.content)
    )


def test_editing_a_missing_file_points_to_fs_write(call: Call) -> None:
    result = call("fs_edit", path="greeting.txt", old_text="", new_text="Hello")
    assert result.is_error
    assert "to create a new file, write its whole content with fs_write" in result.content


def test_a_glob_that_keeps_no_file_is_dropped_and_named(call: Call, sandbox: Path) -> None:
    write(sandbox / "src" / "main.py", "# TODO: tests\n")
    write(sandbox / "src" / "util.py", "x = 1\n")
    assert call("fs_grep", pattern="TODO", path="src", glob="true").content == (
        "src/main.py:1:# TODO: tests\n[1 matches in 1 files]\n"
        "[no file name there matches the glob 'true', so every file was searched]"
    )
    assert call("fs_grep", pattern="FIXME", path="src", glob=".*").content == (
        "no matches for 'FIXME' in 'src' (fs_grep searches the text inside files; fs_glob "
        "finds files by name)\n"
        "[no file name there matches the glob '.*', so every file was searched]"
    )


def test_a_glob_that_keeps_files_still_filters(call: Call, sandbox: Path) -> None:
    write(sandbox / "src" / "main.py", "# TODO: tests\n")
    write(sandbox / "src" / "notes.txt", "TODO: more\n")
    assert call("fs_grep", pattern="TODO", path="src", glob="*.txt").content == (
        "src/notes.txt:1:TODO: more\n[1 matches in 1 files]"
    )


def test_no_match_in_one_file_suggests_reading_it(call: Call, sandbox: Path) -> None:
    write(sandbox / "config.ini", "[database]\nport = 5432\n")
    assert call("fs_grep", pattern="db_port", path="config.ini").content == (
        "no matches for 'db_port' in 'config.ini'; read it to see its text"
    )


# -- fs_mkdir, fs_delete, fs_diff --------------------------------------------------------


def test_mkdir_creates_parents_and_accepts_an_existing_directory(call: Call, sandbox: Path) -> None:
    assert call("fs_mkdir", path="a/b").content == "created directory 'a/b'"
    assert (sandbox / "a" / "b").is_dir()
    assert call("fs_mkdir", path="a/b").content == "'a/b' already exists"
    write(sandbox / "f", "")
    assert call("fs_mkdir", path="f").is_error


def test_delete_removes_files_and_directories_only_when_recursive(
    call: Call, sandbox: Path
) -> None:
    write(sandbox / "a.txt", "")
    write(sandbox / "d" / "x.txt", "")
    assert call("fs_delete", path="a.txt").content == "deleted 'a.txt'"
    refused = call("fs_delete", path="d")
    assert refused.is_error and "set recursive to true" in refused.content
    assert (sandbox / "d" / "x.txt").exists()
    assert call("fs_delete", path="d", recursive=True).content.startswith("deleted directory 'd'")
    assert list(sandbox.iterdir()) == []


def test_delete_refuses_the_sandbox_root(call: Call, sandbox: Path) -> None:
    write(sandbox / "keep.txt", "")
    for path in [".", "", str(sandbox), "a/.."]:
        result = call("fs_delete", path=path, recursive=True)
        assert result.is_error and "refusing to delete the sandbox root" in result.content
    assert (sandbox / "keep.txt").exists()


def test_move_renames_moves_into_a_directory_and_never_replaces(call: Call, sandbox: Path) -> None:
    write(sandbox / "draft.txt", "text")
    assert call("fs_move", path="draft.txt", destination="final.txt").content == (
        "moved 'draft.txt' to 'final.txt'"
    )
    assert (sandbox / "final.txt").read_text(encoding="utf-8") == "text"
    (sandbox / "done").mkdir()
    assert call("fs_move", path="final.txt", destination="done").content == (
        "moved 'final.txt' to 'done/final.txt'"
    )
    write(sandbox / "other.txt", "other")
    clash = call("fs_move", path="other.txt", destination="done/final.txt")
    assert clash.is_error and "already exists" in clash.content
    assert (sandbox / "done" / "final.txt").read_text(encoding="utf-8") == "text"
    missing = call("fs_move", path="nope.txt", destination="x.txt")
    assert missing.is_error and "nope.txt" in missing.content
    escape = call("fs_move", path="other.txt", destination="../outside.txt")
    assert escape.is_error and (sandbox / "other.txt").exists()
    root = call("fs_move", path=".", destination="elsewhere")
    assert root.is_error and "sandbox root" in root.content


def test_delete_of_a_symlink_removes_the_link_not_the_target(call: Call, sandbox: Path) -> None:
    target = write(sandbox / "real.txt", "keep")
    (sandbox / "alias.txt").symlink_to(target)
    assert call("fs_delete", path="alias.txt").content == "deleted symlink 'alias.txt'"
    assert target.read_text(encoding="utf-8") == "keep"


def test_diff_of_two_files_and_of_proposed_text(call: Call, sandbox: Path) -> None:
    write(sandbox / "a.txt", "one\ntwo\n")
    write(sandbox / "b.txt", "one\n2\n")
    assert call("fs_diff", path="a.txt", other="b.txt").content.splitlines() == [
        "--- a.txt",
        "+++ b.txt",
        "@@ -1,2 +1,2 @@",
        " one",
        "-two",
        "+2",
    ]
    proposed = call("fs_diff", path="a.txt", new_text="one\ntwo\nthree\n").content
    assert "+++ a.txt (proposed)" in proposed and "+three" in proposed
    assert call("fs_diff", path="a.txt", new_text="one\ntwo\n").content.startswith("no differences")
    assert "exactly one of" in call("fs_diff", path="a.txt").content


# -- confinement through every tool ------------------------------------------------------

ESCAPES = [
    ("fs_read", {"path": "../secret.txt"}),
    ("fs_write", {"path": "../x.txt", "content": "x"}),
    ("fs_edit", {"path": "../secret.txt", "old_text": "s", "new_text": "t"}),
    ("fs_list", {"path": ".."}),
    ("fs_glob", {"pattern": "*", "path": ".."}),
    ("fs_grep", {"pattern": "s", "path": ".."}),
    ("fs_mkdir", {"path": "../made"}),
    ("fs_delete", {"path": "../secret.txt"}),
    ("fs_diff", {"path": "../secret.txt", "new_text": ""}),
]


@pytest.mark.parametrize(("name", "arguments"), ESCAPES)
def test_every_tool_refuses_a_path_outside_the_sandbox(
    call: Call, sandbox: Path, tmp_path: Path, name: str, arguments: dict[str, str]
) -> None:
    write(tmp_path / "secret.txt", "secret\n")
    result = call(name, **arguments)
    assert result.is_error
    assert f"PathOutsideSandbox: {name}:" in result.content
    assert str(sandbox.resolve()) in result.content
    assert (tmp_path / "secret.txt").read_text(encoding="utf-8") == "secret\n"
    assert not (tmp_path / "made").exists() and not (tmp_path / "x.txt").exists()


def test_writing_through_a_symlinked_parent_outside_is_refused(
    call: Call, sandbox: Path, tmp_path: Path
) -> None:
    (tmp_path / "outside").mkdir()
    (sandbox / "out").symlink_to(tmp_path / "outside", target_is_directory=True)
    result = call("fs_write", path="out/new.txt", content="x")
    assert result.is_error and "outside the sandbox" in result.content
    assert list((tmp_path / "outside").iterdir()) == []


# -- patterns where one file was expected --------------------------------------------------


def test_move_with_a_pattern_renames_each_match_by_its_star(call: Call, sandbox: Path) -> None:
    for name in ["IMG_1.jpg", "IMG_10.jpg", "cover.png"]:
        write(sandbox / "photos" / name, name)
    result = call("fs_move", path="photos/IMG_*.jpg", destination="photos/holiday_*.jpg")
    assert not result.is_error, result.content
    assert result.content == (
        "moved 2 entries matching 'photos/IMG_*.jpg':\n"
        "'photos/IMG_1.jpg' to 'photos/holiday_1.jpg'\n"
        "'photos/IMG_10.jpg' to 'photos/holiday_10.jpg'"
    )
    assert sorted(p.name for p in (sandbox / "photos").iterdir()) == [
        "cover.png",
        "holiday_1.jpg",
        "holiday_10.jpg",
    ]
    assert (sandbox / "photos" / "holiday_10.jpg").read_text() == "IMG_10.jpg"


def test_move_with_a_pattern_into_a_directory_creates_it(call: Call, sandbox: Path) -> None:
    for name in ["main.py", "util.py", "notes.txt"]:
        write(sandbox / name, name)
    result = call("fs_move", path="*.py", destination="src")
    assert result.content.splitlines()[1:] == [
        "'main.py' to 'src/main.py'",
        "'util.py' to 'src/util.py'",
    ]
    assert sorted(p.name for p in sandbox.iterdir()) == ["notes.txt", "src"]
    # a directory the pattern matches is not moved into itself
    write(sandbox / "a.txt", "a")
    mixed = call("fs_move", path="*", destination="src")
    assert not mixed.is_error, mixed.content
    assert sorted(p.name for p in sandbox.iterdir()) == ["src"]


def test_move_with_a_pattern_moves_nothing_when_one_target_exists(
    call: Call, sandbox: Path
) -> None:
    write(sandbox / "a.txt", "a")
    write(sandbox / "b.txt", "b")
    write(sandbox / "b.md", "kept")
    clash = call("fs_move", path="*.txt", destination="*.md")
    assert clash.is_error
    assert "'b.md' already exists; nothing was moved" in clash.content
    assert sorted(p.name for p in sandbox.iterdir()) == ["a.txt", "b.md", "b.txt"]
    onto_a_file = call("fs_move", path="*.txt", destination="b.md")
    assert onto_a_file.is_error and "'b.md' is a file" in onto_a_file.content
    mismatched = call("fs_move", path="*.txt", destination="*-*.md")
    assert mismatched.is_error and "as many times" in mismatched.content
    nothing = call("fs_move", path="*.csv", destination="out")
    assert nothing.is_error and "nothing matches '*.csv'" in nothing.content
    escape = call("fs_move", path="*.txt", destination="../out")
    assert escape.is_error and "outside the sandbox" in escape.content
    assert sorted(p.name for p in sandbox.iterdir()) == ["a.txt", "b.md", "b.txt"]


def test_a_file_named_like_a_pattern_is_moved_as_itself(call: Call, sandbox: Path) -> None:
    write(sandbox / "odd*.txt", "x")
    write(sandbox / "other.txt", "y")
    assert call("fs_move", path="odd*.txt", destination="plain.txt").content == (
        "moved 'odd*.txt' to 'plain.txt'"
    )


def test_editing_a_pattern_names_the_files_it_matches(call: Call, sandbox: Path) -> None:
    write(sandbox / "notes1.txt", "one")
    write(sandbox / "todo.txt", "two")
    result = call("fs_edit", path="*.txt", old_text="", new_text=".md")
    assert result.is_error
    assert "'*.txt' is a pattern, not a file; it matches 'notes1.txt', 'todo.txt'" in (
        result.content
    )
    assert "fs_move takes a pattern" in result.content
    read = call("fs_read", path="*.txt")
    assert read.is_error and "fs_read takes one file at a time" in read.content


def test_writing_a_file_named_like_a_pattern_is_refused(call: Call, sandbox: Path) -> None:
    write(sandbox / "notes1.txt", "one")
    result = call("fs_write", path="*.txt", content="notes1.md\n")
    assert result.is_error
    assert "'*.txt' looks like a pattern, not a file name; it matches 'notes1.txt'" in (
        result.content
    )
    assert sorted(p.name for p in sandbox.iterdir()) == ["notes1.txt"]


def test_editing_names_in_a_directory_offers_the_moves(call: Call, sandbox: Path) -> None:
    write(sandbox / "docs" / "my notes.txt", "a")
    write(sandbox / "docs" / "plain.txt", "b")
    result = call("fs_edit", path="docs", old_text=" ", new_text="_")
    assert result.is_error
    assert result.content.endswith(
        'call fs_move for each: {"path": "docs/my notes.txt", "destination": "docs/my_notes.txt"}'
    )


def test_a_json_file_given_other_text_is_written_with_a_warning(call: Call, sandbox: Path) -> None:
    bad = call("fs_write", path="config.json", content="HOST=example.org\n")
    assert not bad.is_error
    assert bad.content.startswith(
        "created 'config.json' (17 bytes, 1 lines); warning: this is not valid JSON ("
    )
    assert (sandbox / "config.json").read_text() == "HOST=example.org\n"
    good = call("fs_write", path="config.json", content='{"HOST": "example.org"}\n')
    assert good.content == "replaced 'config.json' (24 bytes, 1 lines)"


def test_grep_that_finds_no_text_names_files_whose_names_match(call: Call, sandbox: Path) -> None:
    write(sandbox / "a.txt", "alpha")
    write(sandbox / "sub" / "b.txt", "beta")
    write(sandbox / "c.md", "gamma")
    result = call("fs_grep", pattern=r"\.txt$")
    assert result.content.endswith("[file names that match it: 'a.txt', 'sub/b.txt']")


def test_grep_names_matching_files_beside_text_matches_when_it_tells_them_apart(
    call: Call, sandbox: Path
) -> None:
    write(sandbox / "notes.txt", "see app.log")
    write(sandbox / "app.log", "started")
    write(sandbox / "old" / "db.log", "stopped")
    result = call("fs_grep", pattern=r"\.log$")
    assert result.content.splitlines() == [
        "notes.txt:1:see app.log",
        "[1 matches in 1 files]",
        "[file names that match it too: 'app.log', 'old/db.log']",
    ]
    every = call("fs_grep", pattern=".")
    assert "file names" not in every.content


def test_editing_text_that_is_in_the_file_name_offers_the_move(call: Call, sandbox: Path) -> None:
    write(sandbox / "docs" / "my notes.txt", "one-word")
    result = call("fs_edit", path="docs/my notes.txt", old_text=" ", new_text="_")
    assert result.is_error
    assert result.content.endswith(
        "' ' is not in the text of 'docs/my notes.txt' but in its name, and fs_edit changes "
        'the text. To rename the file, call fs_move: {"path": "docs/my notes.txt", '
        '"destination": "docs/my_notes.txt"}'
    )
    assert (sandbox / "docs" / "my notes.txt").read_text() == "one-word"


def test_move_with_an_absolute_pattern_inside_the_sandbox(call: Call, sandbox: Path) -> None:
    write(sandbox / "logs" / "a.log", "a")
    root = sandbox.resolve()
    result = call("fs_move", path=f"{root}/logs/*.log", destination="archive")
    assert result.content == "moved 1 entry matching '" + f"{root}/logs/*.log':\n" + (
        "'logs/a.log' to 'archive/a.log'"
    )
