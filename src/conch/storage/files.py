"""Writing files so that a crash, Ctrl+C or a full disk never leaves half a file behind."""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from pathlib import Path

# A temp file of an atomic write older than this was left by a process that died mid-write.
STALE_TEMP_SECONDS = 60.0


def atomic_write_text(path: Path, text: str, mode: int | None = None) -> None:
    """Write ``text`` to a temp file beside ``path``, fsync it, then rename it into place.

    Temp files of ``path`` that a killed writer left behind (older than a minute) go first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temps(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        elif path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def append_line(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Append ``data`` (one whole line) to ``path`` with one ``write`` to a file opened for
    appending, so concurrent writers never interleave within a line. The caller holds the
    file's lock when several processes write it. OSError as the system raises it."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, mode)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _remove_stale_temps(path: Path) -> None:
    """Remove the half-written temp files of ``path`` that writers killed mid-write left."""
    cutoff = time.time() - STALE_TEMP_SECONDS
    with contextlib.suppress(OSError):
        for temp in path.parent.glob(f".{glob_escape(path.name)}.*.tmp"):
            with contextlib.suppress(OSError):
                if temp.lstat().st_mtime < cutoff:
                    temp.unlink()


def glob_escape(name: str) -> str:
    """``name`` with the characters ``glob`` would read as a pattern escaped."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)
