"""Where the service lives (socket, pid file, start lock, log) and who may talk to it.

The socket sits in the user's runtime directory (``$XDG_RUNTIME_DIR/conch``), which only the
user can enter; without a usable one, in ``run/`` under conch's state directory, created 0700.
The socket itself is 0600 and the service checks each peer's uid, so another user on the
machine can neither reach the model nor read someone else's prompts.
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from conch.config.paths import Paths
from conch.errors import ProviderError

SOCKET_NAME = "conch.sock"
PID_NAME = "conch.pid"
LOCK_NAME = "conch.lock"
LOG_NAME = "daemon.log"

# sun_path holds 108 bytes on Linux and 104 on macOS, the terminating NUL included.
MAX_SOCKET_PATH = 103


class ServiceUnavailable(ProviderError):
    """The service cannot be reached or started here; the caller may run the model itself."""


@dataclass(frozen=True, slots=True)
class Location:
    """The files of one user's service."""

    directory: Path
    socket: Path
    pid_file: Path
    lock_file: Path
    log_file: Path

    @classmethod
    def default(
        cls, paths: Paths | None = None, environ: Mapping[str, str] | None = None
    ) -> Location:
        """The location for this user, from the environment (``XDG_RUNTIME_DIR``) and ``paths``."""
        paths = paths or Paths.default()
        directory = runtime_dir(paths, os.environ if environ is None else environ)
        return cls.at(directory, paths.state_dir / LOG_NAME)

    @classmethod
    def at(cls, directory: Path, log_file: Path) -> Location:
        """The files of a service whose socket lives in ``directory``."""
        return cls(
            directory=directory,
            socket=directory / SOCKET_NAME,
            pid_file=directory / PID_NAME,
            lock_file=directory / LOCK_NAME,
            log_file=log_file,
        )


def runtime_dir(paths: Paths, environ: Mapping[str, str]) -> Path:
    """``$XDG_RUNTIME_DIR/conch`` when that directory is private to the user, else state/run.

    The XDG spec requires the runtime dir to be owned by the user with mode 0700; one that is
    not (a misconfigured session, a shared path) is not trusted with the socket.
    """
    value = environ.get("XDG_RUNTIME_DIR")
    if value and Path(value).is_absolute() and _private_dir_problem(Path(value)) is None:
        return Path(value) / "conch"
    return paths.state_dir / "run"


def ensure_private_dir(directory: Path) -> None:
    """Create ``directory`` with mode 0700, or make sure an existing one is ours and private."""
    try:
        with contextlib.suppress(FileExistsError):  # a file in the way: the check names it
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        problem = _private_dir_problem(directory)
        if problem == "open to other users":
            os.chmod(directory, 0o700)
            problem = _private_dir_problem(directory)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ServiceUnavailable(f"cannot create {directory}: {reason}") from None
    if problem is not None:
        raise ServiceUnavailable(f"{directory} is {problem}; not using it for the model service")


def _private_dir_problem(directory: Path) -> str | None:
    """Why ``directory`` cannot hold the socket, or None when it is a 0700 directory of ours."""
    try:
        info = os.lstat(directory)
    except OSError:
        return "missing"
    if not stat.S_ISDIR(info.st_mode):
        return "not a directory"
    if info.st_uid != os.getuid():
        return "owned by another user"
    if info.st_mode & 0o077:
        return "open to other users"
    return None


def check_socket_path(path: Path) -> None:
    """ServiceUnavailable when ``path`` is too long to bind a Unix socket to."""
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        raise ServiceUnavailable(
            f"the socket path {path} is too long for a Unix socket; "
            "set XDG_RUNTIME_DIR to a shorter directory"
        )


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of ``sock`` (Linux), or None where unknown."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    raw = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", raw)
    return int(uid)


def peer_allowed(sock: socket.socket, uid: int | None = None) -> bool:
    """True when the peer runs as ``uid`` (default: this process's user), or cannot be told."""
    found = peer_uid(sock)
    return found is None or found == (os.getuid() if uid is None else uid)


def listening(path: Path, timeout: float = 1.0) -> bool:
    """True when a process accepts connections on the socket at ``path``."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(timeout)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True
