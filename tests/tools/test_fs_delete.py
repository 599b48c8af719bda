"""fs_delete (and the fs tool's delete): by a pattern, with one question for every match; and
never the sandbox root, a directory above it or the working directory, refused with the
files there and the call that deletes only what the request names."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import pytest

from conch.messages import ToolResult
from conch.tools import Tool, fs_tools
from conch.tools.fs_deletes import request_patterns

Call = Callable[..., ToolResult]
FILES = ("build.tmp", "cache.tmp", "notes.txt", "report.md", "tmp_plan.txt", "data.tmp.bak")


class Asked:
    """A ``before_delete`` that records each question and says yes (or no)."""

    def __init__(self, allow: bool = True) -> None:
        self.allow = allow
        self.asked: list[tuple[list[str], bool]] = []

    def __call__(self, paths: Sequence[str], recursive: bool) -> None:
        self.asked.append((list(paths), recursive))
        if not self.allow:
            raise PermissionError("the user refused it; nothing was done.")


@pytest.fixture
def work(sandbox: Path) -> Path:
    for name in FILES:
        (sandbox / name).write_text(f"{name}\n", encoding="utf-8")
    (sandbox / "src").mkdir()
    (sandbox / "src" / "keep.py").write_text("x = 1\n", encoding="utf-8")
    (sandbox / "src" / "deep.tmp").write_text("deep\n", encoding="utf-8")
    return sandbox


def tools_for(
    caller: Callable[[Iterable[Tool]], Call],
    root: Path,
    *,
    mode: str = "split",
    asked: Asked | None = None,
    request: str | None = None,
) -> Call:
    return caller(fs_tools(root, mode, asked, lambda: request))  # type: ignore[arg-type]


def left(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


# -- patterns ------------------------------------------------------------------------------


def test_a_pattern_deletes_only_its_matches_after_one_question(
    work: Path, caller: Callable[[Iterable[Tool]], Call]
) -> None:
    asked = Asked()
    result = tools_for(caller, work, asked=asked)("fs_delete", path="*.tmp")
    assert result.content == "deleted 2 entries matching '*.tmp': build.tmp, cache.tmp"
    assert asked.asked == [(["build.tmp", "cache.tmp"], False)]
    assert "src/deep.tmp" in left(work) and "data.tmp.bak" in left(work)
    assert "build.tmp" not in left(work) and "tmp_plan.txt" in left(work)


def test_a_double_star_pattern_deletes_at_any_depth(
    work: Path, caller: Callable[[Iterable[Tool]], Call]
) -> None:
    result = tools_for(caller, work)("fs_delete", path="**/*.tmp")
    assert not result.is_error, result.content
    assert left(work) == ["data.tmp.bak", "notes.txt", "report.md", "src/keep.py", "tmp_plan.txt"]


def test_a_no_deletes_nothing(work: Path, caller: Callable[[Iterable[Tool]], Call]) -> None:
    result = tools_for(caller, work, asked=Asked(allow=False))("fs_delete", path="*.tmp")
    assert result.is_error and "refused" in result.content
    assert "build.tmp" in left(work) and "cache.tmp" in left(work)


def test_a_pattern_that_matches_nothing_or_a_directory_deletes_nothing(
    work: Path, caller: Callable[[Iterable[Tool]], Call]
) -> None:
    asked = Asked()
    call = tools_for(caller, work, asked=asked)
    nothing = call("fs_delete", path="*.log")
    assert nothing.is_error and "nothing matches '*.log'" in nothing.content
    folder = call("fs_delete", path="s*")
    assert folder.is_error and "'src'" in folder.content and "recursive" in folder.content
    assert asked.asked == [] and len(left(work)) == len(FILES) + 2
    assert not call("fs_delete", path="s*", recursive=True).is_error
    assert asked.asked == [(["src"], True)] and not (work / "src").exists()


def test_what_is_inside_a_matched_directory_is_not_asked_about_twice(
    work: Path, caller: Callable[[Iterable[Tool]], Call]
) -> None:
    (work / "src" / "sub").mkdir()
    (work / "src" / "sub" / "x.txt").write_text("", encoding="utf-8")
    asked = Asked()
    result = tools_for(caller, work, asked=asked)("fs_delete", path="src/**", recursive=True)
    assert asked.asked == [(["src/deep.tmp", "src/keep.py", "src/sub"], True)]
    assert result.content == (
        "deleted 3 entries matching 'src/**': src/deep.tmp, src/keep.py, src/sub/"
    )
    assert (work / "src").is_dir() and not any((work / "src").iterdir())


@pytest.mark.parametrize("path", ["src/main.py", "*.temp"])
def test_a_delete_of_nothing_offers_the_call_the_request_names(
    work: Path, caller: Callable[[Iterable[Tool]], Call], path: str
) -> None:
    call = tools_for(caller, work, request="delete all the .tmp files here")
    result = call("fs_delete", path=path)
    assert result.is_error and "FileNotFoundError" in result.content
    assert (
        'Next, call fs_delete with {"path": "*.tmp"}: it deletes only '
        "'build.tmp', 'cache.tmp', the files the request names." in result.content
    )
    assert len(left(work)) == len(FILES) + 2
    plain = tools_for(caller, work)("fs_delete", path=path)
    assert plain.is_error and "Next, call" not in plain.content  # no request: no offer


def test_a_file_named_like_a_pattern_is_deleted_as_itself(
    sandbox: Path, caller: Callable[[Iterable[Tool]], Call]
) -> None:
    (sandbox / "a*b").write_text("", encoding="utf-8")
    (sandbox / "axb").write_text("", encoding="utf-8")
    assert tools_for(caller, sandbox)("fs_delete", path="a*b").content == "deleted 'a*b'"
    assert left(sandbox) == ["axb"]


def test_the_fs_tool_deletes_by_a_pattern_given_as_path_or_as_pattern(
    work: Path, caller: Callable[[Iterable[Tool]], Call]
) -> None:
    call = tools_for(caller, work, mode="unified")
    assert "deleted 2 entries" in call("fs", action="delete", path="*.tmp").content
    assert "deleted 1 entry matching" in call("fs", action="delete", pattern="*.md").content
    assert "report.md" not in left(work)


# -- the root, the directories above it, the working directory ---------------------------


@pytest.mark.parametrize("spelling", [".", "", "./", "src/..", "ROOT", "ROOT/", "ROOT-NO-SLASH"])
def test_the_root_is_refused_however_it_is_spelled_with_the_call_the_request_names(
    work: Path, caller: Callable[[Iterable[Tool]], Call], spelling: str
) -> None:
    asked = Asked()
    path = spelling.replace("ROOT-NO-SLASH", str(work).lstrip("/")).replace("ROOT", str(work))
    call = tools_for(caller, work, asked=asked, request="delete all the .tmp files here")
    result = call("fs_delete", path=path, recursive=True)
    assert result.is_error and "refusing to delete the sandbox root" in result.content
    assert "nothing was deleted" in result.content
    assert (
        'Next, call fs_delete with {"path": "*.tmp"}: it deletes only '
        "'build.tmp', 'cache.tmp', the files the request names." in result.content
    )
    assert "notes.txt" not in result.content  # only what the request names
    assert asked.asked == [] and len(left(work)) == len(FILES) + 2


def test_a_directory_above_the_root_is_refused_with_what_the_root_holds(
    work: Path, caller: Callable[[Iterable[Tool]], Call]
) -> None:
    call = tools_for(caller, work, request="remove the tmp files")
    for path in ("..", str(work.parent), "/"):
        result = call("fs_delete", path=path, recursive=True)
        assert result.is_error and "which holds the sandbox root" in result.content, path
        assert '{"path": "*.tmp"}' in result.content
    assert work.parent.exists() and len(left(work)) == len(FILES) + 2


@pytest.mark.parametrize("request_text", [None, "delete everything here", "rm -r *"])
def test_without_files_named_the_refusal_says_to_delete_nothing_and_lists_none(
    work: Path, caller: Callable[[Iterable[Tool]], Call], request_text: str | None
) -> None:
    call = tools_for(caller, work, request=request_text)
    result = call("fs_delete", path=".", recursive=True)
    assert result.is_error
    assert "The request names none of the" in result.content
    assert "Do not delete anything: tell the user this was refused and why" in result.content
    # No file of the folder is named: a small model took a listed one for what was asked.
    for name in ("build.tmp", "notes.txt", "src"):
        assert name not in result.content
    assert "{" not in result.content  # no call that deletes anything is offered


@pytest.mark.parametrize("pattern", ["*", "**", "**/*", "./*", "*.*"])
def test_a_pattern_that_takes_everything_in_the_root_is_refused(
    work: Path, caller: Callable[[Iterable[Tool]], Call], pattern: str
) -> None:
    asked = Asked()
    result = tools_for(caller, work, asked=asked)("fs_delete", path=pattern, recursive=True)
    assert result.is_error and "refusing to delete everything in the sandbox root" in result.content
    assert asked.asked == [] and len(left(work)) == len(FILES) + 2
    assert not tools_for(caller, work)("fs_delete", path="src/*").is_error  # inside: fine


def test_the_fs_tool_s_refusal_names_its_own_call(
    work: Path, caller: Callable[[Iterable[Tool]], Call]
) -> None:
    call = tools_for(caller, work, mode="unified", request="delete the .tmp files")
    result = call("fs", action="delete", path=".", recursive=True)
    assert result.is_error
    expected = json.dumps({"action": "delete", "path": "*.tmp"})
    assert f'Next, call fs with action "delete" with {expected}:' in result.content


def test_the_working_directory_and_those_above_it_are_refused(
    work: Path, caller: Callable[[Iterable[Tool]], Call], monkeypatch: pytest.MonkeyPatch
) -> None:
    inner = work / "src" / "inner"
    inner.mkdir()
    (inner / "a.tmp").write_text("", encoding="utf-8")
    monkeypatch.chdir(inner)
    call = tools_for(caller, work, request="delete the .tmp files")
    here = call("fs_delete", path="src/inner", recursive=True)
    assert here.is_error and "'src/inner', the working directory" in here.content
    assert '{"path": "src/inner/*.tmp"}' in here.content
    above = call("fs_delete", path="src", recursive=True)
    assert above.is_error and "which holds the working directory" in above.content
    assert not call("fs_delete", path="src/inner/a.tmp").is_error


def test_an_empty_root_is_said_to_be_empty(
    sandbox: Path, caller: Callable[[Iterable[Tool]], Call]
) -> None:
    result = tools_for(caller, sandbox)("fs_delete", path=".", recursive=True)
    assert result.is_error and "'.' is empty" in result.content


@pytest.mark.parametrize(
    ("request_text", "patterns"),
    [
        ("delete all the .tmp files here", ["*.tmp"]),
        ("remove the tmp files, please", ["*.tmp"]),
        ("rm *.tmp and *.md", ["*.tmp", "*.md"]),
        ("Can you delete the TMP files?", ["*.tmp"]),
        ("delete the log files", []),  # no .log file here
        ("what is in notes.txt?", []),
        (None, []),
    ],
)
def test_the_patterns_a_request_names(request_text: str | None, patterns: list[str]) -> None:
    entries = [Path(name) for name in ("a.tmp", "b.md", "c.txt")]
    assert request_patterns(request_text, entries) == patterns
