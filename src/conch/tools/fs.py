"""The file tools: one small tool per action (``fs_read``, ``fs_write``, ...), a batch tool
(``fs``), or both, all confined to one sandbox directory.

Small models pick a tool more reliably from flat one-verb schemas, so the split tools are the
default; the unified ``fs`` tool lands many operations in one call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from conch.tools.fs_base import BeforeDelete, BeforeMove, BeforeWrite, Request
from conch.tools.fs_batch import batch_tool
from conch.tools.fs_ops import Files
from conch.tools.paths import Confined
from conch.tools.tool import Tool, make_tool

Positive = Annotated[int, Field(ge=1)]
NonNegative = Annotated[int, Field(ge=0)]


def fs_tools(
    root: Path,
    mode: Literal["split", "unified", "both"] = "split",
    before_delete: BeforeDelete | None = None,
    request: Request | None = None,
    before_write: BeforeWrite | None = None,
    before_move: BeforeMove | None = None,
) -> list[Tool]:
    """The file tools for the sandbox ``root`` (an existing directory): ``split`` gives
    ``fs_read``, ``fs_write``, ``fs_edit``, ``fs_list``, ``fs_glob``, ``fs_grep``,
    ``fs_mkdir``, ``fs_delete``, ``fs_move`` and ``fs_diff``; ``unified`` gives the one batch
    tool ``fs``; ``both`` gives all of them. ``before_delete`` is asked before any delete,
    ``before_write`` before any write (with its diff) and ``before_move`` before any move;
    ``request`` gives the request the model is working on, for hints (``Files``)."""
    if mode not in ("split", "unified", "both"):
        raise ValueError(f"unknown file tools mode {mode!r} (split, unified or both)")
    confined = Confined(root)
    deleter = 'fs with action "delete"' if mode == "unified" else "fs_delete"
    system = (
        f"The file tools work only inside {confined.root}. Give paths relative to it, "
        'like "src/main.py"; paths that lead outside it are refused. Read a file before you '
        "change it, and copy the text to replace exactly as it was shown, without the line "
        "numbers. When the user wants a result in a file, write that file before you answer. "
        f'To delete files of one kind, give {deleter} a pattern, like "*.log".'
    )
    tools: list[Tool] = []
    if mode in ("split", "both"):
        files = Files(confined, before_delete=before_delete, request=request)
        files.before_write, files.before_move = before_write, before_move
        tools.extend(split_tools(files))
    if mode in ("unified", "both"):
        files = Files(confined, prefix="fs ", before_delete=before_delete, request=request)
        files.before_write, files.before_move = before_write, before_move
        tools.append(batch_tool(files))
    tools[0] = replace(tools[0], system=system)  # said once, whichever tools are offered
    return tools


def split_tools(files: Files) -> list[Tool]:
    """One tool per action over ``files``."""

    def fs_read(
        path: str,
        start_line: Positive | None = None,
        max_lines: Positive | None = None,
        offset: NonNegative | None = None,
        max_bytes: Positive | None = None,
    ) -> str:
        """Read a text file. Each line comes back as its number, "|", then the text: "12|x = 1"
        (the number and "|" are not in the file).

        Read a file before you edit it. Long files are cut short; the last line says which
        lines you got and gives the exact arguments to read on.

        - path: the file, relative to the sandbox root.
        - start_line: read by lines, from this line (1 is the first); max_lines is how many
          (default 200, at most 2000).
        - offset / max_bytes: read by bytes instead (default: the first 65536 bytes).

        Example: {"path": "src/app.py", "start_line": 1, "max_lines": 100}
        """
        return files.read(path, start_line, max_lines, offset, max_bytes)

    def fs_write(path: str, content: str) -> str:
        """Create a file, or replace everything in it, with `content`. Missing directories
        on the way are created. To change only part of a file, use fs_edit.

        Example: {"path": "notes/todo.txt", "content": "buy milk\\n"}
        """
        return files.write(path, content)

    def fs_edit(path: str, old_text: str, new_text: str, replace_all: bool = False) -> str:
        """Replace exact text in a file. old_text must match the file exactly, spaces and
        line breaks included: copy it from fs_read without the line numbers. It must occur
        once; add a neighbouring line to make it unique, or set replace_all to true to change
        every place it occurs.

        Example: {"path": "app.py", "old_text": "DEBUG = True", "new_text": "DEBUG = False"}
        """
        return files.edit(path, old_text, new_text, replace_all)

    def fs_list(path: str = ".", recursive: bool = False) -> str:
        """List a directory. Directories end with "/", files show their size (and
        "executable" when they can be run), symlinks show where they point. Set recursive to true to include everything below it.

        Example: {"path": "src", "recursive": false}
        """
        return files.list_dir(path, recursive)

    def fs_glob(pattern: str, path: str = ".") -> str:
        """Find files and directories whose path matches a pattern. "*" matches inside one
        directory level, "**/" any number of directories, "{a,b}" either choice.
        "*.py" finds Python files at the top level only; "**/*.py" finds them at any depth.

        Example: {"pattern": "**/*.{py,toml}", "path": "."}
        """
        return files.glob(pattern, path)

    def fs_grep(
        pattern: str,
        path: str = ".",
        glob: str | None = None,
        ignore_case: bool = False,
        max_matches: Positive | None = None,
    ) -> str:
        """Search inside files for lines that match a regular expression (Python syntax).
        Each match comes back as "file:line:text". path may be a directory (searched
        recursively) or one file; glob limits which files are searched ("*.py" matches file
        names at any depth). At most max_matches lines (default 100, at most 500).

        Example: {"pattern": "TODO|FIXME", "path": "src", "glob": "*.py"}
        """
        return files.grep(pattern, path, glob, ignore_case, max_matches)

    def fs_mkdir(path: str) -> str:
        """Create a directory, and any missing directories above it. Nothing happens if it
        already exists.

        Example: {"path": "build/reports"}
        """
        return files.mkdir(path)

    def fs_delete(path: str, recursive: bool = False) -> str:
        """Delete a file or a symlink. A directory is deleted only when recursive is true,
        and then everything in it goes too. path may be a pattern: "*.log" deletes every
        .log file at the top level, "**/*.log" at any depth. The sandbox root and the
        working directory themselves are never deleted.

        Example: {"path": "build/old.log"}
        """
        return files.delete(path, recursive)

    def fs_move(path: str, destination: str) -> str:
        """Rename or move a file or directory. When destination is an existing directory, the
        file goes into it. An existing file is never replaced. path may be a pattern: "*.txt"
        to "*.md" renames each match, "*.py" to "src" moves each into src.

        Example: {"path": "draft.txt", "destination": "final.txt"}
        """
        return files.move(path, destination)

    def fs_diff(
        path: str,
        other: str | None = None,
        new_text: str | None = None,
        context: Annotated[int, Field(ge=0, le=50)] = 3,
    ) -> str:
        """Show a unified diff: lines starting "-" are removed, "+" are added. Give other to
        compare two files, or new_text to preview a change to path before writing it.

        Example: {"path": "config.yaml", "new_text": "debug: false\\n"}
        """
        return files.diff(path, other, new_text, context)

    triggers: list[tuple[Callable[..., str], str]] = [
        (fs_read, "Read a text file, with line numbers."),
        (fs_write, "Create a file or replace all of its content."),
        (fs_edit, "Change part of a file's text: replace exact text with new text."),
        (fs_list, "List what is in a directory."),
        (fs_glob, "Find files by name pattern, like **/*.py."),
        (fs_grep, "Search inside files for a regular expression."),
        (fs_mkdir, "Create a directory."),
        (fs_delete, "Delete a file, or many by a pattern like *.log."),
        (fs_move, "Rename or move a file, or many by a pattern like *.txt."),
        (fs_diff, "Compare two files, or a file with proposed new text."),
    ]
    return [make_tool(function, trigger=trigger) for function, trigger in triggers]
