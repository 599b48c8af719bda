"""Carrying out a plan without a shell: conch spawns each program, connects the pipes, opens
the redirected files, and follows ``;``, ``&&`` and ``||`` itself.

``run_plan`` does it in this process with the descriptors it is given (the user's terminal,
for a live run). A captured run spawns it as a program (``python -m conch.execute PLAN
CWD``) under ``conch.host.process.run_process``, which gives it, and every
program it starts, one process group, the output caps and the timeout: the plan itself is
read as JSON from the arguments, already checked by the policy.

What a shell would do and conch does the same way: each stage's globs are expanded in the
directory the plan is in at that point (``cd DIR`` steps change it for the steps after,
within the plan's workspace: a ``cd`` that does not happen, because it fails, would leave
the workspace or is skipped by ``&&`` or ``||``, ends the plan there, since the policy
judged the steps after it from the directory it names);
redirections apply left to right (``2>&1 >f`` differs from ``>f 2>&1``); a file that cannot
be opened, or a program that cannot be found, fails that stage with a message on its stderr
(status 1, or 127 when not found) and the rest of the pipeline runs; a pipeline's status is
its last stage's; a stage killed by Ctrl+C ends the whole plan with status 130.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from conch.messages import Plan, PlanStage, PlanStep, RedirectKind, Word

_FLAGS = {
    RedirectKind.READ: os.O_RDONLY,
    RedirectKind.WRITE: os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
    RedirectKind.APPEND: os.O_WRONLY | os.O_CREAT | os.O_APPEND,
}
_NOT_FOUND, _FAILED, _INTERRUPTED = 127, 1, 130
KILL_GRACE_S = 2.0


# One pipeline's stages: a process, or the status of a stage that never started.
_Running = list[subprocess.Popen[bytes] | int]


def expand_words(words: Sequence[Word], cwd: Path) -> list[str]:
    """The argv a shell would build from ``words``: tilde, then glob expansion.

    The policy parser strips quotes, so a Word cannot say whether its ``~`` was quoted. We
    expand ``~`` and ``~/...`` always (quoting a leading tilde is rare, and a literal ``~``
    directory is almost never meant), and ``~user`` only in a Word with ``glob=True`` (known
    unquoted). Glob patterns match relative to ``cwd``, sorted; ``*`` skips dot files unless the
    pattern component starts with ``.``; no match keeps the pattern literally, as bash does.
    """
    argv: list[str] = []
    for word in words:
        text = word.text
        if text == "~" or text.startswith("~/") or (word.glob and text.startswith("~")):
            text = os.path.expanduser(text)
        if not word.glob:
            argv.append(text)
            continue
        matches = sorted(glob.glob(text, root_dir=cwd))
        argv.extend(matches or [text])
    return argv


def run_plan(
    plan: Plan,
    cwd: Path,
    *,
    env: Mapping[str, str] | None = None,
    fds: tuple[int, int, int] = (0, 1, 2),
    timeout: float | None = None,
) -> tuple[int, bool]:
    """Run ``plan`` in ``cwd`` with ``fds`` as stdin, stdout and stderr; (status, timed out).

    The programs stay in this process's group; on timeout each one still running gets
    SIGTERM, then SIGKILL after a grace period, and the plan stops there (the status is the
    last stage's, 143 when SIGTERM ended it).
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    status = 0
    here = Path(cwd)
    top = Path(cwd) if plan.workspace is None else Path(plan.workspace)
    for step in plan.steps:
        skipped = (step.connector == "&&" and status != 0) or (
            step.connector == "||" and status == 0
        )
        if step.is_cd:
            if not skipped:
                status, here = _cd(step, here, top, plan.workspace is not None, fds[2])
            if skipped or status != 0:
                return status or _FAILED, False
            continue
        if skipped:
            continue
        running: _Running = []
        previous_read: int | None = None
        try:
            for i, stage in enumerate(step.stages):
                last = i == len(step.stages) - 1
                read_end, write_end = (None, None) if last else os.pipe()
                stdin = fds[0] if previous_read is None else previous_read
                stdout = fds[1] if write_end is None else write_end
                try:
                    argv = expand_words(stage.words, here)
                    running.append(_spawn(argv, stage, here, env, (stdin, stdout, fds[2])))
                finally:
                    if previous_read is not None:
                        os.close(previous_read)
                    if write_end is not None:
                        os.close(write_end)
                previous_read = read_end
        except BaseException:
            if previous_read is not None:
                os.close(previous_read)
            _stop(running, 0.0)
            raise
        codes, timed_out = _wait(running, deadline)
        if timed_out:
            return codes[-1], True
        status = codes[-1]
        if _INTERRUPTED in codes:
            return _INTERRUPTED, False
    return status, False


def _cd(step: PlanStep, here: Path, top: Path, workspace: bool, stderr: int) -> tuple[int, Path]:
    """``cd DIR``: within ``top`` only (symlinks resolved), the plan's workspace or else its
    own directory, which is what the policy judged the command's paths in."""
    name = step.stages[0].words[1].text
    new = (here / name).resolve()
    if not new.is_dir():
        _say(stderr, f"cd: {name}: No such directory")
        return _FAILED, here
    if not new.is_relative_to(top.resolve()):
        left = "the workspace" if workspace else "the working directory"
        _say(stderr, f"cd: {name}: leaves {left}; not going there")
        return _FAILED, here
    return 0, new


def _spawn(
    argv: list[str],
    stage: PlanStage,
    cwd: Path,
    env: Mapping[str, str] | None,
    fds: tuple[int, int, int],
) -> subprocess.Popen[bytes] | int:
    """Start one stage with its redirections applied; the status when it cannot start."""
    table = {0: fds[0], 1: fds[1], 2: fds[2]}
    opened: list[int] = []
    try:
        for r in stage.redirects:
            if r.kind is RedirectKind.DUP:
                assert r.source is not None
                table[r.fd] = table[r.source]
                continue
            assert r.target is not None
            try:
                fd = os.open(cwd / r.target, _FLAGS[r.kind] | os.O_CLOEXEC, 0o666)
            except OSError as exc:
                _say(table[2], f"{r.target}: {exc.strerror or exc}")
                return _FAILED
            opened.append(fd)
            table[r.fd] = fd
        try:
            return subprocess.Popen(
                argv,
                cwd=cwd,
                env=None if env is None else dict(env),
                stdin=table[0],
                stdout=table[1],
                stderr=table[2],
                close_fds=True,
            )
        except FileNotFoundError:
            _say(table[2], not_found(argv[0], env))
            return _NOT_FOUND
        except PermissionError:
            _say(table[2], f"permission denied: {argv[0]}")
            return 126
    finally:
        for fd in opened:
            os.close(fd)


def _wait(running: _Running, deadline: float | None) -> tuple[list[int], bool]:
    """Every stage's status, in order; True when the deadline stopped them."""
    codes: list[int] = []
    for proc in running:
        if isinstance(proc, int):
            codes.append(proc)
            continue
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            proc.wait(remaining)
        except subprocess.TimeoutExpired:
            _stop(running, KILL_GRACE_S)
            return [_code(p) for p in running], True
        codes.append(_code(proc))
    return codes, False


def _stop(running: _Running, grace: float) -> None:
    live = [p for p in running if not isinstance(p, int) and p.poll() is None]
    for proc in live:
        with contextlib.suppress(OSError):
            proc.terminate()
    end = time.monotonic() + grace
    for proc in live:
        try:
            proc.wait(max(0.0, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _code(proc: subprocess.Popen[bytes] | int) -> int:
    if isinstance(proc, int):
        return proc
    code = proc.returncode
    if code is None:
        return _FAILED
    return 128 - code if code < 0 else code


def _say(fd: int, message: str) -> None:
    with contextlib.suppress(OSError):
        os.write(fd, f"conch: {message}\n".encode("utf-8", "replace"))


# Names that are often missing where their versioned twin is there (Debian has no `python`).
_TWINS = {"python": "python3", "pip": "pip3"}


def installed_twin(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """The versioned twin to run instead of ``name`` (``python3`` for ``python``) when
    ``name`` is not on the PATH and the twin is; None otherwise."""
    twin = _TWINS.get(name)
    path = (env if env is not None else os.environ).get("PATH")
    if twin is None or shutil.which(name, path=path) or not shutil.which(twin, path=path):
        return None
    return twin


def not_found(name: str, env: Mapping[str, str] | None = None) -> str:
    """The error for a program that is not there, naming its twin when that one is."""
    twin = installed_twin(name, env)
    if twin is not None:
        return f"command not found: {name} ({twin} is installed: use {twin})"
    return f"command not found: {name}"
