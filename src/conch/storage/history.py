"""The NDJSON history log: one entry per invocation, rotated at a size cap, safe to share."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from conch.errors import ConchError
from conch.storage.files import append_line

HISTORY_FILE = "history.log"
HISTORY_MAX_BYTES = 1_000_000


@dataclass(slots=True)
class HistoryEntry:
    """What one conch invocation did: its request, the command, the decision and the outcome."""

    ts: str
    cwd: str
    argv: list[str]
    exit_code: int
    generated_command: str | None = None
    unsafe_mode: bool = False
    confirm: bool = False
    explain: bool = False
    scope: str | None = None
    peek_files: list[str] = field(default_factory=list)
    notes: str | None = None
    request: str | None = None
    provider: str | None = None
    model: str | None = None
    risk: str | None = None
    decision: str | None = None
    executed: bool = False
    duration_ms: int | None = None
    validation: dict[str, Any] | None = None
    candidates: list[dict[str, Any]] | None = None
    tool_calls: list[dict[str, Any]] | None = None

    @staticmethod
    def now() -> str:
        """The current time as ISO 8601 UTC with a Z suffix."""
        return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    @classmethod
    def record(
        cls,
        *,
        cwd: Path | str,
        argv: list[str],
        exit_code: int,
        started: float,
        notes: list[str] | tuple[str, ...] = (),
        **fields_: Any,
    ) -> HistoryEntry:
        """The entry of an invocation that began at ``started`` (``time.monotonic()``) and
        ended now with ``exit_code``: every surface's entries are built here. ``notes`` are
        joined; ``fields_`` are the other fields by name."""
        import time

        return cls(
            ts=cls.now(),
            cwd=str(cwd),
            argv=list(argv),
            exit_code=int(exit_code),
            notes="; ".join(notes) or None,
            duration_ms=int((time.monotonic() - started) * 1000),
            **fields_,
        )

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HistoryEntry:
        """An entry from a parsed line, ignoring fields this version does not know."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


class History:
    """Appends entries under a file lock and rotates the log to ``.1`` past ``max_bytes``."""

    def __init__(self, directory: Path, max_bytes: int = HISTORY_MAX_BYTES) -> None:
        self.path = directory / HISTORY_FILE
        self.backup = directory / f"{HISTORY_FILE}.1"
        self.max_bytes = max_bytes
        self._lock = FileLock(str(directory / f"{HISTORY_FILE}.lock"))

    def append(self, entry: HistoryEntry) -> None:
        """Write one entry as one line; several processes may append at once."""
        line = json.dumps(asdict(entry), ensure_ascii=False) + "\n"
        data = line.encode("utf-8")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._lock.acquire(timeout=10):
                try:
                    size = self.path.stat().st_size
                except FileNotFoundError:
                    size = 0
                if size and size + len(data) > self.max_bytes:
                    os.replace(self.path, self.backup)
                # One write() of the whole line keeps lines whole even if the lock were bypassed.
                append_line(self.path, data)
        except Timeout:
            raise ConchError(f"history log {self.path} is locked by another process") from None
        except OSError as exc:
            raise ConchError(f"cannot write history log {self.path}: {exc.strerror}") from None

    def entries(self) -> Iterator[HistoryEntry]:
        """Entries oldest first across the backup and the current log; bad lines are skipped."""
        for path in (self.backup, self.path):
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    for line in handle:
                        entry = _parse(line)
                        if entry is not None:
                            yield entry
            except FileNotFoundError:
                continue

    def latest(self, where: Callable[[HistoryEntry], bool] | None = None) -> HistoryEntry | None:
        """The newest well-formed entry (that ``where`` accepts), or None when there is none."""
        for path in (self.path, self.backup):
            try:
                lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            except FileNotFoundError:
                continue
            for line in reversed(lines):
                entry = _parse(line)
                if entry is not None and (where is None or where(entry)):
                    return entry
        return None


def _parse(line: str) -> HistoryEntry | None:
    line = line.strip()
    if not line:
        return None
    try:
        data = json.loads(line)
        return HistoryEntry.from_json(data) if isinstance(data, dict) else None
    except (ValueError, TypeError):
        return None
