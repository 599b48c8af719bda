"""Containment: what runs without a person's yes runs in a sandbox shaped by its verdict.

A verdict is a claim about a command; the operating system enforces it. A command that runs
without anyone being asked (``conch.policy.rules`` said ``run``: the agent's autonomous modes,
``:auto``, ``conch mcp``, ``conch serve``, a prompt config's allowed programs) runs under
bubblewrap (``conch.execute.sandbox.find_sandbox``):

* the whole filesystem read-only (``--ro-bind / /``), with a fresh ``/dev`` and ``/proc`` (no
  disks, no other processes: ``/proc/PID/root`` cannot reach the real root), and a private,
  empty ``/tmp``;
* a verdict that writes: only the workspace (the sandbox root, else the working directory)
  bound writable over it; a read-only verdict: nothing writable but the private ``/tmp``;
* no network (every namespace unshared) unless the verdict names a network program and the
  mode runs it without asking (full-autonomous);
* the sockets that grant more than the filesystem does hidden: the user's runtime directory
  (session bus, keyring, SSH and GPG agents), the system bus, container daemons;
* an environment built from an allowlist (``conch.execute.environ.contained_environment``).

A command that tries to do more than its verdict fails with the OS's own error ("Read-only
file system", "Network is unreachable"); ``explain_failure`` turns that into one line for the
model or the user. A command a person approved is not contained: it runs as they asked.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from conch.policy.classify import Risk

# Sockets stay connectable on a read-only filesystem, so whatever holds them is covered:
# ``/run`` (the session and system buses, container daemons, screen and tmux sessions) is an
# empty tmpfs, with only what name lookups and ``who`` read shown again, read-only.
_RUN = "/run"
_RUN_KEPT = ("/run/systemd/resolve", "/run/resolvconf", "/run/utmp")
# Directories of the home directory that hold sockets (SSH control masters, the GPG agent,
# Docker Desktop, Colima, Lima): each socket found there is covered with /dev/null.
_HOME_SOCKET_DIRS = (
    ".ssh",
    ".gnupg",
    ".docker",
    ".docker/run",
    ".docker/desktop",
    ".colima/default",
    ".lima/default/sock",
)
_HIDDEN_SOCKETS = ("/var/run/docker.sock", "/var/snap/lxd/common/lxd/unix.socket")
# What a writing command may not change inside the workspace: files that make code run later,
# outside any sandbox (git hooks and config, conch's project overlay, direnv's file).
_PROTECTED = (".git/hooks", ".git/config", ".conch.yaml", ".envrc")
_TMP = "/tmp"

# What the OS says when a contained command reaches past its sandbox, and what that means.
_REFUSALS = (
    ("read-only file system", "writing"),
    ("network is unreachable", "the network"),
    ("temporary failure in name resolution", "the network"),
    ("could not resolve host", "the network"),
    ("name or service not known", "the network"),
)


@dataclass(frozen=True, slots=True)
class Shape:
    """What a contained command may do: ``writable`` paths (empty: nothing but a private
    ``/tmp``) and ``network``."""

    writable: tuple[str, ...]
    network: bool

    def describe(self) -> str:
        """One phrase: ``the filesystem read-only, no network``."""
        files = (
            "only " + ", ".join(self.writable) + " writable"
            if self.writable
            else "the filesystem read-only"
        )
        return f"{files}, {'network allowed' if self.network else 'no network'}"


def unsafe_workspace(workspace: Path, environ: Mapping[str, str]) -> str | None:
    """Why ``workspace`` cannot be the writable part of a sandbox (None: it can): ``/``, a
    system directory, or the home directory or a directory above it. A command that writes
    there is asked about instead (fail closed)."""
    real = os.path.realpath(workspace)
    if real == "/":
        return "the workspace is / (the whole filesystem)"
    home = environ.get("HOME")
    if home and _under(os.path.realpath(home), real):
        return f"the workspace {real} holds your home directory"
    if real.count("/") == 1 or real in ("/usr/local", "/var/lib", "/etc"):
        return f"the workspace {real} is a system directory"
    return None


def shape_for(risks: Iterable[Risk], *, workspace: Path, network_allowed: bool) -> Shape:
    """The sandbox for a command whose invocations have ``risks``: read-only when every one
    is read-only, else the ``workspace`` writable; network when one is a network program and
    ``network_allowed`` (the mode runs it without a question)."""
    found = set(risks)
    writes = bool(found - {Risk.READ_ONLY})
    writable = (os.path.realpath(workspace),) if writes else ()
    return Shape(writable, network_allowed and Risk.NETWORK in found)


def wrap(
    argv: Sequence[str],
    shape: Shape,
    *,
    bwrap: str,
    cwd: Path,
    environ: Mapping[str, str] | None = None,
) -> list[str]:
    """``argv`` run by ``bwrap`` in a sandbox of ``shape``, starting in ``cwd``. Directories
    of ``environ``'s ``PATH`` and its ``HOME`` that lie under ``/tmp`` are shown read-only in
    the private ``/tmp``, like the working directory."""
    real_cwd = os.path.realpath(cwd)
    args = [
        bwrap,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", _TMP,
    ]  # fmt: skip
    env = environ or {}
    # The private /tmp hid what lies under the real one: show the working directory, the
    # programs' directories and the home directory again, read-only. Before the writable
    # directories, which may lie inside them (a workspace in a home under /tmp): a bind
    # made later covers what an earlier one showed.
    wanted = [real_cwd, env.get("HOME", ""), *env.get("PATH", "").split(os.pathsep)]
    shown: list[str] = []
    for path in wanted:
        real = os.path.realpath(path) if path else ""
        if (
            real
            and _under(real, _TMP)
            and real != _TMP
            and os.path.isdir(real)
            and not _under_any(real, [*shape.writable, *shown])
        ):
            shown.append(real)
            args += ["--ro-bind", real, real]
    for path in shape.writable:
        args += ["--bind", path, path]
        for name in _PROTECTED:
            inside = os.path.join(path, name)
            if os.path.lexists(inside) and not os.path.islink(inside):
                args += ["--ro-bind", inside, inside]
    # Last, so that nothing bound above shows a socket again.
    args += _hidden_sockets(env.get("HOME", ""))
    args += ["--unshare-all"]
    if shape.network:
        args += ["--share-net"]
    args += ["--die-with-parent", "--new-session", "--chdir", real_cwd, "--", *argv]
    return args


def explain_failure(shape: Shape, exit_code: int, stderr: str) -> str | None:
    """One line saying the sandbox stopped the command, when its error says so; else None."""
    if exit_code == 0:
        return None
    text = stderr.lower()
    for needle, what in _REFUSALS:
        if needle in text:
            return (
                f"conch ran this without asking, contained ({shape.describe()}): the "
                f"operating system refused {what} beyond that. Ask the user to run it, or "
                "stay within what the command is allowed."
            )
    return None


def _hidden_sockets(home: str) -> list[str]:
    """The bubblewrap arguments that cover ``/run`` and the sockets of ``home``."""
    args: list[str] = []
    if os.path.isdir(_RUN):
        args += ["--tmpfs", _RUN]
        for kept in _RUN_KEPT:
            if os.path.exists(kept):
                args += ["--ro-bind", kept, kept]
    found = [
        s for s in _HIDDEN_SOCKETS if os.path.exists(s) and not _under(os.path.realpath(s), _RUN)
    ]
    for directory in _HOME_SOCKET_DIRS if home else ():
        folder = os.path.join(home, directory)
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        found += [e.path for e in entries if _is_socket(e)]
    for socket in dict.fromkeys(found):
        args += ["--ro-bind", "/dev/null", socket]
    return args


def _is_socket(entry: os.DirEntry[str]) -> bool:
    try:
        return stat.S_ISSOCK(entry.stat(follow_symlinks=False).st_mode)
    except OSError:
        return False


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _under_any(path: str, roots: Iterable[str]) -> bool:
    return any(_under(path, root) for root in roots)
