"""The files a suggested command reads, and which of them do not exist where it would run."""

from __future__ import annotations

from pathlib import Path

import pytest

from conch.shell.paths import MissingPath, missing_paths, nearby

APP_LOG = "'app.log' does not exist in the current directory (there is logs/app.log)"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "app.log").write_text("a\nb\nc\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("notes\n", encoding="utf-8")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "app.log").write_text("hidden\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("command", "missing"),
    [
        ("tail -n 3 app.log", [APP_LOG]),
        ("grep -n error app.log", [APP_LOG]),
        ("sed -n '1,3p' app.log | head -n 1", [APP_LOG]),
        ("cat notes.txt missing.txt", ["'missing.txt' does not exist in the current directory"]),
        ("cd nologs && tail app.log", ["'nologs' does not exist in the current directory"]),
        ("find nologs -name '*.log'", ["'nologs' does not exist in the current directory"]),
        ("ls *.csv", ["'*.csv' matches nothing in the current directory"]),
        ("python3 script.py", ["'script.py' does not exist in the current directory"]),
        ("tail ~/nothere.log", ["'~/nothere.log' does not exist"]),
        ("jq .name < package.json", ["'package.json' does not exist in the current directory"]),
        ("wc -l < app.log", [APP_LOG]),
        ("cd logs && tail missing.log", ["'missing.log' does not exist in logs/"]),
    ],
)
def test_a_path_that_does_not_exist_is_named_with_the_files_of_that_name_nearby(
    project: Path, command: str, missing: list[str]
) -> None:
    assert [m.problem for m in missing_paths(command, project, str(project))] == missing


@pytest.mark.parametrize(
    "command",
    [
        "tail -n 3 logs/app.log",
        "cd logs && tail -n 3 app.log",
        "grep -v foo.bar logs/app.log",
        "grep -r foo --include '*.log' .",
        "touch new.txt && cat new.txt",
        "echo hi > out.txt; cat out.txt",
        "sort -o sorted.txt notes.txt",
        "cp notes.txt backup.txt",
        "rm -f gone.txt",
        "python3 -m http.server",
        "curl example.com/x.json",
        "git log -- app.log",
        "make build.log && cat build.log",
        "du -sh logs/*",
        "ls",
        "wc -l < logs/app.log",
        "cat <<< missing.txt",
    ],
)
def test_what_exists_or_the_command_makes_is_not_missing(project: Path, command: str) -> None:
    assert missing_paths(command, project, str(project)) == []


def test_a_file_of_the_same_name_is_found_nearest_first_and_not_in_hidden_directories(
    project: Path,
) -> None:
    (project / "old" / "deep").mkdir(parents=True)
    (project / "old" / "deep" / "app.log").write_text("", encoding="utf-8")
    assert nearby(project, "app.log") == ["logs/app.log", "old/deep/app.log"]
    assert nearby(project, "*.txt") == ["notes.txt"]


def test_a_missing_path_says_where_it_was_looked_for() -> None:
    assert MissingPath("x.log").problem == "'x.log' does not exist in the current directory"
    assert MissingPath("/x.log").problem == "'/x.log' does not exist"
    assert MissingPath("x.log", "sub/", ("a/x.log",)).problem == (
        "'x.log' does not exist in sub/ (there is a/x.log)"
    )
