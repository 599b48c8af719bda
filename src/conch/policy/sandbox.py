"""Path-like arguments, and the sandbox-root check on them."""

from __future__ import annotations

import os
from pathlib import Path

from conch.policy.model import Analysis, Arg
from conch.policy.parse import GLOB_CHARS, expand_braces

_VALUE_KEYS = frozenset({"if", "of"})  # dd's key=value operands


def _candidate(text: str) -> str:
    """The path part of an option word (``--file=x``, ``of=x``), or the word itself."""
    key, sep, value = text.partition("=")
    if sep and (key.startswith("-") or key in _VALUE_KEYS):
        return value
    return text


def _path_like(text: str, cwd: Path | None) -> bool:
    if not text or "://" in text or text.startswith("-"):
        return False
    if text.startswith(("/", "~", "./", "../")) or text in (".", "..") or "/" in text:
        return True
    # A bare name counts when it names something in the working directory (a symlink can
    # point anywhere).
    return cwd is not None and os.path.lexists(cwd / text)


def path_args(analysis: Analysis, cwd: Path | None) -> list[str]:
    """Literal path-like arguments and redirect targets, in order, without repeats."""
    found: list[str] = []
    words: list[Arg] = [a for inv in analysis.invocations for a in inv.args]
    words += [r.target for r in analysis.redirects if not r.operator.startswith("<<")]
    for arg in words:
        if arg.path_text is None:
            continue
        texts = expand_braces(arg.path_text) if arg.brace else [arg.path_text]
        for text in texts:
            candidate = _candidate(text)
            if candidate != "{}" and _path_like(candidate, cwd) and candidate not in found:
                found.append(candidate)
    return found


def _without_glob(path: str) -> str:
    parts = path.split("/")
    for i, part in enumerate(parts):
        if any(ch in GLOB_CHARS for ch in part):
            return "/".join(parts[:i]) or "/"
    return path


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def sandbox_violations(
    analysis: Analysis, paths: list[str], root: Path, cwd: Path | None
) -> list[str]:
    """One sentence per path that resolves (symlinks followed) outside ``root``."""
    real_root = os.path.realpath(root)
    base = os.path.realpath(cwd if cwd is not None else os.getcwd())
    reasons: list[str] = []
    if not _inside(base, real_root):
        reasons.append(f"The working directory {base!r} is outside the sandbox root {real_root!r}.")
    for path in paths:
        expanded = os.path.expanduser(_without_glob(path)) or "."
        real = os.path.realpath(os.path.join(base, expanded))
        if not _inside(real, real_root):
            reasons.append(
                f"The path {path!r} resolves to {real!r}, which is outside the sandbox root "
                f"{real_root!r}."
            )
    for raw in dict.fromkeys(analysis.nonliteral_args):
        reasons.append(
            f"The argument {raw!r} is only known at run time, so it cannot be checked against "
            f"the sandbox root {real_root!r}."
        )
    return reasons


# Outside the working directory but inside every sandbox: its own /tmp, and the null device.
_PRIVATE = ("/tmp", "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin")


def outside_workspace(paths: list[str], cwd: Path | None) -> str | None:
    """The first of ``paths`` that resolves (symlinks followed) outside the working
    directory and outside what a sandbox keeps private (its ``/tmp``), or None."""
    base = os.path.realpath(cwd if cwd is not None else os.getcwd())
    for path in paths:
        expanded = os.path.expanduser(_without_glob(path)) or "."
        real = os.path.realpath(os.path.join(base, expanded))
        if not _inside(real, base) and not any(_inside(real, p) for p in _PRIVATE):
            return path
    return None
