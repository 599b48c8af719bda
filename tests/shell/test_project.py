"""The project context of ``conch shell``: a short, bounded file tree of the working
directory, made again only when the directory changed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conch.shell.project import GitIgnore, ProjectContext, summarize_tree


def _tree(root: Path, files: list[str]) -> Path:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if not name.endswith("/"):
            path.write_text("x", encoding="utf-8")
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    return _tree(
        root,
        [
            "pyproject.toml",
            "README.md",
            "src/app/__init__.py",
            "src/app/main.py",
            "src/app/deep/er/still.py",
            "tests/test_main.py",
            "node_modules/left/index.js",
            ".git/HEAD",
            ".venv/pyvenv.cfg",
            "env2/pyvenv.cfg",
            ".github/workflows/ci.yml",
            ".secret",
            "out/report.log",
            "notes.tmp",
        ],
    )


def test_the_summary_is_a_short_indented_tree(project: Path) -> None:
    (project / ".gitignore").write_text("*.tmp\n/out/\n", encoding="utf-8")
    text = summarize_tree(project, home=str(project.parent)).text
    lines = text.split("\n")
    assert lines[0] == "[project] ~/proj (git, python)"
    assert lines[1:] == [
        ".github/",
        "  workflows/ (1 entry)",
        ".venv/ (not listed)",
        "env2/ (not listed)",
        "node_modules/ (not listed)",
        "src/",
        "  app/ (3 entries)",
        "tests/",
        "  test_main.py",
        "pyproject.toml",
        "README.md",
    ]
    # Hidden files, .git, and what .gitignore names are left out.
    assert ".secret" not in text and "notes.tmp" not in text and "out/" not in text


def test_the_tree_is_bounded_by_entries_per_directory_and_bytes(tmp_path: Path) -> None:
    root = _tree(tmp_path / "many", [f"file{n:03}.txt" for n in range(200)])
    text = summarize_tree(root, per_directory=10).text
    assert text.split("\n")[-1] == "... 190 more"
    assert len(text.split("\n")) == 12
    small = summarize_tree(root, per_directory=100, max_bytes=200).text
    assert len(small.encode()) <= 200 and small.endswith("... (cut to fit)")
    few = summarize_tree(root, entries=5, per_directory=100).text
    assert few.split("\n")[-1] == "... 195 more"
    with pytest.raises(ValueError):
        summarize_tree(root, depth=0)


def test_a_deeper_listing_goes_further(project: Path) -> None:
    text = summarize_tree(project, depth=3).text
    assert "    deep/ (1 entry)" in text and "    main.py" in text


def test_a_symbolic_link_is_not_followed(tmp_path: Path) -> None:
    root = _tree(tmp_path / "p", ["a.txt"])
    os.symlink("/", root / "everything")
    text = summarize_tree(root).text
    assert "everything@" in text and "bin" not in text


@pytest.mark.parametrize(
    ("patterns", "path", "is_dir", "ignored"),
    [
        ("*.log", "a/b/c.log", False, True),
        ("build/", "build", True, True),
        ("build/", "build", False, False),
        ("/top.txt", "top.txt", False, True),
        ("/top.txt", "sub/top.txt", False, False),
        ("docs/*.md", "docs/a.md", False, True),
        ("*.md\n!README.md", "README.md", False, False),
        ("# comment\n\n", "x", False, False),
    ],
)
def test_gitignore_patterns(patterns: str, path: str, is_dir: bool, ignored: bool) -> None:
    assert GitIgnore(patterns).ignored(path, is_dir) is ignored


def test_the_cache_is_kept_until_the_directory_changes(project: Path) -> None:
    context = ProjectContext(home="/nonexistent-home")
    first = context.get(project)
    assert first is not None and context.get(project) is first and context.made == 1
    # A new entry in a listed directory changes its modification time.
    (project / "tests" / "test_new.py").write_text("x", encoding="utf-8")
    _bump(project / "tests")
    second = context.get(project)
    assert second is not None and second is not first and "test_new.py" in second.text
    assert context.made == 2
    # Another directory is another summary.
    assert context.get(project / "src") is not None and context.made == 3


def test_a_new_gitignore_counts_as_a_change(project: Path) -> None:
    context = ProjectContext()
    first = context.get(project)
    (project / ".gitignore").write_text("README.md\n", encoding="utf-8")
    _bump(project)
    second = context.get(project)
    assert first is not None and second is not None and "README.md" not in second.text


def test_home_and_the_root_are_no_project(tmp_path: Path) -> None:
    context = ProjectContext(home=str(tmp_path))
    assert context.get(tmp_path) is None
    assert context.get("/") is None
    assert context.get(tmp_path / "gone") is None


def _bump(path: Path) -> None:
    """Make sure the modification time moved, even on a coarse clock."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
