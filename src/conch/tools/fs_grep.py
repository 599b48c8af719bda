"""``fs_grep``: lines of the files under a path that match a regular expression, and the
file names that match it too (small models grep for a name).
"""

from __future__ import annotations

import re
from pathlib import Path

from conch.tools import caps
from conch.tools.fs_base import SandboxFiles
from conch.tools.globs import SKIP_DIRS, WALK_MAX, compile_glob, walk


def grep(
    ops: SandboxFiles,
    pattern: str,
    path: str = ".",
    glob: str | None = None,
    ignore_case: bool = False,
    max_matches: int | None = None,
) -> str:
    """Lines matching a regular expression, as ``file:line:text``."""
    try:
        regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ValueError(f"{ops.prefix}grep: bad regular expression {pattern!r}: {exc}") from None
    cap = min(max_matches or caps.GREP_MAX_MATCHES_DEFAULT, caps.GREP_MAX_MATCHES)
    base = ops.resolve("grep", path)
    if not base.exists():
        raise ops.missing("grep", path)
    name_filter = compile_glob(glob) if glob else None
    files = [base] if base.is_file() else _grep_files(ops, base, name_filter, glob or "")
    ignored_glob = ""
    if glob and not files and not base.is_file():
        # A glob that keeps no file is most often not a name pattern at all (small
        # models pass "true" or ".*"): search every file, and say so.
        files = _grep_files(ops, base, None, "")
        ignored_glob = f"[no file name there matches the glob {glob!r}, so every file was searched]"
    notes = [ignored_glob] if ignored_glob else []
    # Small models grep for a name ("\.py$"): say which file names match, too.
    named = [] if base.is_file() else [f for f in files if regex.search(f.name)]
    out: list[str] = []
    hit_files = 0
    for file in files:
        hits = _grep_file(ops, regex, file, cap - len(out))
        hit_files += bool(hits)
        out.extend(hits)
        if len(out) >= cap:
            out.append(
                f"[stopped at {cap} matches; narrow the pattern or the path, "
                f"max_matches goes up to {caps.GREP_MAX_MATCHES}]"
            )
            return "\n".join([*out, *notes])
    if not out:
        where = ops.shown(base)
        if base.is_file():  # the word may be written otherwise: the file itself says
            return f"no matches for {pattern!r} in '{where}'; read it to see its text"
        if named:
            notes.append(f"[file names that match it: {ops.names(named)}]")
        return "\n".join(
            [
                f"no matches for {pattern!r} in '{where}' ({ops.tool('grep')} searches "
                f"the text inside files; {ops.tool('glob')} finds files by name)",
                *notes,
            ]
        )
    if named and len(named) < len(files):
        notes.append(f"[file names that match it too: {ops.names(named)}]")
    return "\n".join([*out, f"[{len(out)} matches in {hit_files} files]", *notes])


def _grep_files(
    ops: SandboxFiles, base: Path, name_filter: re.Pattern[str] | None, glob: str
) -> list[Path]:
    files: list[Path] = []
    for seen, (entry, is_dir) in enumerate(walk(base, SKIP_DIRS)):
        if seen >= WALK_MAX:
            break
        if is_dir:
            continue
        rel = entry.relative_to(base).as_posix()
        subject = rel if "/" in glob else entry.name
        if name_filter is not None and not name_filter.match(subject):
            continue
        if ops.confined.real_inside(entry):
            files.append(entry)
    return files


def _grep_file(ops: SandboxFiles, regex: re.Pattern[str], file: Path, room: int) -> list[str]:
    try:
        if file.stat().st_size > caps.GREP_MAX_FILE_BYTES:
            return []
        data = file.read_bytes()
    except OSError:
        return []
    if b"\x00" in data[: caps.SNIFF_BYTES]:
        return []
    hits: list[str] = []
    shown = ops.shown(file)
    lines = data.decode("utf-8", errors="replace").split("\n")
    if lines[-1] == "":  # the newline that ends the last line starts no line (as grep -n)
        lines.pop()
    for number, line in enumerate(lines, 1):
        if regex.search(line):
            hits.append(f"{shown}:{number}:{line.rstrip()[: caps.GREP_LINE_CHARS]}")
            if len(hits) >= room:
                break
    return hits
