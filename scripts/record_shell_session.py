"""Record a real ``conch shell`` session and write it as a Markdown page.

    python scripts/record_shell_session.py [--out docs/shell-session.md] [--config FILE]

``conch shell`` runs on a pseudo-terminal (pexpect) in a temporary project under a fresh
``HOME``, with conch's default settings (or ``--config FILE``, e.g. a scripted provider), and
goes through a fixed list of steps: typed commands, a question about their output, a request
whose suggested command is accepted, ``:cost`` and ``:quit``. The model's cache stays where it
is (``$XDG_CACHE_HOME``, else ``~/.cache``), so the embedded model is not fetched again; the
model service gets a runtime directory of its own and is stopped at the end.

The page holds the command that made it, the machine, the date, the transcript (the terminal's
output played on the terminal emulator pyte, as a person saw it) and the seconds each model
turn took, measured from sending the line to the prompt coming back. A step that times out
ends the script with one line on stderr and exit status 1; nothing is written then.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pexpect
import pyte

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "docs" / "shell-session.md"
NAME = "record_shell_session"

PROMPT = re.compile(r"\[conch:([^\]\r\n]*)\]\$")
QUESTION = "Run it? [y]es, [e]dit, [n]o [n] "
NOT_FOUND = "ask the model about this line instead? [y/N] "
COLUMNS, ROWS = 100, 40  # the pseudo-terminal's size
SCREEN_COLUMNS = 120  # the emulator's, wider: conch's welcome line is 117 characters
HISTORY = 100_000  # lines kept once scrolled off: far more than a session writes


@dataclass(frozen=True, slots=True)
class Step:
    """One line typed at the prompt. ``kind``: ``shell``, ``model``, ``meta`` or ``quit``;
    ``accept``: answer yes to the first command the model suggests (and fail when there is
    none). Every other suggestion is declined."""

    line: str
    kind: str
    accept: bool = False


# The project the session runs in: a server that failed to start, and its notes.
FILES = {
    "server.log": (
        "2024-05-02 09:14:03 INFO  loading config from ./server.toml\n"
        "2024-05-02 09:14:03 INFO  starting api on 127.0.0.1:8123\n"
        "2024-05-02 09:14:03 ERROR listen tcp 127.0.0.1:8123: bind: address already in use\n"
        "2024-05-02 09:14:03 INFO  shutting down (exit status 1)\n"
    ),
    "server.toml": '[api]\nhost = "127.0.0.1"\nport = 8123\n',
    "notes.txt": "todo: move the api to another port if 8123 stays busy\n",
}

STEPS = (
    Step("ls", "shell"),
    Step("cat server.log", "shell"),
    Step("why did the server fail to start?", "model"),
    Step("count the lines of server.log", "model", accept=True),
    Step(":cost", "meta"),
    Step(":quit", "quit"),
)


class StepFailed(Exception):
    """A step did not finish as it should: the message is the script's one line."""


@dataclass(slots=True)
class Turn:
    """A model turn as measured: its step number, the line sent, the seconds from sending it
    to the prompt coming back, how many commands the reply suggested and how many ran."""

    step: int
    line: str
    seconds: float
    suggested: int = 0
    ran: int = 0


@dataclass(slots=True)
class Recording:
    """Everything the page shows."""

    command: str
    cpus: int | None
    machine: str
    date: str
    model: str
    transcript: str
    turns: list[Turn] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# -- the terminal's output as a person saw it ------------------------------------------------


class _Terminal(pyte.HistoryScreen):
    """pyte's terminal, keeping the lines that scroll off its top and, as most terminals do,
    the lines a clear of the whole screen takes away: a transcript is history, not one
    screen."""

    def erase_in_display(self, how: int = 0, *args: Any, **kwargs: Any) -> None:
        if how == 2:
            shown = [y for y, text in enumerate(self.display) if text.strip()]
            for y in range(shown[-1] + 1 if shown else 0):
                self.history.top.append(self.buffer[y])
                del self.buffer[y]  # a blank line takes its place
        super().erase_in_display(how, *args, **kwargs)


def plain_text(raw: str) -> str:
    """What a terminal showed for ``raw``, as plain text: ``raw`` is played on the terminal
    emulator pyte (as tall as the pseudo-terminal, wider so that its long lines stay whole),
    and the lines that scrolled off are followed by the screen. Trailing spaces of each line
    and blank lines at the ends are dropped."""
    terminal = _Terminal(SCREEN_COLUMNS, ROWS, history=HISTORY)
    pyte.Stream(terminal).feed(raw)
    scrolled = [
        "".join(line[x].data for x in range(terminal.columns)) for line in terminal.history.top
    ]
    lines = [line.rstrip() for line in scrolled + terminal.display]
    return "\n".join(lines).strip("\n")


# -- the page ----------------------------------------------------------------------------------


def fence_for(text: str) -> str:
    """A backtick fence longer than any run of backticks in ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def render_markdown(recording: Recording) -> str:
    """The Markdown page of a recorded session."""
    fence = fence_for(recording.transcript)
    cpus = recording.cpus if recording.cpus is not None else "unknown"
    lines = [
        "# A recorded `conch shell` session",
        "",
        "A session of `conch shell` on the model below, recorded on a pseudo-terminal by",
        "`scripts/record_shell_session.py`: what the terminal showed, with its escape",
        "sequences interpreted. The lines at the prompt were typed by the script, which",
        "answers each `Run it?` question at once.",
        "",
        f"- command: `{recording.command}`",
        f"- machine: {cpus} CPUs, {recording.machine}",
        f"- date: {recording.date}",
        f"- model: {recording.model}",
        "",
        f"{fence}text",
        recording.transcript,
        fence,
        "",
        "## Model turns",
        "",
        "Seconds from sending the line to the prompt coming back (a command the reply",
        "suggested and the script accepted ran within that time).",
        "",
        "| step | line | seconds | suggested | ran |",
        "|---:|---|---:|---:|---:|",
    ]
    for turn in recording.turns:
        line = turn.line.replace("|", "\\|")
        lines.append(
            f"| {turn.step} | `{line}` | {turn.seconds:.1f} | {turn.suggested} | {turn.ran} |"
        )
    if not recording.turns:
        lines.append("| - | (no model turns) | - | - | - |")
    if recording.notes:
        lines.append("")
        lines += [f"- {note}" for note in recording.notes]
    return "\n".join(lines) + "\n"


# -- the session -----------------------------------------------------------------------------

_CLEARED_PREFIXES = ("CONCH_", "OPENAI_", "AZURE_OPENAI_")


def session_environment(
    environ: Mapping[str, str], home: Path, runtime: Path, config: Path | None
) -> dict[str, str]:
    """The environment ``conch shell`` runs with: a fresh ``home`` (config and state under
    it), the cache where it already is, a private ``runtime`` dir for the model service, no
    conch or provider variables but ``CONCH_CONFIG`` for ``config``, and a plain terminal."""
    env = {k: v for k, v in environ.items() if not k.startswith(_CLEARED_PREFIXES)}
    cache = environ.get("XDG_CACHE_HOME") or str(
        Path(environ.get("HOME", "~")).expanduser() / ".cache"
    )
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=cache,
        XDG_RUNTIME_DIR=str(runtime),
        TERM="xterm",
        PROMPT_TOOLKIT_NO_CPR="1",
        SHELL="/bin/bash",
        LESS="",
        LESSHISTFILE="-",
        NO_COLOR="1",
    )
    env.pop("PAGER", None)
    env.pop("HISTFILE", None)
    if config is not None:
        env["CONCH_CONFIG"] = str(config)
    return env


@dataclass(slots=True)
class Options:
    out: Path
    config: Path | None
    start_timeout: float
    step_timeout: float
    turn_timeout: float
    command: str


class Session:
    """``conch shell`` on a pseudo-terminal, step by step."""

    def __init__(self, child: pexpect.spawn, log: io.StringIO, options: Options) -> None:
        self.child, self.log, self.options = child, log, options
        self.model = "?"

    def start(self) -> None:
        try:
            self.child.expect(PROMPT, timeout=self.options.start_timeout)
        except pexpect.TIMEOUT:
            raise StepFailed(
                f"conch shell showed no prompt within {self.options.start_timeout:g} s"
                f"{self._last_words()}"
            ) from None
        except pexpect.EOF:
            raise StepFailed(f"conch shell ended before its prompt{self._last_words()}") from None
        self.model = self.child.match.group(1)

    def run(self, number: int, step: Step) -> Turn | None:
        """Carry out ``step``; the measured turn for a model step."""
        limit = self.options.turn_timeout if step.kind == "model" else self.options.step_timeout
        what = f"step {number} ({step.line!r})"
        started = time.monotonic()
        deadline = started + limit
        self.child.send(step.line + "\r")
        if step.kind == "quit":
            self._expect([pexpect.EOF], deadline, f"{what} timed out after {limit:g} s")
            self.child.close()
            if self.child.exitstatus != 0:
                raise StepFailed(f"{what}: conch shell exited with {self.child.exitstatus}")
            return None
        # The line editor draws the prompt once more as it takes the line: past the newline
        # it ends with, a prompt is the next one.
        late = f"{what} timed out after {limit:g} s waiting for the prompt"
        self._expect([re.escape("\r\n")], deadline, late, what)
        turn = Turn(number, step.line, 0.0)
        patterns: list[object] = [PROMPT, re.escape(QUESTION), re.escape(NOT_FOUND)]
        while (index := self._expect(patterns, deadline, late, what)) != 0:
            if index == 2:  # a line that was no command: not for the model in this script
                self.child.send("n\r")
                continue
            turn.suggested += 1
            accept = step.accept and turn.ran == 0
            turn.ran += int(accept)
            self.child.send("y\r" if accept else "n\r")
        turn.seconds = time.monotonic() - started
        if step.accept and not turn.ran:
            raise StepFailed(f"{what}: the model suggested no command to accept")
        return turn if step.kind == "model" else None

    def _expect(
        self, patterns: list[object], deadline: float, late: str, what: str = "conch shell"
    ) -> int:
        """The index of the first of ``patterns`` seen before ``deadline``. StepFailed with
        the message ``late`` when none is seen in time, or naming ``what`` when conch shell
        ends first."""
        try:
            index: int = self.child.expect(patterns, timeout=max(deadline - time.monotonic(), 0))
        except pexpect.TIMEOUT:
            raise StepFailed(late) from None
        except pexpect.EOF:
            raise StepFailed(f"{what}: conch shell ended{self._last_words()}") from None
        return index

    def _last_words(self) -> str:
        lines = plain_text(self.log.getvalue()).splitlines()
        return f": {lines[-1].strip()}" if lines else ""


def record(options: Options, steps: Sequence[Step] = STEPS) -> Recording:
    """Run the steps in a fresh project and home; the recording. StepFailed on a failure."""
    with _temporary_dirs() as (home, runtime):
        project = home / "project"
        project.mkdir()
        for name, text in FILES.items():
            (project / name).write_text(text, encoding="utf-8")
        env = session_environment(os.environ, home, runtime, options.config)
        log = io.StringIO()
        child = pexpect.spawn(
            sys.executable,
            ["-m", "conch", "shell"],
            cwd=str(project),
            env=env,
            encoding="utf-8",
            codec_errors="replace",
            dimensions=(ROWS, COLUMNS),
        )
        child.logfile_read = log
        session = Session(child, log, options)
        turns: list[Turn] = []
        try:
            session.start()
            for number, step in enumerate(steps, 1):
                _progress(f"step {number}/{len(steps)}: {step.line}")
                turn = session.run(number, step)
                if turn is not None:
                    turns.append(turn)
                    _progress(f"  {turn.seconds:.1f} s")
            model, notes = _model_facts(session.model, env)
        finally:
            child.close(force=True)
            _stop_service(env)
    return Recording(
        command=options.command,
        cpus=os.cpu_count(),
        machine=f"{platform.platform()} ({platform.machine()}), Python {platform.python_version()}",
        date=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        model=model,
        transcript=plain_text(log.getvalue()),
        turns=turns,
        notes=notes,
    )


@contextlib.contextmanager
def _temporary_dirs() -> Iterator[tuple[Path, Path]]:
    """A fresh home and a private runtime dir (0700, as the model service wants), removed at
    the end."""
    root = Path(tempfile.mkdtemp(prefix="conch-shell-session-"))
    try:
        home = root / "home"
        runtime = root / "run"
        home.mkdir()
        runtime.mkdir(mode=0o700)
        yield home, runtime
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _conch(env: Mapping[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conch", *argv],
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _model_facts(name: str, env: Mapping[str, str]) -> tuple[str, list[str]]:
    """The model as the page names it (the prompt's name, and the model service's file when
    one answered), and notes on its timings."""
    try:
        status = json.loads(_conch(env, "daemon", "status", "--json").stdout or "{}")
    except (ValueError, subprocess.TimeoutExpired):
        status = {}
    model = status.get("model") if status.get("running") else None
    if not isinstance(model, dict) or not model.get("path"):
        return f"`{name}`", []
    described = f"`{name}`: {Path(str(model['path'])).name} through the model service"
    load = status.get("load_seconds")
    notes = ["The first model turn includes starting the model service and loading the model"]
    if isinstance(load, int | float):
        notes[0] += f" ({load:.1f} s of it)"
    notes[0] += "."
    return described, notes


def _stop_service(env: Mapping[str, str]) -> None:
    """Stop the model service this session started in its own runtime dir, if any."""
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        _conch(env, "daemon", "stop")


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python scripts/record_shell_session.py",
        description="Record a real conch shell session as a Markdown page.",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help="the Markdown file to write (default: docs/shell-session.md)",
    )
    parser.add_argument(
        "--config",
        type=Path,
        help="a conch config file to use instead of the defaults (e.g. a scripted provider)",
    )
    parser.add_argument(
        "--start-timeout", type=float, default=60.0, help="seconds for the first prompt"
    )
    parser.add_argument(
        "--step-timeout", type=float, default=30.0, help="seconds for a step without the model"
    )
    parser.add_argument(
        "--turn-timeout", type=float, default=300.0, help="seconds for one model turn"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    given = sys.argv[1:] if argv is None else list(argv)
    config = args.config.resolve() if args.config is not None else None
    if config is not None and not config.is_file():
        print(f"{NAME}: --config {args.config}: no such file", file=sys.stderr)
        return 2
    options = Options(
        out=args.out,
        config=config,
        start_timeout=args.start_timeout,
        step_timeout=args.step_timeout,
        turn_timeout=args.turn_timeout,
        command=shlex.join(["python", "scripts/record_shell_session.py", *given]),
    )
    try:
        recording = record(options)
    except StepFailed as exc:
        print(f"{NAME}: {exc}", file=sys.stderr)
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render_markdown(recording), encoding="utf-8")
    _progress(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
