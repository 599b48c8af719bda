"""The spinner and the usage report: when they show, what they say, and in a real terminal."""

from __future__ import annotations

import io
import json
import os
import sys
import threading
from pathlib import Path

import pexpect
import pyte

from cliutil import write_config
from conch.cli.environment import Environment
from conch.cli.ui import Progress, usage_report
from conch.messages import Finished, TextDelta, Usage


def terminal_env(**environ: str) -> Environment:
    return Environment(
        stdin=io.StringIO(),
        stdout=io.StringIO(),
        stderr=io.StringIO(),
        stdin_isatty=True,
        stdout_isatty=True,
        stderr_isatty=True,
        environ=environ,
    )


def test_usage_report_format() -> None:
    assert usage_report(300, 50, 12.34, 4096) == "● 9% / 350 tokens  last: 12.3tk/s"
    assert usage_report(300, 50, 7.0, None) == "● 350 tokens  last: 07.0tk/s"


def test_live_tokens_per_second_then_the_report() -> None:
    env = terminal_env()
    now = [0.0]
    progress = Progress(env, enabled=True, n_ctx=4096, clock=lambda: now[0])
    progress.start("generating")
    for at, piece in ((1.0, "ls"), (1.1, " -"), (1.2, "la")):
        now[0] = at
        progress.on_event(TextDelta(piece))
    progress.on_event(Finished(Usage(300, 3), "stop"))
    err = env.stderr.getvalue()  # type: ignore[attr-defined]
    assert "generating · 3 tokens" in err and "tk/s" in err
    report = err.rsplit("\r\x1b[2K", 1)[-1]
    # three pieces 0.1 s apart: two intervals in 0.2 s
    assert report == "\x1b[34m● 7% / 303 tokens  last: 10.0tk/s\x1b[0m"


def test_the_line_and_its_report_are_erased_when_the_result_is_shown() -> None:
    env = terminal_env()
    now = [0.0]
    progress = Progress(env, enabled=True, n_ctx=4096, clock=lambda: now[0])
    progress.start("generating")
    for at, piece in ((1.0, "ls"), (1.1, " -la")):
        now[0] = at
        progress.on_event(TextDelta(piece))
    progress.on_event(Finished(Usage(300, 2), "stop"))
    progress.clear()
    err = env.stderr.getvalue()  # type: ignore[attr-defined]
    assert "● 7% / 302 tokens" in err
    # Nothing of the line stays: it never ends a line, and it ends erased.
    assert "\n" not in err and err.endswith("\r\x1b[2K")
    progress.clear()  # a second clear writes nothing more
    assert env.stderr.getvalue() == err  # type: ignore[attr-defined]


class FrameWatch(io.StringIO):
    """A terminal that tells when it has shown two different spinner frames."""

    def __init__(self) -> None:
        super().__init__()
        self.turned = threading.Event()

    def write(self, text: str) -> int:
        written = super().write(text)
        frames = {line[:1] for line in self.getvalue().split("\r\x1b[2K") if line}
        if len(frames) >= 2:
            self.turned.set()
        return written


def test_the_spinner_turns_while_the_model_reads_the_prompt() -> None:
    env = terminal_env()
    env.stderr = watch = FrameWatch()
    progress = Progress(env, enabled=True)
    progress.start("generating")
    turned = watch.turned.wait(timeout=10)  # no token arrives; the spinner turns on its own
    progress.clear()
    assert turned


def test_silent_when_not_wanted() -> None:
    for env, enabled in (
        (terminal_env(NO_COLOR="1"), True),
        (terminal_env(), False),
        (
            Environment(
                stdout=io.StringIO(),
                stderr=io.StringIO(),
                stdout_isatty=True,
                stderr_isatty=False,
                environ={},
            ),
            True,
        ),
    ):
        progress = Progress(env, enabled=enabled, n_ctx=4096)
        progress.start("generating")
        progress.on_event(TextDelta("ls"))
        progress.on_event(TextDelta(" -a"))
        progress.on_event(Finished(Usage(10, 2)))
        progress.clear()
        assert env.stderr.getvalue() == ""  # type: ignore[attr-defined]


def test_shown_on_a_terminal_stderr_while_stdout_is_piped() -> None:
    env = Environment(
        stdout=io.StringIO(),
        stderr=io.StringIO(),
        stdout_isatty=False,
        stderr_isatty=True,
        environ={},
    )
    progress = Progress(env, enabled=True, n_ctx=4096)
    progress.start("generating")
    progress.on_event(TextDelta("ls"))
    progress.on_event(Finished(Usage(10, 2)))
    progress.clear()

    assert "generating" in env.stderr.getvalue()  # type: ignore[attr-defined]
    assert env.stdout.getvalue() == ""  # type: ignore[attr-defined]


def test_no_report_when_nothing_was_generated() -> None:
    env = terminal_env()
    progress = Progress(env, enabled=True)
    progress.start("generating")
    progress.clear()
    assert "●" not in env.stderr.getvalue()  # type: ignore[attr-defined]


def test_the_report_in_a_real_terminal_is_gone_when_the_command_is_shown(
    isolated_dirs: Path, tmp_path: Path
) -> None:
    write_config(
        isolated_dirs,
        "generation:\n  dry_run: false\nai:\n  provider: scripted\n  script:\n"
        f"    - {json.dumps('ls -la --sort=size /tmp')}\n",
    )
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    child = pexpect.spawn(
        sys.executable,
        ["-m", "conch", "--print", "list files"],
        cwd=str(tmp_path),
        env=env,
        encoding="utf-8",
        timeout=30,
        dimensions=(40, 120),
    )
    child.expect(r"● \d+ tokens  last: \d+\.\dtk/s")
    child.expect_exact("ls -la --sort=size /tmp")
    shown = child.before + child.after
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    screen = pyte.Screen(120, 40)
    pyte.Stream(screen).feed(shown + child.before)
    lines = [line.rstrip() for line in screen.display if line.strip()]
    assert lines == ["ls -la --sort=size /tmp"]  # the report was there, and is erased
