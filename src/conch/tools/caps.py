"""Size caps shared by the built-in tools, and clipping that says what was left out.

A tool result goes into the model's context, so every tool bounds what it returns. Clipped
text always ends with a note saying it was clipped and how to get the rest.
"""

from __future__ import annotations

KIB = 1024
MIB = 1024 * KIB

# fs_read: line mode (start_line given) and byte mode (the default).
READ_LINES_DEFAULT = 200
READ_LINES_MAX = 2000
READ_BYTES_DEFAULT = 64 * KIB
READ_BYTES_MAX = 1 * MIB
COUNT_LINES_MAX_FILE = 8 * MIB  # the total line count is reported for files up to this size

WRITE_MAX_BYTES = 8 * MIB
SNIFF_BYTES = 8 * KIB  # a NUL byte in this much of a file marks it binary
LIST_MAX_ENTRIES = 500
GLOB_MAX_MATCHES = 500
MOVE_MAX_ENTRIES = 200  # entries one fs_move with a pattern may move
DELETE_MAX_ENTRIES = 200  # entries one fs_delete with a pattern may delete
GREP_MAX_MATCHES_DEFAULT = 100
GREP_MAX_MATCHES = 500
GREP_MAX_FILE_BYTES = 8 * MIB
GREP_LINE_CHARS = 300
DIFF_MAX_BYTES = 64 * KIB

# The unified fs tool's batches.
BATCH_MAX_OPS = 50
BATCH_MAX_FILES = 20
BATCH_BODY_CLIP = 2 * KIB

# memory: (default, max) per action.
MEMORY_SEARCH = (10, 20)
MEMORY_LIST = (50, 200)
MEMORY_KEYWORDS = (200, 500)
MEMORY_LOAD_MAX_BYTES = 32 * KIB
MEMORY_APPEND_MAX_BYTES = 64 * KIB

# web
WEB_DOWNLOAD_MAX_BYTES = 4 * MIB
WEB_TEXT_CHARS = 24_000
WEB_SEARCH_LIMIT = (5, 10)


def clip_bytes(text: str, limit: int) -> tuple[str, bool]:
    """``text`` cut to at most ``limit`` UTF-8 bytes on a character boundary, and whether it
    was cut."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text, False
    return data[:limit].decode("utf-8", errors="ignore"), True


def clip_note(text: str, limit: int, hint: str) -> str:
    """``text`` cut to ``limit`` UTF-8 bytes; when cut, a last line says so and gives ``hint``
    (how to get the rest)."""
    clipped, was_clipped = clip_bytes(text, limit)
    if not was_clipped:
        return text
    total = len(text.encode("utf-8"))
    return f"{clipped.rstrip()}\n[clipped: showed {limit} of {total} bytes; {hint}]"


def human_size(size: int) -> str:
    """``size`` bytes as a short figure: ``812 B``, ``4.2 KiB``, ``1.5 MiB``."""
    if size < KIB:
        return f"{size} B"
    if size < MIB:
        return f"{size / KIB:.1f} KiB"
    return f"{size / MIB:.1f} MiB"
