"""History: one NDJSON line per entry, rotation, concurrent appends, malformed lines."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

from conch.storage.history import History, HistoryEntry


def entry(n: int, note: str = "") -> HistoryEntry:
    return HistoryEntry(
        ts=HistoryEntry.now(), cwd="/", argv=["conch", str(n)], exit_code=n, notes=note or None
    )


def test_entry_round_trips_through_the_log(tmp_path: Path) -> None:
    history = History(tmp_path)
    history.append(entry(7, "hello"))
    latest = history.latest()
    assert latest == HistoryEntry.from_json(json.loads(history.path.read_text(encoding="utf-8")))
    assert latest is not None and latest.exit_code == 7 and latest.notes == "hello"


def test_log_rotates_to_one_backup_past_the_cap(tmp_path: Path) -> None:
    history = History(tmp_path, max_bytes=2048)
    for n in range(60):
        history.append(entry(n, "x" * 50))
    assert history.backup.exists()
    assert history.path.stat().st_size <= 2048
    assert not (tmp_path / "history.log.2").exists()
    latest = history.latest()
    assert latest is not None and latest.exit_code == 59


def test_malformed_lines_are_skipped(tmp_path: Path) -> None:
    history = History(tmp_path)
    history.append(entry(1))
    with open(history.path, "a", encoding="utf-8") as handle:
        handle.write("{not json\n[1,2]\n\n")
    latest = history.latest()
    assert latest is not None and latest.exit_code == 1
    assert [e.exit_code for e in history.entries()] == [1]


def test_no_history_gives_none(tmp_path: Path) -> None:
    assert History(tmp_path).latest() is None


def _append_many(directory: str, worker: int) -> None:
    history = History(Path(directory), max_bytes=10_000_000)
    for n in range(50):
        history.append(entry(worker * 1000 + n, "y" * 300))


def test_concurrent_processes_append_whole_lines(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_append_many, args=(str(tmp_path), w)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    lines = (tmp_path / "history.log").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 200
    assert all(json.loads(line)["notes"] == "y" * 300 for line in lines)


def test_unknown_fields_from_newer_versions_are_ignored(tmp_path: Path) -> None:
    history = History(tmp_path)
    history.path.write_text(
        json.dumps({"ts": "t", "cwd": "/", "argv": [], "exit_code": 0, "future": 1}) + "\n",
        encoding="utf-8",
    )
    assert history.latest() is not None
