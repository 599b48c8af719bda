"""Files a reply proposes, shown as a unified diff against the disk, and written only as
the diff saw them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conch.shell.diffs import (
    ChangeError,
    Proposed,
    apply_change,
    change_for,
    changes,
    proposed_files,
)

APP = "def main():\n    print('hello')\n"


def test_a_file_line_names_the_block_after_it() -> None:
    reply = (
        "Change the greeting.\n"
        "FILE: src/app.py\n"
        "```python\n"
        "def main():\n    print('hi')\n"
        "```\n"
        "Then run it.\nCMD: python src/app.py\n"
    )
    [proposed] = proposed_files(reply)
    assert proposed.path == "src/app.py"
    assert proposed.content == "def main():\n    print('hi')\n"
    assert proposed.lang == "python"
    start, end = proposed.span
    assert reply[start:end].startswith("```python") and reply[start:end].endswith("```")


@pytest.mark.parametrize(
    ("lead", "info", "path", "lang"),
    [
        ("", "python src/app.py", "src/app.py", "python"),
        ("", "src/app.py", "src/app.py", ""),
        ("", "python:src/app.py", "src/app.py", "python"),
        ("", 'js title="web/app.js"', "web/app.js", "js"),
        ("`src/app.py`:\n", "python", "src/app.py", "python"),
        ("**notes.md**\n\n", "markdown", "notes.md", "markdown"),
        ("FILE: Makefile\n", "make", "Makefile", "make"),
    ],
)
def test_the_ways_a_block_names_its_file(lead: str, info: str, path: str, lang: str) -> None:
    [proposed] = proposed_files(f"Here:\n{lead}```{info}\nbody\n```\n")
    assert (proposed.path, proposed.lang, proposed.content) == (path, lang, "body\n")


def test_blocks_that_name_no_file_are_not_proposals() -> None:
    reply = (
        "Run this:\n```bash\nls -la\n```\n"
        "It prints:\n```\ntotal 0\n```\n"
        "Version 3.11 of it:\n```python 3.11\nx = 1\n```\n"
    )
    assert proposed_files(reply) == []


def test_a_file_proposed_twice_keeps_its_last_block() -> None:
    reply = "FILE: a.py\n```python\nfirst\n```\nBetter:\nFILE: a.py\n```python\nsecond\n```\n"
    assert [p.content for p in proposed_files(reply)] == ["second\n"]


def test_the_diff_of_a_changed_file(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(APP, encoding="utf-8")
    change = change_for(Proposed("app.py", "def main():\n    print('hi')\n"), tmp_path)
    assert not change.problem and not change.partial and not change.new
    assert (change.added, change.removed) == (1, 1)
    assert change.diff.splitlines() == [
        "--- a/app.py",
        "+++ b/app.py",
        "@@ -1,2 +1,2 @@",
        " def main():",
        "-    print('hello')",
        "+    print('hi')",
    ]
    assert change.summary == "app.py: +1 -1"


def test_a_new_file_and_an_unchanged_one(tmp_path: Path) -> None:
    new = change_for(Proposed("docs/notes.md", "one\ntwo"), tmp_path)
    assert new.new and new.summary == "docs/notes.md: new file, 2 lines"
    assert new.diff.startswith("--- /dev/null\n+++ b/docs/notes.md\n")
    assert new.diff.endswith("+two\n\\ No newline at end of file\n")
    (tmp_path / "same.txt").write_text("x\n", encoding="utf-8")
    same = change_for(Proposed("same.txt", "x\n"), tmp_path)
    assert same.unchanged and same.diff == "" and same.summary == "same.txt: unchanged"


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("../outside.txt", "outside the shell's directory"),
        ("/etc/hosts", "outside the shell's directory"),
        (".git/config", "inside .git"),
        ("sub", "a directory"),
        ("link/file.txt", "outside the shell's directory"),
        ("blob.bin", "a binary file"),
        ("big.txt", "larger than"),
    ],
)
def test_what_cannot_be_written_says_why(tmp_path: Path, path: str, problem: str) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / ".git").mkdir()
    os.symlink(tmp_path, root / "link")
    (root / "blob.bin").write_bytes(b"\x00\x01")
    (root / "big.txt").write_text("x" * 600_000, encoding="utf-8")
    change = change_for(Proposed(path, "new\n"), root)
    assert problem in change.problem and problem in change.summary
    with pytest.raises(ChangeError):
        apply_change(change)


@pytest.mark.parametrize(
    "snippet",
    [
        "def main():\n    # ... rest of the file unchanged\n",
        "import os\n// ...\n",
        "... existing code ...\nx = 1\n",
        "<!-- ... -->\n<p>hi</p>\n",
    ],
)
def test_a_snippet_is_marked_partial(tmp_path: Path, snippet: str) -> None:
    (tmp_path / "app.py").write_text(APP, encoding="utf-8")
    change = change_for(Proposed("app.py", snippet), tmp_path)
    assert "may be a snippet" in change.partial and "may be a snippet" in change.summary


def test_a_much_shorter_text_is_marked_partial_but_ellipsis_code_is_not(tmp_path: Path) -> None:
    long = "".join(f"line {n}\n" for n in range(40))
    (tmp_path / "long.txt").write_text(long, encoding="utf-8")
    short = change_for(Proposed("long.txt", "line 0\nline 1\n"), tmp_path)
    assert "replaces 40 lines with 2" in short.partial
    stub = "class P(Protocol):\n    def run(self) -> None:\n        ...\n"
    assert change_for(Proposed("p.py", stub), tmp_path).partial == ""


def test_applying_writes_only_what_the_diff_saw(tmp_path: Path) -> None:
    target = tmp_path / "app.py"
    target.write_text(APP, encoding="utf-8")
    target.chmod(0o754)
    change = change_for(Proposed("app.py", "print('new')\n"), tmp_path)
    apply_change(change)
    assert target.read_text(encoding="utf-8") == "print('new')\n"
    assert target.stat().st_mode & 0o777 == 0o754
    # The file changed after the diff was made: not written over.
    stale = change_for(Proposed("app.py", "print('newer')\n"), tmp_path)
    target.write_text("edited by hand\n", encoding="utf-8")
    with pytest.raises(ChangeError, match="changed since the diff"):
        apply_change(stale)
    assert target.read_text(encoding="utf-8") == "edited by hand\n"


def test_a_new_file_is_written_with_its_directories(tmp_path: Path) -> None:
    [change] = changes("FILE: pkg/mod.py\n```python\nx = 1\n```\n", tmp_path)
    apply_change(change)
    assert (tmp_path / "pkg" / "mod.py").read_text(encoding="utf-8") == "x = 1\n"
    # Made again, it would now overwrite a file the diff did not see.
    with pytest.raises(ChangeError):
        apply_change(change)
