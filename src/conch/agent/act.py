"""The ``do`` tool: the agent says what a step should do in plain language, and conch's
command pipeline acts.

A small model writes a precise shell command less often than it can say what it wants. The
one-shot pipeline (``conch.command.oneshot``) is conch's best way from words to a command:
worked examples retrieved for the step, answers reviewed, each tried in a scratch copy
among the real files, validated, and judged by the safety policy. ``do`` hands it the step,
then runs the command it chose exactly as the ``bash`` tool runs a command (the policy again,
the one rule for actions, contained or asked, the audit line: ``conch.agent.bash.Shell``).
The model reads the command, what its trial run changed and the real run's output, so it can
judge the effect and go on.

The pipeline's model is the session's own; it opens nothing of its own.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from conch.agent.bash import CommandRefused, Shell
from conch.messages import ToolOutput
from conch.tools import Tool, make_tool

if TYPE_CHECKING:
    from conch.command.oneshot import OneShot, OneShotResult
    from conch.command.proposal import Proposal
    from conch.config.settings import Settings
    from conch.execute.dryrun import DryRun
    from conch.providers.base import Provider

DO_TRIGGER = "Do one step with a shell command conch writes and checks: say what should happen."
DO_DESCRIPTION = """\
Do one step of the task on the files here: say in plain language what should happen, and
conch writes the shell command, tries it on a copy of the files, checks it for safety and
runs it. The answer shows the command that ran, what its trial run changed, and its output.
Use it for finding, listing, counting, computing, renaming, moving, converting and
searching: one step at a time, naming the files and the output file exactly as the user did.

Args:
    step: what this step should do, in plain language, e.g. "write the names of the empty
        files under data to empty.txt" or "count the lines of access.log".
"""


# "write a Python script that ...", "create a shell function ...": code to author, which the
# model writes with the file tools; a one-line command does the work instead of writing it.
_AUTHORING = re.compile(
    r"\b(?:write|create|make|add)\b[^.;]{0,40}?\b(?:script|program|function|class|module)s?\b",
    re.IGNORECASE,
)


# "change the port in config.ini", "set APP_ENV in .env": a value edited inside one file,
# which the model does with fs_edit, seeing the file; a one-line sed guesses at its layout.
_EDIT = re.compile(
    r"\b(?:change|set|turn|raise|lower|increase|decrease|bump|update|edit|modify)\b", re.IGNORECASE
)
_NOT_ONE_FILE = re.compile(
    r"\b(?:every|each|all|rename|move)\b|\bfile ?names?\b|\bnames of\b|\.\w+ files?\b",
    re.IGNORECASE,
)
_NAMED_FILE = re.compile(r"(?<![\w./-])(?:[\w./-]*\w)?\.[A-Za-z]\w{0,7}(?![\w/-])")


def edits_one_file(instruction: str) -> bool:
    """Whether ``instruction`` asks to change values inside one file it names."""
    if _EDIT.search(instruction) is None or _NOT_ONE_FILE.search(instruction):
        return False
    named = {m.group(0).rstrip(".") for m in _NAMED_FILE.finditer(instruction)}
    return len(named) == 1


def suits_a_command(instruction: str) -> bool:
    """Whether ``instruction`` is work one shell command does well, so it goes to ``do``
    first (``Agent.act_first``); not when it asks for code to be written, nor for values to
    be changed inside one file (the model edits it with the file tools)."""
    return _AUTHORING.search(instruction) is None and not edits_one_file(instruction)


# What a failed trial run said when the command itself is wrong, so it would fail for real
# too: a program or file that is not there, an option or syntax the program rejects. A
# timeout, no network or another process view fail only in the copy's sandbox.
_REAL_FAILURE = re.compile(
    r"command not found|not found$|No such file or directory|invalid option|unrecognized option"
    r"|illegal option|unknown option|invalid argument|syntax error|unexpected EOF"
    r"|missing operand|cannot open",
    re.IGNORECASE | re.MULTILINE,
)


def fails_for_real(run: DryRun) -> bool:
    """Whether a trial run that failed says the command is wrong (it would fail the same way
    for real), not only that the sandbox kept it from working (a timeout, no network)."""
    if not run.failed or run.timed_out:
        return False
    return run.exit_code in (126, 127) or _REAL_FAILURE.search(run.stderr) is not None


# What validation's static checks find that makes a command fail for certain: a program that
# is not here, a syntax error, awk's print given a format. (An option a help text does not
# list may still work, so that alone does not stop a step; nor does a program path that does
# not exist yet, which the command itself may make: `cc -o prog prog.c && ./prog`.)
_CERTAIN = (
    "is not installed",
    "not valid shell syntax",
    "cannot be parsed",
    "print does not format",
)


def certain_issues(proposal: Proposal) -> list[str]:
    """What validation found that makes ``proposal``'s command fail for certain: nothing when
    the command is validation's own fix (``auto_fix``; the findings were about the command it
    replaced), or when its trial run worked (the run says more than the reading)."""
    if proposal.validation is None or proposal.corrected:
        return []
    trial = proposal.trial_for(proposal.command)
    if trial is not None and trial.outcome == "ok":
        return []
    found = proposal.validation.static_issues
    return [issue for issue in found if any(mark in issue for mark in _CERTAIN)]


def _unwritten(step: str, command: str, run: DryRun | None, cwd: Path) -> list[str]:
    """The files ``step`` asks to be written (that are not there yet) which ``command`` never
    names, when its trial run showed it only reads: a small model's pipeline drops the
    "> counts.txt" of "write ... to counts.txt" and prints the lines instead."""
    if run is None or run.wrote or run.scratch or run.failed:
        return []
    from conch.agent.outputs import expected_outputs

    return [n for n in expected_outputs(step, cwd) if os.path.basename(n) not in command]


def _never_made(step: str, run: DryRun | None, cwd: Path) -> list[str]:
    """The files ``step`` asks for (that are not there yet) which its trial run in a copy
    made nowhere: no file of that name was created or changed, and none may lie in a new
    directory. A small model's pipeline moves the files into a new directory where the step
    renames them ("IMG_1.jpg becomes holiday_1.jpg")."""
    if run is None or not run.scratch or run.failed or not run.changes:
        return []
    if any(line.startswith(("and ", "what it changed")) for line in run.changes):
        return []  # not every change is listed
    from conch.agent.outputs import expected_outputs

    made: set[str] = set()
    new_dirs: list[str] = []
    for line in run.changes:
        verb, _, path = line.partition(" ")
        if verb not in ("created", "changed"):
            continue
        if path.endswith("/"):
            new_dirs.append(path)
        made.add(os.path.basename(path.rstrip("/")))
    return [
        name
        for name in expected_outputs(step, cwd)
        if os.path.basename(name) not in made and not name.startswith(tuple(new_dirs))
    ]


class StepFailed(ValueError):
    """A step's command did not run because it would not work: ``command`` and ``why``."""

    def __init__(self, message: str, command: str, why: str) -> None:
        super().__init__(message)
        self.command, self.why = command, why


_SHOWN_FILES = 3  # files a step's result shows the content of
_SHOWN_BYTES = 4096


class Actor:
    """What ``do`` runs: the step through ``service`` (the one-shot pipeline), judged for
    ``shell``'s mode in its sandbox root, then the command run by ``shell``."""

    def __init__(
        self, service: OneShot, shell: Shell, environ: Mapping[str, str] | None = None
    ) -> None:
        self.service = service
        self.shell = shell
        self.environ = dict(os.environ if environ is None else environ)
        # A step whose command did not run, by its words: the command and why.
        self.failed: dict[str, tuple[str, str]] = {}

    def propose(self, step: str) -> OneShotResult:
        """The pipeline's command for ``step``, judged as ``shell`` would judge it."""
        from conch.agent.propose import command_for

        shell = self.shell
        result = command_for(self.service, step, shell.cwd, self.environ, shell.mode, shell.root)
        if result is None:
            raise ValueError("the step is empty: say in plain language what should happen")
        return result

    def __call__(self, step: str) -> ToolOutput:
        """Propose, then run through ``shell``: the command, its trial run and its output for
        the model; CommandRefused (naming the command) when it did not run.

        A step asked again after its command failed goes to the pipeline with that command and
        its error (a small model repeats a step word for word, and the pipeline, at
        temperature 0, would write the same command again)."""
        key = " ".join(step.split())
        try:
            done = self._act(key, self._again(key))
        except StepFailed as exc:
            self.failed[key] = (exc.command, exc.why)  # the latest: a third ask differs too
            raise
        self.failed.pop(key, None)
        return done

    def _again(self, key: str) -> str:
        """``key``, the step, with why its command failed when it failed before."""
        if key not in self.failed:
            return key
        command, why = self.failed[key]
        why = " ".join(why.split())[:200]
        return f"{key} (Not `{command}`, which failed: {why}.)"

    def _act(self, step: str, asked: str) -> ToolOutput:
        """Run ``step``, sent to the pipeline as ``asked`` (with a failure before, if any);
        the files the step names are read from ``step`` alone."""
        result = self.propose(asked)
        proposal = result.proposal
        command = (proposal.command if proposal is not None else "").strip()
        if proposal is None or not command:
            raise ValueError(
                "no command came for this step; say it another way, or use another tool"
            )
        issues = certain_issues(proposal)
        if issues and proposal.correction:
            # validation's correction passed the policy and the same checks
            command, issues = proposal.correction.strip(), []
        if issues:
            why = "; ".join(issues)
            raise StepFailed(
                f"conch wrote `{command}`, which cannot work here ({why}), so it "
                "did not run. Say the step another way, or use another tool",
                command,
                why,
            )
        seen = proposal.dry_run_seen(command)
        trial = proposal.trial_for(command)
        if trial is not None and trial.dry_run is not None and fails_for_real(trial.dry_run):
            raise StepFailed(
                f"conch wrote `{command}`, which failed on a copy of the files, so it did not "
                f"run: {seen}. Say the step another way, or use another tool",
                command,
                trial.dry_run.error_excerpt(lines=2),
            )
        run = None if trial is None else trial.dry_run
        unwritten = _unwritten(step, command, run, self.shell.cwd)
        if unwritten:
            names = ", ".join(unwritten)
            raise StepFailed(
                f"conch wrote `{command}`, which only prints its result and does not write "
                f"{names} as the step asks, so it did not run. Say the step another way, "
                "naming the file to write",
                command,
                f"it prints its result and does not write {names}",
            )
        never = _never_made(step, run, self.shell.cwd)
        if never:
            names = ", ".join(never)
            raise StepFailed(
                f"conch wrote `{command}`, which on a copy of the files made no {names} as the "
                f"step asks ({seen}), so it did not run. Say the step another way, or do it "
                "with the file tools",
                command,
                f"it made no {names}",
            )
        missed = None if trial is None else trial.mismatch
        if run is not None and run.scratch and missed:
            # On the copy it changed files other than the step asks (or none): the judge's
            # reason (conch.command.judge.written_mismatch) goes to the model, nothing runs.
            raise StepFailed(
                f"conch wrote `{command}`, which did not do what the step asks on a copy of "
                f"the files ({missed}), so it did not run. Say the step another way, or do it "
                "with the file tools",
                command,
                missed,
            )
        try:
            ran = self.shell.run(command)
        except CommandRefused as exc:
            raise CommandRefused(f"conch wrote `{command}`, which did not run: {exc}") from None
        lines = [f"command: {command}", f"trial run on a copy: {seen}", ran.text]
        shown = self._written(proposal.dry_run_changes(command), ran.text)
        if shown:
            lines.append(shown)
        return ToolOutput("\n".join(lines), ran.detail)

    def _written(self, changes: tuple[str, ...], text: str) -> str:
        """What the files the trial run created or changed hold now that the command ran,
        for those the run's own result does not show already (an in-place edit)."""
        from conch.agent.bash import show_written

        base = self.shell.cwd.resolve()
        found: list[tuple[str, str]] = []
        for line in changes:
            verb, _, path = line.partition(" ")
            if verb not in ("created", "changed") or f"{path} now holds" in text:
                continue
            full = (self.shell.cwd / path).resolve()
            if not full.is_relative_to(base) or not full.is_file():
                continue
            try:
                with open(full, "rb") as handle:
                    data = handle.read(_SHOWN_BYTES)
            except OSError:
                continue
            found.append((path, data.decode("utf-8", errors="replace")))
            if len(found) == _SHOWN_FILES:
                break
        return show_written(found)


def one_shot_for(
    settings: Settings | None, provider: Callable[[], Provider]
) -> Callable[[], OneShot]:
    """A maker of the one-shot service ``do`` asks, on ``settings`` (None: conch's defaults)
    and the model ``provider`` gives; the service is made at the first step. The provider
    belongs to the session: the service never closes it."""

    def make() -> OneShot:
        from conch.command.oneshot import OneShot
        from conch.config.paths import Paths
        from conch.config.settings import Settings

        return OneShot(
            settings if settings is not None else Settings(),
            provider,
            cache_dir=Paths.default().cache_dir,
        )

    return make


def do_tool(shell: Shell, service: Callable[[], OneShot]) -> Tool:
    """The ``do`` tool, running through ``shell`` the commands the one-shot service that
    ``service`` makes (at the first step) writes."""
    made: list[Actor] = []

    def do(step: str) -> ToolOutput:
        if not made:
            made.append(Actor(service(), shell))
        return made[0](step)

    return make_tool(do, name="do", description=DO_DESCRIPTION, trigger=DO_TRIGGER)
