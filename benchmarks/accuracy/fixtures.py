"""The NL2SH-ALFA tasks and the file trees they run in."""

from __future__ import annotations

import base64
import json
import os
import shutil
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchmarks.accuracy.candidate import Task
from conch.execute.dryrun import remove_tree as remove_copy

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "nl2sh-alfa"
TASKS_FILE = DATA_DIR / "test.jsonl"
FIXTURE_IDS = (1, 2, 3, 4, 5)


def load_tasks(path: Path = TASKS_FILE) -> list[Task]:
    """Every task of the test split, in file order."""
    tasks: list[Task] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            row = json.loads(line)
            tasks.append(
                Task(
                    index=int(row["index"]),
                    fs=int(row["fs"]),
                    nl=str(row["nl"]),
                    bash=str(row["bash"]),
                    bash2=str(row["bash2"]),
                    difficulty=int(row["difficulty"]),
                    shell=str(row["shell"]),
                    env={str(k): str(v) for k, v in row.get("env", {}).items()},
                    clean=bool(row["clean"]),
                )
            )
    return tasks


def load_fixture(fs: int, data_dir: Path = DATA_DIR) -> list[dict[str, Any]]:
    """The entries of fixture tree ``fs``."""
    data = json.loads((data_dir / f"fixture-fs{fs}.json").read_text(encoding="utf-8"))
    entries: list[dict[str, Any]] = data["entries"]
    return entries


def _target(root: Path, path: str) -> Path:
    relative = path.lstrip("/")
    if not relative or ".." in Path(relative).parts:
        raise ValueError(f"fixture path {path!r} is not a path inside the tree")
    return root / relative


def materialise(entries: Iterable[dict[str, Any]], root: Path, now: float | None = None) -> None:
    """Create the tree described by ``entries`` under ``root`` (which may already exist).

    ``build_time`` mtimes become ``now`` (default: the current time). Directory modes and
    mtimes are applied last, deepest first, so creating children does not disturb them.
    """
    build_time = time.time() if now is None else now
    root.mkdir(parents=True, exist_ok=True)
    listed = sorted(entries, key=lambda e: str(e["path"]).count("/"))
    dirs: list[tuple[Path, int, float]] = []
    for entry in listed:
        target = _target(root, str(entry["path"]))
        kind = entry["type"]
        mode = int(str(entry.get("mode", "0o644")), 0)
        raw_mtime = entry.get("mtime", "build_time")
        mtime = build_time if raw_mtime == "build_time" else float(raw_mtime)
        target.parent.mkdir(parents=True, exist_ok=True)
        if kind == "dir":
            target.mkdir(exist_ok=True)
            dirs.append((target, mode, mtime))
        elif kind == "file":
            if "base64" in entry:
                target.write_bytes(base64.b64decode(entry["base64"]))
            else:
                target.write_bytes(str(entry.get("text", "")).encode("utf-8"))
            os.chmod(target, mode)
            os.utime(target, (mtime, mtime))
        elif kind == "symlink":
            os.symlink(str(entry["target"]), target)
            os.utime(target, (mtime, mtime), follow_symlinks=False)
        else:
            raise ValueError(f"unknown fixture entry type {kind!r} for {entry['path']}")
    for target, mode, mtime in sorted(dirs, key=lambda d: len(d[0].parts), reverse=True):
        os.chmod(target, mode)
        os.utime(target, (mtime, mtime))
    # Parents the fixture does not list (the root itself) keep their mtimes from creation.


def build_fixtures(dest: Path, now: float | None = None) -> dict[int, Path]:
    """Materialise every fixture tree once under ``dest``; returns fs id -> tree root."""
    build_time = time.time() if now is None else now
    roots: dict[int, Path] = {}
    for fs in FIXTURE_IDS:
        root = dest / f"fs{fs}"
        if root.exists():
            shutil.rmtree(root)
        materialise(load_fixture(fs), root, build_time)
        roots[fs] = root
    return roots


def copy_tree(src: Path, dst: Path) -> None:
    """Copy ``src`` to a new ``dst``, keeping modes, mtimes and symlinks as they are."""
    shutil.copytree(src, dst, symlinks=True, copy_function=shutil.copy2)
    # copytree sets a directory's stat before later siblings are written into its parent;
    # restore every directory's mtime deepest first, after all children exist.
    dirs: list[Path] = [dst]
    for current, subdirs, _files in os.walk(dst):
        dirs.extend(Path(current) / name for name in subdirs)
    for directory in sorted(dirs, key=lambda d: len(d.parts), reverse=True):
        relative = directory.relative_to(dst)
        source = src / relative
        if source.is_symlink():
            continue
        shutil.copystat(source, directory)


def remove_tree(path: Path) -> None:
    """Delete a task's tree copy, even where the command under test removed permissions
    (as conch deletes its dry-run copies), and say so when something is left."""
    if not path.exists() and not path.is_symlink():
        return
    remove_copy(path)
    if path.exists() or path.is_symlink():
        raise OSError(f"could not remove {path}")
