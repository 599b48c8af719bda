"""The agent benchmark's tasks (``tasks.yaml``): loading, building their trees, snapshots.

A task is an instruction, a small file tree (the project the agent works in), checks on the
tree and the final answer, and a reference solution. Trees are built under a run's home
directory: the project at ``HOME/project`` and the shared home files (``home`` in the YAML)
around it, so an agent that harms the home is caught.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

TASKS_FILE = Path(__file__).resolve().with_name("tasks.yaml")
PROJECT = "project"  # the task's tree, inside the run's home directory
KINDS = (
    "edit",
    "create",
    "rename",
    "find-write",
    "compute-write",
    "script-run",
    "answer",
    "refuse",
)
CHECK_KEYS = ("file", "absent", "moved", "run", "answer", "intact")
SNAPSHOT_CAP = 1 << 20  # a file larger than this is recorded by size and hash only


@dataclass(frozen=True, slots=True)
class FileSpec:
    """One file of a tree: its content and permission bits."""

    data: bytes
    mode: int = 0o644


@dataclass(frozen=True, slots=True)
class Task:
    """One task of the benchmark."""

    index: int
    id: str
    kind: str
    difficulty: int
    instruction: str
    files: dict[str, FileSpec]
    checks: tuple[dict[str, Any], ...]
    solution: dict[str, Any]
    unchanged: bool = True

    def digest(self) -> str:
        """A hash of what the agent is given (instruction and tree), for the result cache."""
        hasher = hashlib.sha256(self.instruction.encode())
        for path in sorted(self.files):
            spec = self.files[path]
            hasher.update(f"\0{path}\0{spec.mode:o}\0".encode())
            hasher.update(spec.data)
        return hasher.hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Entry:
    """A path in a snapshot: its type, permission bits and content (None when too large)."""

    kind: str  # "file", "dir", "symlink" or "other"
    mode: int = 0
    data: bytes | None = None
    size: int = 0
    sha256: str = ""
    target: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "mode": self.mode}
        if self.kind == "file":
            out["size"] = self.size
            out["sha256"] = self.sha256
            if self.data is not None:
                out["base64"] = base64.b64encode(self.data).decode()
        if self.target:
            out["target"] = self.target
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Entry:
        raw = data.get("base64")
        return cls(
            kind=str(data["kind"]),
            mode=int(data.get("mode", 0)),
            data=base64.b64decode(raw) if raw is not None else None,
            size=int(data.get("size", 0)),
            sha256=str(data.get("sha256", "")),
            target=str(data.get("target", "")),
        )


# A tree as it was left: path relative to the run's home ("project/a.txt", ".bashrc") -> entry.
Snapshot = dict[str, Entry]


@dataclass(slots=True)
class Suite:
    """Every task, and the home files every run starts with."""

    tasks: list[Task]
    home: dict[str, FileSpec] = field(default_factory=dict)


def _file_spec(where: str, value: Any) -> FileSpec:
    """A file given as text, as ``{text, mode}`` or as ``{repeat, count}`` (``mode`` optional)."""
    if isinstance(value, str):
        return FileSpec(value.encode())
    if isinstance(value, dict):
        mode = int(str(value.get("mode", "0644")), 8)
        if "text" in value:
            return FileSpec(str(value["text"]).encode(), mode)
        if "repeat" in value:
            return FileSpec((str(value["repeat"]) * int(value["count"])).encode(), mode)
    raise ValueError(f"{where}: a file is text, {{text, mode}} or {{repeat, count}}")


def _relative(where: str, path: str) -> str:
    parts = PurePosixPath(path).parts
    if not parts or path.startswith("/") or ".." in parts:
        raise ValueError(f"{where}: {path!r} is not a relative path inside the tree")
    return PurePosixPath(path).as_posix()


def _files(where: str, raw: Any) -> dict[str, FileSpec]:
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: files must be a mapping of path to content")
    return {_relative(where, str(p)): _file_spec(f"{where} {p}", v) for p, v in raw.items()}


def _task(index: int, raw: dict[str, Any]) -> Task:
    where = f"task {raw.get('id', index)}"
    missing = [k for k in ("id", "kind", "difficulty", "instruction", "checks") if k not in raw]
    if missing:
        raise ValueError(f"{where}: missing {', '.join(missing)}")
    if raw["kind"] not in KINDS:
        raise ValueError(f"{where}: unknown kind {raw['kind']!r}")
    checks = tuple(raw["checks"])
    if not checks:
        raise ValueError(f"{where}: no checks")
    for check in checks:
        keys = [k for k in CHECK_KEYS if k in check]
        if len(keys) != 1:
            raise ValueError(f"{where}: each check names one of {CHECK_KEYS}: {check}")
    return Task(
        index=index,
        id=str(raw["id"]),
        kind=str(raw["kind"]),
        difficulty=int(raw["difficulty"]),
        instruction=" ".join(str(raw["instruction"]).split()),
        files=_files(where, raw.get("files", {})),
        checks=checks,
        solution=dict(raw.get("solution") or {}),
        unchanged=bool(raw.get("unchanged", True)),
    )


def load_suite(path: Path = TASKS_FILE) -> Suite:
    """Every task in file order (``index`` counts from 0), with the shared home files."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    tasks = [_task(i, raw) for i, raw in enumerate(data["tasks"])]
    ids = [t.id for t in tasks]
    if len(set(ids)) != len(ids):
        raise ValueError("task ids are not unique")
    return Suite(tasks, _files("home", data.get("home", {})))


def load_tasks(path: Path = TASKS_FILE) -> list[Task]:
    """Every task, in file order."""
    return load_suite(path).tasks


def select(tasks: list[Task], wanted: str | None) -> list[Task]:
    """The tasks named in ``wanted`` (comma-separated ids or indexes), in suite order."""
    if not wanted:
        return tasks
    names = [w.strip() for w in wanted.split(",") if w.strip()]
    by_id = {t.id: t for t in tasks}
    chosen: set[int] = set()
    for name in names:
        if name.isdigit() and int(name) < len(tasks):
            chosen.add(int(name))
        elif name in by_id:
            chosen.add(by_id[name].index)
        else:
            raise SystemExit(f"--tasks: no task {name!r}")
    return [t for t in tasks if t.index in chosen]


# -- trees -------------------------------------------------------------------------------------


def write_files(root: Path, files: Mapping[str, FileSpec]) -> None:
    """Create ``files`` under ``root`` (parents as needed)."""
    for relative, spec in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(spec.data)
        os.chmod(target, spec.mode)


def build_home(home: Path, suite: Suite, task: Task) -> Path:
    """The run's home: the shared home files and the task's project; returns the project dir."""
    home.mkdir(parents=True)
    write_files(home, suite.home)
    project = home / PROJECT
    project.mkdir()
    write_files(project, task.files)
    return project


def initial_snapshot(suite: Suite, task: Task) -> Snapshot:
    """The snapshot of a run's home before the agent starts (without building it)."""
    snap: Snapshot = {}
    for prefix, files in (("", suite.home), (PROJECT + "/", task.files)):
        for relative, spec in files.items():
            path = prefix + relative
            snap[path] = _file_entry(spec.data, spec.mode)
            parent = PurePosixPath(path).parent
            while str(parent) != ".":
                snap.setdefault(str(parent), Entry("dir", 0o755))
                parent = parent.parent
    snap.setdefault(PROJECT, Entry("dir", 0o755))
    return snap


def _file_entry(data: bytes, mode: int) -> Entry:
    kept = data if len(data) <= SNAPSHOT_CAP else None
    return Entry("file", mode, kept, len(data), hashlib.sha256(data).hexdigest())


def snapshot(home: Path, skip: Iterable[str] = ()) -> Snapshot:
    """Every path under ``home`` (relative names) with type, mode and content; the top-level
    names in ``skip`` (an agent's own config and caches) are left out."""
    skipped = set(skip)
    snap: Snapshot = {}
    for current, dirs, files in os.walk(home):
        base = Path(current).relative_to(home)
        kept: list[str] = []
        for name in sorted(dirs):
            relative = (base / name).as_posix()
            if base == Path(".") and name in skipped:
                continue
            full = Path(current) / name
            info = full.lstat()
            if stat.S_ISLNK(info.st_mode):
                snap[relative] = Entry("symlink", 0, target=os.readlink(full))
                continue
            snap[relative] = Entry("dir", stat.S_IMODE(info.st_mode))
            kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            relative = (base / name).as_posix()
            if base == Path(".") and name in skipped:
                continue
            full = Path(current) / name
            info = full.lstat()
            mode = stat.S_IMODE(info.st_mode)
            if stat.S_ISLNK(info.st_mode):
                snap[relative] = Entry("symlink", 0, target=os.readlink(full))
            elif stat.S_ISREG(info.st_mode):
                snap[relative] = _read_entry(full, info.st_size, mode)
            else:
                snap[relative] = Entry("other", mode)
    return snap


def _read_entry(path: Path, size: int, mode: int) -> Entry:
    try:
        if size <= SNAPSHOT_CAP:
            return _file_entry(path.read_bytes(), mode)
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 16), b""):
                digest.update(block)
        return Entry("file", mode, None, size, digest.hexdigest())
    except OSError as exc:  # an agent may leave a file nobody can read
        return Entry("file", mode, None, size, f"unreadable: {exc.strerror}")


def materialise(snap: Snapshot, home: Path) -> None:
    """Recreate a snapshot's files and directories under ``home`` (for the `run` checks)."""
    home.mkdir(parents=True, exist_ok=True)
    for path in sorted(snap, key=lambda p: p.count("/")):
        entry = snap[path]
        target = home / path
        if entry.kind == "dir":
            target.mkdir(parents=True, exist_ok=True)
        elif entry.kind == "file" and entry.data is not None:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(entry.data)
            os.chmod(target, entry.mode or 0o644)
        elif entry.kind == "symlink":
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(entry.target)


def snapshot_to_json(snap: Snapshot) -> dict[str, Any]:
    return {path: entry.to_json() for path, entry in sorted(snap.items())}


def snapshot_from_json(data: Mapping[str, Any]) -> Snapshot:
    return {str(path): Entry.from_json(value) for path, value in data.items()}


# -- the reference solution --------------------------------------------------------------------


def apply_solution(project: Path, solution: Mapping[str, Any]) -> str:
    """Do what ``solution`` says in ``project`` (renames, then deletions, then writes);
    returns its final answer ("" when it has none)."""
    for old, new in (solution.get("rename") or {}).items():
        target = project / new
        target.parent.mkdir(parents=True, exist_ok=True)
        (project / old).rename(target)
    for path in solution.get("delete") or []:
        victim = project / path
        if victim.is_dir():
            shutil.rmtree(victim)
        else:
            victim.unlink()
    write_files(project, _files("solution", solution.get("write") or {}))
    return str(solution.get("answer", ""))
