"""Keeping file tools inside one directory, the sandbox root.

Every path a model names goes through ``Confined.resolve``: relative paths are taken from the
root, symlinks are resolved, and anything that ends up outside the root (``..`` escapes,
absolute paths elsewhere, symlinks or symlinked directories that lead out) is refused with
``PathOutsideSandbox``.
"""

from __future__ import annotations

import os
from pathlib import Path


class PathOutsideSandbox(ValueError):
    """A path leads outside the sandbox root; the message names the path and the root."""


class Confined:
    """A sandbox root and the rule that every path stays under it.

    The root must be an existing directory; it is kept resolved (symlinks followed), so that
    comparisons hold whichever spelling of it a caller used.
    """

    def __init__(self, root: Path) -> None:
        resolved = Path(root).expanduser().resolve()
        if not resolved.is_dir():
            raise ValueError(f"the sandbox root {root} is not a directory")
        self.root = resolved

    def resolve(self, path: str, *, follow_final: bool = True) -> Path:
        """The real path that ``path`` names under the root.

        Relative paths are taken from the root (but see ``_relative``); ``""`` and ``"."``
        are the root itself.
        Symlinks are resolved wherever they exist (for a new file, its existing parents are);
        with ``follow_final=False`` the last component is kept as named, so a symlink can be
        removed rather than what it points to. Raises ``PathOutsideSandbox`` when the result
        is not under the root, and ``ValueError`` for a path that cannot name a file.
        """
        if "\x00" in path:
            raise ValueError(f"the path {path!r} contains a NUL byte")
        if path.startswith("~"):
            raise ValueError(
                f"'{path}': '~' is not expanded here; give a path relative to the sandbox "
                f"root {self.root}"
            )
        named = Path(path) if path else Path(".")
        candidate = named if named.is_absolute() else self._relative(named)
        keep_final = not follow_final and candidate.name not in ("", ".", "..")
        try:
            if keep_final:
                resolved = candidate.parent.resolve() / candidate.name
            else:
                resolved = candidate.resolve()
        except (RuntimeError, OSError) as exc:  # a symlink loop
            raise ValueError(f"'{path}' cannot be resolved: {exc}") from None
        if not self.contains(resolved):
            raise PathOutsideSandbox(self._outside(path, candidate, resolved))
        return resolved

    def _relative(self, named: Path) -> Path:
        """A relative path under the root; one that is the root's own absolute path without
        its leading "/" (``tmp/work/a.txt`` for the root ``/tmp/work``: small models copy
        the root that way) is taken as that absolute path, unless its first part is there
        under the root."""
        rooted = Path("/", named)
        if (
            named.parts
            and not (self.root / named.parts[0]).exists()
            and self.contains(Path(os.path.normpath(rooted)))
        ):
            return rooted
        return self.root / named

    def contains(self, resolved: Path) -> bool:
        """Whether an already resolved path is the root or under it."""
        return resolved == self.root or resolved.is_relative_to(self.root)

    def real_inside(self, path: Path) -> bool:
        """Whether ``path`` (under the root, as found while walking it) really stays inside
        once its symlinks are followed."""
        try:
            return self.contains(path.resolve())
        except (RuntimeError, OSError):
            return False

    def display(self, resolved: Path) -> str:
        """``resolved`` as the model should name it: relative to the root, ``.`` for the root."""
        if resolved == self.root:
            return "."
        try:
            return resolved.relative_to(self.root).as_posix()
        except ValueError:
            return str(resolved)

    def _outside(self, path: str, candidate: Path, resolved: Path) -> str:
        lexical = Path(os.path.normpath(candidate))
        if self.contains(lexical):
            return (
                f"'{path}' is outside the sandbox {self.root}: a symlink on the way leads "
                f"to {resolved}"
            )
        return f"'{path}' is outside the sandbox {self.root}"
