"""Nothing lost: concurrent history appends across rotation, ``kill -9`` in the middle of
session, memory, audit and config writes, and a full disk.

``CONCH_HARDENING_LONG=1`` runs the long variants (more kill iterations)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import random
import re
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from report import long_runs, record

from cliutil import CliResult, capture, write_config
from conch.cli.sessionfile import save_session
from conch.config.edits import add_prompt
from conch.config.settings import AllowedProgram, PromptConfig
from conch.execute.audit import append_audit, audit_line
from conch.messages import Message
from conch.storage.history import History, HistoryEntry
from conch.tools.memory import Memory

Conch = Callable[..., CliResult]
WRITERS = 8
ENTRIES = 1000


def _forked(work: Callable[[], None]) -> int:
    """Run ``work`` in a forked child (conch already imported: no start-up cost); its pid."""
    pid = os.fork()
    if pid == 0:  # the child: never return into the test runner
        code = 0
        try:
            work()
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    return pid


def _wait(pid: int) -> int:
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


# -- concurrent history ------------------------------------------------------------------


def _append_all(directory: Path, writer: int, max_bytes: int) -> None:
    history = History(directory, max_bytes)
    pad = "p" * (writer * 7)  # entries of several sizes
    for index in range(ENTRIES):
        history.append(
            HistoryEntry(
                ts=HistoryEntry.now(),
                cwd="/tmp",
                argv=["conch", f"w{writer}", str(index)],
                exit_code=0,
                request=f"writer {writer} entry {index} {pad}",
            )
        )


def _history_lines(directory: Path) -> tuple[list[tuple[int, int]], int]:
    """(writer, index) of every line of the log and its backup; the number of bad lines."""
    seen: list[tuple[int, int]] = []
    bad = 0
    for name in ("history.log.1", "history.log"):
        path = directory / name
        if not path.exists():
            continue
        data = path.read_bytes()
        assert data.endswith(b"\n")
        for line in data.split(b"\n")[:-1]:
            try:
                argv = json.loads(line)["argv"]
                seen.append((int(argv[1][1:]), int(argv[2])))
            except (ValueError, KeyError, IndexError):
                bad += 1
    return seen, bad


def _run_writers(directory: Path, max_bytes: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    pids = [_forked(lambda w=w: _append_all(directory, w, max_bytes)) for w in range(WRITERS)]
    assert [_wait(pid) for pid in pids] == [0] * WRITERS


def test_eight_writers_lose_nothing_across_a_rotation(tmp_path: Path) -> None:
    # Room for all 8,000 entries in the log and its backup: the log rotates once, mid-run.
    directory = tmp_path / "state"
    sample = tmp_path / "sample"
    sample.mkdir()
    _run_writers(sample, max_bytes=10**9)
    total = sum(p.stat().st_size for p in sample.glob("history.log*"))
    _run_writers(directory, max_bytes=int(total * 0.6))
    seen, bad = _history_lines(directory)
    counts = Counter(seen)
    expected = {(w, i) for w in range(WRITERS) for i in range(ENTRIES)}
    lost = len(expected - set(counts))
    doubled = sum(1 for n in counts.values() if n > 1)
    record(
        "durability",
        "history-one-rotation",
        writers=WRITERS,
        entries=WRITERS * ENTRIES,
        lost=lost,
        duplicated=doubled,
        bad_lines=bad,
    )
    assert (directory / "history.log.1").exists(), "the log never rotated"
    assert (lost, doubled, bad) == (0, 0, 0)


def test_eight_writers_across_many_rotations_keep_whole_lines_in_order(tmp_path: Path) -> None:
    """With a small cap the log rotates dozens of times and only the backup is kept, so old
    entries go by design: what is left of each writer is its latest entries, with no gap, no
    duplicate and no broken line."""
    directory = tmp_path / "state"
    _run_writers(directory, max_bytes=40_000)
    seen, bad = _history_lines(directory)
    gaps = 0
    for writer in range(WRITERS):
        mine = [i for w, i in seen if w == writer]
        if mine:
            gaps += int(mine != list(range(mine[0], ENTRIES)))
    record(
        "durability",
        "history-many-rotations",
        writers=WRITERS,
        entries=WRITERS * ENTRIES,
        kept=len(seen),
        writers_with_gaps=gaps,
        duplicated=len(seen) - len(set(seen)),
        bad_lines=bad,
    )
    assert (bad, gaps, len(seen) - len(set(seen))) == (0, 0, 0)
    assert 0 < len(seen) < WRITERS * ENTRIES


# -- kill -9 mid-write -------------------------------------------------------------------

AUDIT_LINE = re.compile(r"^\S+Z \| \S+ \| echo (\d+) z* \| exit:0 \| \d+\.\d{3}s$")
MEMORY_BLOCK = re.compile(r"^begin (\d+) y* end \1$")


def _write_forever(root: Path) -> None:
    """Session, memory, audit and config writes in a loop, as conch makes them."""
    memory = Memory(root / "memory")
    config = root / "config.yaml"
    rng = random.Random(os.getpid())
    step = 0
    while True:
        step += 1
        turns = [Message("user", f"turn {n} " + "x" * rng.randrange(4000)) for n in range(9)]
        save_session(root / "session.json", root, "m", turns)
        with contextlib.suppress(ValueError):  # an entry at its size cap: the next one soon
            memory.append(f"durability part{step // 12}", f"begin {step} {'y' * 900} end {step}")
        line = audit_line(f"echo {step} " + "z" * rng.randrange(3000), root, 0, 0.01)
        append_audit(root, line)
        name = f"tool-{os.getpid()}-{step}"
        add_prompt(config, PromptConfig(tools=[AllowedProgram(name=name)]), None)


def _torn(root: Path) -> dict[str, int]:
    """How many of the files are torn (not a whole old or new version): by kind."""
    torn = Counter[str]()
    session = root / "session.json"
    if session.exists():
        try:
            data = json.loads(session.read_text(encoding="utf-8"))
            torn["session"] += int(len(data["messages"]) != 9)
        except ValueError:
            torn["session"] += 1
    for path in (root / "memory").glob("*.md"):
        blocks = path.read_text(encoding="utf-8").rstrip("\n").split("\n\n---\n\n")
        torn["memory"] += sum(1 for b in blocks if not MEMORY_BLOCK.match(b))
    audit = root / "audit.log"
    if audit.exists():
        data = audit.read_bytes()
        torn["audit"] += int(bool(data) and not data.endswith(b"\n"))
        lines = data.decode("utf-8").split("\n")[:-1]
        torn["audit"] += sum(1 for line in lines if not AUDIT_LINE.match(line))
    try:
        document = yaml.safe_load((root / "config.yaml").read_text(encoding="utf-8"))
        tools = document["default_prompt"]["tools"]
        torn["config"] += int(not all(t["name"].startswith("tool-") for t in tools))
    except (ValueError, KeyError, TypeError, yaml.YAMLError):
        torn["config"] += 1
    return {kind: torn[kind] for kind in ("session", "memory", "audit", "config")}


def test_kill_9_mid_write_leaves_old_or_new_files_never_torn(tmp_path: Path) -> None:
    iterations = 400 if long_runs() else 40
    root = tmp_path / "state"
    root.mkdir()
    rng = random.Random(20261127)
    config = root / "config.yaml"
    totals = Counter[str]()
    for iteration in range(iterations):
        if iteration % 10 == 0:
            config.write_text("default_prompt:\n  tools: []\n", encoding="utf-8")
        pid = _forked(lambda: _write_forever(root))
        time.sleep(rng.uniform(0.01, 0.3))
        os.kill(pid, signal.SIGKILL)
        assert _wait(pid) == -signal.SIGKILL
        torn = _torn(root)
        totals.update(torn)
        assert sum(torn.values()) == 0, f"iteration {iteration}: {torn}"
    temp = list(root.rglob("*.tmp"))
    # What a killed writer left is removed by the next write of the same file, once stale.
    aged_at = time.time()
    for path in temp:
        os.utime(path, (aged_at - 120, aged_at - 120))
    last = _forked(lambda: _write_forever(root))
    time.sleep(0.5)
    os.kill(last, signal.SIGKILL)
    _wait(last)
    # A stale temp file whose own file was written again since must be gone.
    stale = [
        p
        for p in root.rglob("*.tmp")
        if p.stat().st_mtime < aged_at - 60 and _target(p).stat().st_mtime >= aged_at
    ]
    record(
        "durability",
        "kill-9",
        iterations=iterations,
        torn_files=sum(totals.values()),
        torn_by_kind=dict(totals),
        temp_files_left_by_kills=len(temp),
        stale_temp_files_after_next_write=len(stale),
    )
    assert stale == []
    audit = (root / "audit.log").read_text(encoding="utf-8").splitlines()
    assert len(audit) >= iterations // 2  # the writes did happen


def _target(temp: Path) -> Path:
    """The file a temp file of an atomic write was for (``.NAME.xxxx.tmp`` -> ``NAME``)."""
    return temp.with_name(temp.name[1:].rsplit(".", 2)[0])


# -- a full disk ---------------------------------------------------------------------------


@contextlib.contextmanager
def _full_disk(path: Path) -> Iterator[str]:
    """``path`` as a 64 KiB tmpfs, filled to the last byte; how it was made full."""
    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(path)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(
            f"cannot mount a tmpfs here ({mounted.stderr.decode().strip()}); "
            "test_a_full_disk_is_a_warning_when_writes_fail_with_enospc covers it with a fake"
        )
    try:
        (path / "conch").mkdir()  # conch's state directory, there before the disk filled
        fd = os.open(path / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * 512)
        finally:
            os.close(fd)
        yield "tmpfs"
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _state_on(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(path))


def _check_full_disk(conch: Conch, home: Path, how: str) -> None:
    capture(home, "full-disk", "ls -la", "ls -la", "The answer.")
    write_config(
        home,
        "ai:\n  provider: full-disk\ngeneration:\n  dry_run: false\n  review: 1\n"
        "  candidates: 1\nvalidation:\n  enabled: false\n",
    )
    oneshot = conch("--print", "list the files")
    assert (oneshot.code, oneshot.out) == (0, "ls -la\n"), oneshot.err
    assert oneshot.err.count("\n") == 1 and "Traceback" not in oneshot.err
    assert "cannot write history log" in oneshot.err and "No space left" in oneshot.err
    # The command runs, its result reaches the user, though nothing can be logged.
    ran = conch("--yes", "list the files")
    assert ran.code == 0 and "Traceback" not in ran.err, ran.err
    chat = conch("chat", "-p", "say something")
    assert chat.out == "The answer.\n" and "Traceback" not in chat.err, chat.err
    assert all(line.startswith("conch: ") for line in chat.err.splitlines()), chat.err
    assert chat.code in (0, 1) and "No space left" in chat.err
    record(
        "durability",
        f"full-disk-{how}",
        surfaces=3,
        tracebacks=0,
        messages=[oneshot.err.strip(), *chat.err.strip().splitlines()],
    )


def test_a_full_disk_is_a_warning_not_a_crash(
    conch: Conch, isolated_dirs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root; the ENOSPC fake below covers the rest")
    disk = tmp_path / "disk"
    with _full_disk(disk) as how:
        _state_on(disk, monkeypatch)
        _check_full_disk(conch, isolated_dirs, how)


def test_a_full_disk_is_a_warning_when_writes_fail_with_enospc(
    conch: Conch, isolated_dirs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same without a mount: every write under the state directory fails with ENOSPC."""
    state = tmp_path / "state"
    _state_on(state, monkeypatch)
    real_write = os.write

    def full(fd: int, data: bytes | memoryview) -> int:
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = ""
        if target.startswith(str(state)):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full)
    (state / "conch").mkdir(parents=True)
    _check_full_disk(conch, isolated_dirs, "enospc-fake")
