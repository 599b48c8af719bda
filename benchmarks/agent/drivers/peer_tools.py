"""The tools every peer agent is given: read, write and list files, run a shell command.

Plain functions with the standard library only, so each peer's own tool machinery wraps them
(smolagents' ``@tool``, llm's function tools) and every peer gets the same four capabilities
with the same descriptions. Paths are relative to the working directory (the task's project);
the benchmark's sandbox, not these functions, limits what can be touched. ``CALLS`` counts the
calls, so a driver can report how many tool calls an agent made.
"""

from __future__ import annotations

import os
import subprocess
from collections import Counter

OUTPUT_LIMIT = 8000  # characters of a result handed back to the model
SHELL_TIMEOUT = 60

CALLS: Counter[str] = Counter()


def _clip(text: str) -> str:
    if len(text) <= OUTPUT_LIMIT:
        return text
    return text[:OUTPUT_LIMIT] + f"\n[... {len(text) - OUTPUT_LIMIT} more characters]"


def read_file(path: str) -> str:
    """Read a text file and return its content.

    Args:
        path: The file's path, relative to the current directory or absolute.
    """
    CALLS["read_file"] += 1
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return _clip(handle.read())
    except OSError as exc:
        return f"error: {exc}"


def write_file(path: str, content: str) -> str:
    """Write text to a file, creating it (and its parent directories) or replacing it.

    Args:
        path: The file's path, relative to the current directory or absolute.
        content: The complete new content of the file.
    """
    CALLS["write_file"] += 1
    try:
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(content)
    except OSError as exc:
        return f"error: {exc}"
    return f"wrote {len(content)} characters to {path}"


def list_files(path: str = ".") -> str:
    """List the files and directories under a directory, recursively, one path per line.

    Args:
        path: The directory to list, relative to the current directory or absolute.
    """
    CALLS["list_files"] += 1
    if not os.path.isdir(path):
        return f"error: {path} is not a directory"
    lines: list[str] = []
    for current, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            lines.append(os.path.relpath(os.path.join(current, name), path))
        for name in dirs:
            lines.append(os.path.relpath(os.path.join(current, name), path) + "/")
    return _clip("\n".join(sorted(lines)) or "(empty)")


def run_shell(command: str) -> str:
    """Run a bash command in the current directory and return its exit code and output.

    Args:
        command: The command line to run with bash.
    """
    CALLS["run_shell"] += 1
    try:
        done = subprocess.run(
            ["bash", "-c", command],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=SHELL_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return f"error: the command did not finish within {SHELL_TIMEOUT} s"
    parts = [f"exit code {done.returncode}"]
    if done.stdout:
        parts.append("stdout:\n" + done.stdout)
    if done.stderr:
        parts.append("stderr:\n" + done.stderr)
    return _clip("\n".join(parts))


TOOLS = (read_file, write_file, list_files, run_shell)
