"""A failed row of the agent benchmark as the failure causes read it: the recorded tool
trace as steps (each call with its result), and what can be asked of the row (the files the
judge failed, what a step wrote, which command printed a line).

A ``do`` step (``conch.agent.act``) is a command too, but written by conch's command
pipeline from the agent's plain-language step: its result is ``command: ...``, then ``trial
run on a copy: ...`` (what the trial run in a throwaway copy did), then the real run's output.
``Step.command`` and ``Step.trial`` read those lines, so a rule can tell the agent's words
(the ``step`` argument) from the command conch chose for them. A ``do`` the pipeline declined
(no command came) counts as refused, like a command the policy refused.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Row = dict[str, Any]
Found = tuple[str, str] | None

CHANGING = {"fs_write", "fs_edit", "fs_move", "fs_delete", "fs_mkdir", "fs_copy"}
COMMANDS = {"bash", "evaluate", "do"}
REPEATED = "Not run: you already called"
LIMIT = re.compile(r"IterationLimit|LoopDetected|iteration limit|max.steps", re.IGNORECASE)
_REFUSED = re.compile(r"CommandRefused|(?:policy|user) refused|no command came for this step")
_COMMAND_FAILED = re.compile(
    r"command not found|Traceback|\w+Error: |invalid option|No such file or directory"
    r"|can't open file|File \"<[^>]+>\", line|syntax error|unexpected EOF"
)
# What a do step's trial run said when the command failed there: "failed (exit 1): ..." or
# "exited 2 in a throwaway copy of this directory: ...".
_TRIAL_FAILED = re.compile(r"^(?:failed\b|exited [1-9]\d* )")
# A do step's trial run that changed no file (a read-only dry run, or a copy left as it was).
_READ_ONLY = re.compile(
    r"^(?:worked, printed|ran and printed nothing|worked, with a|worked, but)|changed no file$"
)
_WARNING = re.compile(
    r"(\S+) is empty\b|printed nothing|warning: this is not valid \w+|: changed no file$",
    re.MULTILINE,
)
_CHECK = re.compile(r"^(?P<path>[^`\s][^:]*): \w+ check failed; got (?P<got>.*)$", re.DOTALL)
OUTPUT = re.compile(r"^`(?P<cmd>[^`]+)` output: \w+ check failed; got (?P<got>.*)$", re.DOTALL)
EXITED = re.compile(r"^`(?:python3? |bash |sh )?(?:\./)?(?P<script>\S+)[^`]*` exited with (\d+)$")


@dataclass(frozen=True, slots=True)
class Step:
    """One tool call of a trace and its result. ``failed``: a command (bash, evaluate, do)
    that ran and failed; ``clean``: one that ran cleanly; ``changed``: a call that changed
    the tree."""

    name: str
    call: str  # as recorded: the name and its JSON arguments, cut at 300 characters
    ok: bool
    result: str  # the result's text, without its "ok: " or "error: " mark
    repeated: bool = False
    refused: bool = False
    failed: bool = False
    clean: bool = False
    changed: bool = False

    def arg(self, key: str) -> str | None:
        """One argument, also from a call line whose JSON was cut short."""
        raw = self.call.partition(" ")[2]
        with contextlib.suppress(ValueError):
            value = json.loads(raw)
            if isinstance(value, dict):
                return None if value.get(key) is None else str(value[key])
        match = re.search(rf'"{re.escape(key)}": "((?:[^"\\]|\\.)*)', raw)
        with contextlib.suppress(ValueError):
            return str(json.loads(f'"{match.group(1)}"')) if match else None
        return match.group(1) if match else None

    def command(self) -> str:
        """The command line that ran: the bash call's argument, or the one conch wrote for a
        ``do`` step (its result's ``command:`` line); empty for other tools."""
        if self.name != "do":
            return self.arg("command") or "" if self.name in COMMANDS else ""
        first = self.result.partition("\n")[0]
        return first.removeprefix("command: ") if first.startswith("command: ") else ""

    def trial(self) -> str:
        """What a ``do`` step's trial run in a throwaway copy did, in the pipeline's words."""
        found = re.search(r"^trial run on a copy: (.*)$", self.result, re.MULTILINE)
        return found.group(1) if found else ""

    def made(self) -> list[str]:
        """The files this step created: an fs_write's path, a command's trial-run
        ``created`` entries and the files its command line redirects output to."""
        if self.name == "fs_write" and self.ok:
            return [self.arg("path") or ""]
        found = re.findall(r"(?:^|; |: )created ([^;\s]+)", self.trial())
        found += re.findall(r">>?\s*([\w./-]+)", self.command()) if self.clean else []
        return list(dict.fromkeys(found))


def _step(call: str, result: str) -> Step:
    mark, _, text = result[5:].partition(": ")
    name, ok = call.split(" ", 1)[0], mark == "ok"
    repeated, refused = REPEATED in text, bool(_REFUSED.search(text))
    ran = name in COMMANDS and not repeated and not refused
    output, trial = text, ""
    if name == "do":  # the output after conch's command and its trial run
        lines = text.split("\n")
        head = [ln for ln in lines[:2] if ln.startswith(("command: ", "trial run on a copy: "))]
        output, trial = "\n".join(lines[len(head) :]), "\n".join(head[1:])
        trial = trial.removeprefix("trial run on a copy: ")
    code = re.search(r"\[exit code (\d+)\]", output)
    failed = ran and (
        not ok
        or (code and code.group(1) != "0")
        or _COMMAND_FAILED.search(output)
        or _TRIAL_FAILED.search(trial)
        or _COMMAND_FAILED.search(trial)
    )
    clean = ran and ok and not failed
    wrote = name == "bash" or (name == "do" and not _READ_ONLY.search(trial))
    changed = (ok and name in CHANGING) or (clean and wrote)
    return Step(name, call, ok, text, repeated, refused, bool(failed), clean, changed)


def steps(trace: Sequence[str]) -> list[Step]:
    """The trace's alternating call and ``  -> ok:``/``  -> error:`` lines, as steps."""
    out: list[Step] = []
    for index, call in enumerate(trace):
        after = trace[index + 1] if index + 1 < len(trace) else ""
        if not call.startswith("  -> "):
            out.append(_step(call, after if after.startswith("  -> ") else "  -> error: none"))
    return out


def short(text: str, limit: int = 90) -> str:
    """``text`` on one line, cut at ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quote(step: Step, pick: str | None = None) -> str:
    """A step as evidence: the call and one line of its result (the first that matches
    ``pick``, else the first; a heading such as "contents of 'x':" with the next two)."""
    lines = [line for line in step.result.splitlines() if line.strip()] or [""]
    line = next((ln for ln in lines if pick and re.search(pick, ln)), None)
    if line is None:
        line = " / ".join(lines[:3]) if lines[0].rstrip().endswith(":") else lines[0]
    shown = short(line)
    if step.name == "do" and step.command() and line != lines[0]:  # the command, then the line
        shown = f"{short(lines[0])} / {shown}"
    return f"{short(step.call, 80)} -> {'ok' if step.ok else 'error'}: {shown}"


def script_of(command: str) -> str:
    """The script a judge's command line runs (``python3 x.py``, ``./x.sh``, ``bash x.sh``)."""
    found = re.match(r"(?:python3? |bash |sh )?(?:\./)?(\S+)", command.strip())
    return found.group(1) if found else ""


class Run:
    """A failed row and what can be read from it."""

    def __init__(self, row: Row) -> None:
        notes = row.get("notes") or {}
        self.row, self.steps = row, steps(notes.get("trace") or [])
        self.kind, self.answer = str(row.get("kind", "")), str(row.get("answer") or "")
        self.failures = [str(f) for f in row.get("failures") or []]
        self.changes = [str(c) for c in row.get("changes") or []]
        self.tools: dict[str, int] = dict(notes.get("tools") or {})  # agents without a trace

    def touched(self, path: str) -> bool:
        return any(c[2:] == path for c in self.changes)

    def checked(self) -> list[tuple[str, str]]:
        """(path, what the judge got) of the files whose content check failed."""
        found = (_CHECK.match(f) for f in self.failures)
        return [(m["path"], m["got"]) for m in found if m]

    def written(self, path: str) -> Step | None:
        """The last successful fs_write of ``path``."""
        hits = [s for s in self.steps if s.name == "fs_write" and s.ok and s.arg("path") == path]
        return hits[-1] if hits else None

    def after(self, step: Step) -> list[Step]:
        return self.steps[self.steps.index(step) + 1 :]

    def warning(self, path: str | None = None) -> Step | None:
        """The step whose result said ``path`` (or any output) came out empty or invalid."""
        for step in self.steps:
            match = _WARNING.search(step.result)
            if match and (path is None or match.group(1) in (None, path) or path in step.result):
                return step
        return None

    def failed_command(self) -> Step | None:
        """The last command (bash, evaluate, do), when it failed."""
        ran = [s for s in self.steps if s.name in COMMANDS and not s.repeated and not s.refused]
        return ran[-1] if ran and ran[-1].failed else None

    def from_command(self, text: str) -> Step | None:
        """The clean command that printed ``text`` as one of its lines."""
        text = text.strip()
        hits = [s for s in self.steps if s.clean and text in map(str.strip, s.result.splitlines())]
        return hits[0] if text and hits else None

    def asked(self, path: str) -> Step | None:
        """A clean ``do`` whose step named ``path`` but whose command never wrote it."""
        for step in self.steps:
            said = step.arg("step") or ""
            if step.name == "do" and step.clean and path in said and path not in step.command():
                return step
        return None

    def copied(self, wrote: Step) -> Step | None:
        """The earlier command whose code the file ``wrote`` holds (the agent copying the
        command conch wrote into a script)."""
        content = " ".join((wrote.arg("content") or "").split())
        before = self.steps[: self.steps.index(wrote)]
        hits = [
            s for s in before if len(content) >= 20 and content in " ".join(s.command().split())
        ]
        return hits[-1] if hits else None
