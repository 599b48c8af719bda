"""What the project in the shell's directory looks like, in a few lines for the model.

``summarize_tree`` lists the working directory as a short indented tree: directories first,
then files, a level or two deep, deeper directories shown with how many entries they hold.
It is bounded three ways (depth, entries, bytes), so a huge tree costs the model no more
than a small one. Version-control data, dependency and build directories
(``node_modules``, virtual environments, caches) are named but never listed, hidden entries
are left out (but for a few such as ``.github``), and the patterns of the directory's own ``.gitignore`` are honoured (the
common forms: names, globs, ``dir/``, anchored ``/path`` and ``!`` exceptions; nested
``.gitignore`` files are not read). The first line says what kind of project it is, from
the files that mark one (``pyproject.toml``, ``package.json``, ``.git``...).

``ProjectContext`` keeps the summary per directory and makes it again only when the
directory changed: when it moved to another directory, or when a directory it listed (or
``.gitignore``) has a new modification time, as adding, removing or renaming an entry
gives it.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "DEPTH",
    "ENTRIES",
    "MAX_BYTES",
    "GitIgnore",
    "ProjectContext",
    "ProjectSummary",
    "summarize_tree",
]

#: How deep the tree is listed (the directory itself is level 0), how many lines of entries
#: it may have in all and per directory, and how many bytes the summary may be.
DEPTH = 2
ENTRIES = 60
PER_DIRECTORY = 15
MAX_BYTES = 2000
TAG = "[project]"

# Named but never listed: version control, dependencies, virtual environments, caches and
# build output.
_NOT_LISTED = frozenset(
    {".git", ".hg", ".svn", "node_modules", "bower_components", "vendor", "__pycache__"}
    | {".venv", "venv", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
    | {"site-packages", "dist", "build", "target", ".eggs", ".next", ".cache", ".gradle"}
)
# Hidden entries worth showing (the others are left out).
_SHOWN_HIDDEN = frozenset({".github", ".gitlab-ci.yml", ".env.example", ".venv"})
_MARKERS = {
    ".git": "git",
    "pyproject.toml": "python",
    "setup.py": "python",
    "requirements.txt": "python",
    "package.json": "node",
    "Cargo.toml": "rust",
    "go.mod": "go",
    "CMakeLists.txt": "cmake",
    "Makefile": "make",
    "pom.xml": "maven",
    "build.gradle": "gradle",
    "Gemfile": "ruby",
    "composer.json": "php",
    "Dockerfile": "docker",
}


class GitIgnore:
    """The patterns of one ``.gitignore``, matched against paths relative to its directory
    (the last matching pattern wins, so ``!`` makes exceptions)."""

    def __init__(self, text: str = "") -> None:
        self._rules: list[tuple[str, bool, bool, bool]] = []  # pattern, negated, dir, anchored
        for raw in text.splitlines():
            line = raw.rstrip()
            if not line or line.startswith("#"):
                continue
            negated = line.startswith("!")
            line = line.removeprefix("!")
            directory = line.endswith("/")
            line = line.strip("/") if directory else line
            anchored = "/" in line.rstrip("/")
            line = line.lstrip("/")
            if line:
                self._rules.append((line, negated, directory, anchored))

    @classmethod
    def read(cls, directory: Path) -> GitIgnore:
        """The ``.gitignore`` of ``directory`` (none: nothing is ignored)."""
        try:
            return cls((directory / ".gitignore").read_text(encoding="utf-8", errors="replace"))
        except OSError:
            return cls()

    def ignored(self, relative: str, is_dir: bool) -> bool:
        """Whether the entry at ``relative`` (``a/b.txt``) is ignored."""
        name = relative.rsplit("/", 1)[-1]
        verdict = False
        for pattern, negated, directory, anchored in self._rules:
            if directory and not is_dir:
                continue
            target = relative if anchored else name
            if fnmatch.fnmatchcase(target, pattern):
                verdict = not negated
        return verdict


@dataclass(frozen=True, slots=True)
class ProjectSummary:
    """The summary of ``root``: its ``text`` for the model, and the modification times of
    the directories it read (``stamps``), which say when it is out of date."""

    root: str
    text: str
    stamps: tuple[tuple[str, int], ...] = ()

    def current(self) -> bool:
        """Whether every directory the summary read is as it was."""
        return all(_mtime(path) == stamp for path, stamp in self.stamps)


@dataclass(slots=True)
class _Walk:
    root: Path
    ignore: GitIgnore
    depth: int
    entries: int
    per_directory: int
    lines: list[str] = field(default_factory=list)
    stamps: list[tuple[str, int]] = field(default_factory=list)
    left_out: int = 0

    def directory(self, path: Path, relative: str, level: int) -> None:
        listed = _entries(path)
        self.stamps.append((str(path), _mtime(str(path))))
        if listed is None:
            self.lines.append(f"{'  ' * level}(unreadable)")
            return
        shown = [e for e in listed if self._shown(e, relative)]
        indent = "  " * level
        for count, entry in enumerate(shown):
            if count >= self.per_directory or len(self.lines) >= self.entries:
                rest = len(shown) - count
                self.left_out += rest
                where = f" in {relative}/" if relative else ""
                self.lines.append(f"{indent}... {rest} more{where}")
                return
            child = f"{relative}/{entry.name}" if relative else entry.name
            if not _is_dir(entry):
                self.lines.append(f"{indent}{entry.name}{'@' if entry.is_symlink() else ''}")
            elif entry.name in _NOT_LISTED or _is_venv(entry):
                self.lines.append(f"{indent}{entry.name}/ (not listed)")
            elif level + 1 >= self.depth:
                inside = _entries(Path(entry.path))
                self.stamps.append((entry.path, _mtime(entry.path)))
                size = "unreadable" if inside is None else _count_entries(len(inside))
                self.lines.append(f"{indent}{entry.name}/ ({size})")
            else:
                self.lines.append(f"{indent}{entry.name}/")
                self.directory(Path(entry.path), child, level + 1)

    def _shown(self, entry: os.DirEntry[str], relative: str) -> bool:
        if entry.name.startswith(".") and entry.name not in _SHOWN_HIDDEN:
            return False
        child = f"{relative}/{entry.name}" if relative else entry.name
        return not self.ignore.ignored(child, _is_dir(entry))


def summarize_tree(
    root: Path,
    *,
    depth: int = DEPTH,
    entries: int = ENTRIES,
    per_directory: int = PER_DIRECTORY,
    max_bytes: int = MAX_BYTES,
    home: str | None = None,
) -> ProjectSummary:
    """The summary of the tree at ``root`` (``home`` is shown as ``~`` in its first
    line): at most ``depth`` levels listed, ``entries`` lines of entries (``per_directory``
    of one directory) and ``max_bytes`` bytes in all."""
    if depth < 1 or entries < 1 or per_directory < 1 or max_bytes < 64:
        raise ValueError("depth, entries and per_directory must be at least 1, max_bytes 64")
    walk = _Walk(root, GitIgnore.read(root), depth, entries, per_directory)
    walk.directory(root, "", 0)
    gitignore = root / ".gitignore"
    stamps = [*walk.stamps, (str(gitignore), _mtime(str(gitignore)))]
    text = _bounded([_head(root, home), *walk.lines], max_bytes)
    return ProjectSummary(str(root), text, tuple(stamps))


class ProjectContext:
    """The summary of the shell's directory, made again only when that changed.

    ``skip``: directories that are not a project (by default the home directory and
    ``/``), for which ``get`` gives None.
    """

    def __init__(
        self,
        *,
        depth: int = DEPTH,
        entries: int = ENTRIES,
        max_bytes: int = MAX_BYTES,
        home: str | None = None,
        skip: Sequence[str] | None = None,
    ) -> None:
        self.depth, self.entries, self.max_bytes = depth, entries, max_bytes
        self.home = home
        defaults = ["/", *([home] if home else [])]
        self.skip = frozenset(os.path.realpath(p) for p in (defaults if skip is None else skip))
        self._last: ProjectSummary | None = None
        self.made = 0  # how many summaries were made (the rest came from the cache)

    def get(self, cwd: str | Path) -> ProjectSummary | None:
        """The summary of ``cwd``: the one kept when it is still current, else a new one;
        None for a directory in ``skip`` or one that is gone."""
        root = os.path.realpath(cwd)
        if root in self.skip or not os.path.isdir(root):
            return None
        last = self._last
        if last is not None and last.root == root and last.current():
            return last
        self._last = summarize_tree(
            Path(root),
            depth=self.depth,
            entries=self.entries,
            max_bytes=self.max_bytes,
            home=self.home,
        )
        self.made += 1
        return self._last


def _head(root: Path, home: str | None) -> str:
    where = str(root)
    if home and (where == home or where.startswith(home.rstrip("/") + "/")):
        where = "~" + where[len(home.rstrip("/")) :]
    kinds = []
    for marker, kind in _MARKERS.items():
        if (root / marker).exists() and kind not in kinds:
            kinds.append(kind)
    return f"{TAG} {where}" + (f" ({', '.join(kinds)})" if kinds else "")


def _bounded(lines: list[str], max_bytes: int) -> str:
    """``lines`` joined, cut at a line to fit ``max_bytes`` with a last line saying so."""
    text = "\n".join(lines)
    if len(text.encode("utf-8")) <= max_bytes:
        return text
    mark = "... (cut to fit)"
    kept: list[str] = []
    size = len(mark.encode("utf-8"))
    for line in lines:
        size += len(line.encode("utf-8")) + 1
        if size > max_bytes:
            break
        kept.append(line)
    return "\n".join([*kept, mark])


def _entries(path: Path) -> list[os.DirEntry[str]] | None:
    """The entries of ``path``: directories first, then files, each by name; None when it
    cannot be read."""
    try:
        with os.scandir(path) as scan:
            found = list(scan)
    except OSError:
        return None
    return sorted(found, key=lambda e: (not _is_dir(e), e.name.lower(), e.name))


def _is_dir(entry: os.DirEntry[str]) -> bool:
    """A directory, not through a symbolic link (a link is never followed)."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _is_venv(entry: os.DirEntry[str]) -> bool:
    return os.path.exists(os.path.join(entry.path, "pyvenv.cfg"))


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return -1


def _count_entries(count: int) -> str:
    return "1 entry" if count == 1 else f"{count} entries"
