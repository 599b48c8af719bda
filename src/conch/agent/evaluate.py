"""The ``evaluate`` tool: Python 3 code run in a sandbox, for computing, never for changing.

The code runs under bubblewrap (``conch.execute.sandbox.find_sandbox``): a fresh root that
holds only the system directories Python needs and the sandbox root, all read-only, no
network (every namespace unshared), a time limit that kills the process group, and capped
output. Inside, a preamble refuses any ``open`` for writing and any read outside the sandbox
root with a ``PermissionError`` the model can read. When no sandbox can run here, the tool
says so and runs nothing.

The model-facing name is ``evaluate``: a model told about ``python3`` reaches for files,
subprocesses and the network. The legacy name ``python3`` still reaches this tool
(``LEGACY_NAMES``, honoured by the agent loop).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from conch.execute.sandbox import Sandbox, find_sandbox
from conch.host.process import run_process
from conch.tools import Tool, make_tool

LEGACY_NAMES = {"python3": "evaluate"}
DEFAULT_TIMEOUT_S = 10.0
MAX_OUTPUT = 64 * 1024
MEMORY_LIMIT = 1024 * 1024 * 1024

EVALUATE_TRIGGER = (
    "Evaluate Python 3 code for compute / algorithm prototyping. FORBIDDEN: file writes, "
    "subprocess, network. Stdlib compute only; print() the result."
)
EVALUATE_DESCRIPTION = """\
Evaluate Python 3 code and return what it prints (stdout and stderr together).

Use it to compute: arithmetic, dates, text processing, algorithms, parsing a file to
count or summarise it. It runs in a sandbox: files under the working directory can be
read, nothing can be written, no program can be started, there is no network, and it
stops after a time limit. Only the standard library is available. print() the result.

Args:
    code: the Python 3 program to run, e.g. "print(sum(range(101)))".
"""

# Runs before the model's code (which arrives on stdin): limits, then the guarded opens.
_PREAMBLE = """\
import builtins, io, os, sys
def _conch_setup(limit):
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):
        pass
    root = os.path.realpath(os.getcwd())
    real_open, real_os_open = builtins.open, os.open
    writing = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    def check(path, write):
        if write:
            raise PermissionError(
                "evaluate is read-only: write files with the file tools, not evaluate")
        if isinstance(path, int):
            return
        real = os.path.realpath(os.fsdecode(path))
        if real != root and not real.startswith(root + os.sep):
            raise PermissionError(f"evaluate may only read files under {root}")
    def guarded_open(file, mode="r", *args, **kwargs):
        check(file, any(c in str(mode).lower() for c in "wax+"))
        return real_open(file, mode, *args, **kwargs)
    def guarded_os_open(path, flags, *args, **kwargs):
        check(path, bool(flags & writing))
        return real_os_open(path, flags, *args, **kwargs)
    builtins.open = io.open = guarded_open
    os.open = guarded_os_open
    code = sys.stdin.read()
    sys.stdin = io.StringIO("")
    return code
_conch_code = _conch_setup(%d)
del _conch_setup
try:
    exec(compile(_conch_code, "<evaluate>", "exec"), {"__name__": "__main__"})
except SystemExit:
    raise
except BaseException as error:
    import traceback
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename != "<string>"]
    print("Traceback (most recent call last):", file=sys.stderr)
    print("".join(traceback.format_list(frames)), end="", file=sys.stderr)
    print("".join(traceback.format_exception_only(type(error), error)), end="", file=sys.stderr)
    sys.exit(1)
"""


class SandboxUnavailable(Exception):
    """No sandbox can run here, so ``evaluate`` refuses to run code."""


@dataclass(slots=True)
class Evaluator:
    """Runs code for ``evaluate`` in ``root``. ``sandbox``: the bubblewrap to use (None:
    found on first use with ``find_sandbox``)."""

    root: Path
    sandbox: Sandbox | None = None
    timeout: float = DEFAULT_TIMEOUT_S
    max_output: int = MAX_OUTPUT
    _found: Sandbox | None = field(default=None, init=False, repr=False)

    def run(self, code: str) -> str:
        """What ``code`` printed, with its exit code and notes when it failed, timed out or
        printed too much. Raises SandboxUnavailable when no sandbox can run."""
        sandbox = self._sandbox()
        reason = self.unavailable_reason()
        if reason is not None or sandbox.path is None:
            raise SandboxUnavailable(
                f"evaluate cannot run code here because no sandbox works: {reason}. "
                "Nothing ran; compute another way."
            )
        root = self.root.resolve()
        done = run_process(
            sandbox_argv(sandbox.path, root),
            cwd=root,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8"},
            stdin=code.encode("utf-8", "surrogateescape"),
            stderr="stdout",
            timeout=self.timeout,
            max_stdout=self.max_output,
            stop_at_cap=True,
            kill_grace=0.5,
        )
        text = done.stdout.decode("utf-8", errors="replace").rstrip("\n")
        notes: list[str] = []
        if done.stdout_truncated:
            notes.append(f"[output cut at {self.max_output} bytes]")
        if done.timed_out:
            notes.append(f"[stopped: it ran past the {self.timeout:g} s time limit]")
        elif done.exit_code != 0:
            notes.append(f"[exit code {done.exit_code}]")
        if not text and not notes:
            text = "(no output: print() the result)"
        return "\n".join([text, *notes]) if text else "\n".join(notes)

    def unavailable_reason(self) -> str | None:
        """None when a sandbox can run the code here; else why not, and the fix, one line."""
        sandbox = self._sandbox()
        if sandbox.usable and sandbox.path is not None:
            return None
        why = (sandbox.error or "no sandbox found").rstrip(".")
        return f"{why} ({sandbox.fix})" if sandbox.fix else why

    def available(self) -> bool:
        """Whether a sandbox can run the code here (found, and tried, on first use)."""
        sandbox = self._sandbox()
        return sandbox.usable and sandbox.path is not None

    def _sandbox(self) -> Sandbox:
        if self.sandbox is not None:
            return self.sandbox
        if self._found is None:
            self._found = find_sandbox()
        return self._found


def sandbox_argv(bwrap: str, root: Path) -> list[str]:
    """The bubblewrap command line that runs the evaluator's Python in ``root``: system
    directories and ``root`` read-only, fresh ``/dev`` and ``/proc``, every namespace
    (network included) unshared."""
    argv = [bwrap, "--ro-bind", "/usr", "/usr", "--ro-bind-try", "/etc", "/etc"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        if os.path.islink(top):
            argv += ["--symlink", os.readlink(top), top]
        else:
            argv += ["--ro-bind-try", top, top]
    prefix = os.path.realpath(sys.base_prefix)
    python = _python(prefix)
    if not prefix.startswith("/usr/"):
        argv += ["--ro-bind", prefix, prefix]
    argv += ["--ro-bind", str(root), str(root)]
    argv += [
        "--dev", "/dev",
        "--proc", "/proc",
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--chdir", str(root),
        "--",
        python, "-I", "-S", "-B", "-c", _PREAMBLE % MEMORY_LIMIT,
    ]  # fmt: skip
    return argv


def _python(prefix: str) -> str:
    """The interpreter to run in the sandbox: this one, found in its installation (a
    virtual environment's own directory is not in the sandbox)."""
    python = os.path.realpath(sys.executable)
    if python.startswith((prefix + os.sep, "/usr/")):
        return python
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for name in (version, "python3"):
        candidate = os.path.join(prefix, "bin", name)
        if os.access(candidate, os.X_OK):
            return candidate
    return python


def evaluate_tool(evaluator: Evaluator) -> Tool:
    """The ``evaluate`` tool running code with ``evaluator``."""

    def evaluate(code: str) -> str:
        return evaluator.run(code)

    return make_tool(
        evaluate, name="evaluate", description=EVALUATE_DESCRIPTION, trigger=EVALUATE_TRIGGER
    )
