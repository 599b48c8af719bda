"""Numbered views of a text file for the model: by lines or by bytes, always capped.

Every line shown starts with its number and ``|`` (``12|text``); a last bracketed line says
which part of the file this is and, when there is more, the exact arguments to read on.
"""

from __future__ import annotations

from typing import BinaryIO

from conch.tools import caps


def numbered_lines(
    handle: BinaryIO, shown: str, size: int, start: int, limit: int | None, who: str
) -> str:
    """Up to ``limit`` numbered lines from line ``start``, and a last line saying which lines
    these are of how many and how to read on."""
    count = min(limit or caps.READ_LINES_DEFAULT, caps.READ_LINES_MAX)
    countable = size <= caps.COUNT_LINES_MAX_FILE
    out: list[str] = []
    used, total, clipped = 0, 0, False
    for number, raw in enumerate(handle, start=1):
        total = number
        if number < start:
            continue
        if len(out) < count and not clipped:
            room = caps.READ_BYTES_MAX - used
            clipped = len(raw) > room
            out.append(f"{number}|{_text(raw[:room])}")
            used += len(raw)
        elif not countable:
            break
    if not out:
        raise ValueError(f"{who}: start_line {start} is past the end of '{shown}' ({total} lines)")
    last = start + len(out) - 1
    known = countable or last == total
    note = f"[{shown}: lines {start}-{last}"
    over = caps.human_size(caps.COUNT_LINES_MAX_FILE)
    note += f" of {total}" if known else f" (file over {over}: total not counted)"
    if clipped or not known or last < total:
        if clipped:
            note += f"; clipped at {caps.human_size(caps.READ_BYTES_MAX)}"
        note += f'; read on with {{"path": "{shown}", "start_line": {last + 1}}}'
    return "\n".join([*out, note + "]"])


def numbered_span(
    handle: BinaryIO, shown: str, size: int, offset: int, limit: int | None, who: str
) -> str:
    """The numbered lines in up to ``limit`` bytes from ``offset`` (ending on a line boundary
    when more follows), and a last line saying where they are and how to read on."""
    cap = min(limit or caps.READ_BYTES_DEFAULT, caps.READ_BYTES_MAX)
    if offset >= size:
        raise ValueError(f"{who}: offset {offset} is past the end of '{shown}' ({size} bytes)")
    first = 1 + _count_newlines(handle, offset)
    handle.seek(offset)
    chunk = handle.read(cap)
    end = offset + len(chunk)
    if end < size and b"\n" in chunk:  # stop on a line boundary
        chunk = chunk[: chunk.rindex(b"\n") + 1]
        end = offset + len(chunk)
    lines = chunk.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    out = [f"{first + i}|{_text(raw)}" for i, raw in enumerate(lines)]
    last = first + len(lines) - 1
    total = None
    if size <= caps.COUNT_LINES_MAX_FILE:
        handle.seek(0)
        total = _count_lines(handle)
    of = f" of {total}" if total is not None else ""
    note = f"[{shown}: lines {first}-{last}{of}, bytes {offset}-{end - 1} of {size}"
    if end < size:
        note += f'; clipped, read on with {{"path": "{shown}", "offset": {end}}}'
    return "\n".join([*out, note + "]"])


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace").rstrip("\n").rstrip("\r")


def _count_newlines(handle: BinaryIO, limit: int) -> int:
    handle.seek(0)
    count, left = 0, limit
    while left > 0:
        block = handle.read(min(left, 1 << 20))
        if not block:
            break
        count += block.count(b"\n")
        left -= len(block)
    return count


def _count_lines(handle: BinaryIO) -> int:
    count, last = 0, b""
    while block := handle.read(1 << 20):
        count += block.count(b"\n")
        last = block
    return count + (1 if last and not last.endswith(b"\n") else 0)
