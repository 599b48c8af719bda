"""Why a failed run of the agent benchmark failed: one cause per failed task, from a fixed
list, read from what the row recorded (the judge's messages, the final answer, the changed
files, the tool trace), and the report's "Why tasks failed" section that counts them.

The causes, tried in this order (the first that fits wins): refusal (a work task declined,
or a needed command refused with nothing done after); loop (out of steps or time, or a
repeated call with nothing done after); wrong tool (a tool used for what it cannot do);
wrong arguments (the right tool with the wrong path, pattern or content); wrong command (a
bash/evaluate command that failed, or whose wrong output became the result); partial work
(some items done, others not); never verified (the tool said the result was empty or
invalid and the agent ended anyway); wrong final answer (an answer the tool output already
contradicted, or a claim of work never done); other (with the reason in the evidence).

The rules were fitted to the failing traces of real runs; where a careful reader names an
earlier mistake they refine the plain order: deleting a file the agent was given fails the
run even when a loop followed, and a file written by hand after the command meant to make
it failed is the command's fault. Rows without a trace are judged from the answer, the
judge's messages and the changed files alone; their evidence says "(no trace)".

``python -m benchmarks.agent.causes FILE.json`` prints the section for a results file.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.agent.checks import looks_declined, numbers_in

Row = dict[str, Any]
Found = tuple[str, str] | None

CAUSES: tuple[str, ...] = ("refusal", "loop", "wrong tool", "wrong arguments", "wrong command")
CAUSES += ("partial work", "never verified", "wrong final answer", "other")

CHANGING = {"fs_write", "fs_edit", "fs_move", "fs_delete", "fs_mkdir", "fs_copy"}
COMMANDS = {"bash", "evaluate"}
REPEATED = "Not run: you already called"
_LIMIT = re.compile(r"IterationLimit|LoopDetected|iteration limit|max.steps", re.IGNORECASE)
_REFUSED = re.compile(r"CommandRefused|(?:policy|user) refused")
_COMMAND_FAILED = re.compile(
    r"command not found|Traceback|\w+Error: |invalid option|No such file or directory"
    r"|can't open file|File \"<[^>]+>\", line|syntax error|unexpected EOF"
)
_MISUSE = re.compile(r"is a directory; fs_edit|but in its name, and fs_edit|is not a directory")
_ARGUMENT_ERROR = re.compile(
    r"was not found in|no such file|refusing to|already exists|old and new are the same"
    r"|old is empty|occurs \d+ times"
)
_WARNING = re.compile(r"(\S+) is empty\b|printed nothing|warning: this is not valid \w+")
_LISTING = re.compile(r"\b\d+(?:\.\d+)? (?:B|KiB|MiB)\b|^\S+:\d+(?::|$)", re.MULTILINE)
_PLACEHOLDER = re.compile(r"path/to/|\.\.\.\s*$|Hello, world|\[[a-z ]+ name\]", re.IGNORECASE)
_CHECK = re.compile(r"^(?P<path>[^`\s][^:]*): \w+ check failed; got (?P<got>.*)$", re.DOTALL)
_OUTPUT = re.compile(r"^`(?P<cmd>[^`]+)` output: \w+ check failed; got (?P<got>.*)$", re.DOTALL)
_EXITED = re.compile(r"^`(?:python3? |bash |sh )?(?:\./)?(?P<script>\S+)[^`]*` exited with (\d+)$")
_PEER_FAILED = re.compile(r"not (?:be )?found|not available|no such file|do(?:es)? not exist", re.I)


@dataclass(frozen=True, slots=True)
class Step:
    """One tool call of a trace and its result. ``failed``: a bash/evaluate call that ran and
    failed; ``clean``: one that ran cleanly; ``changed``: a call that changed the tree."""

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


def _step(call: str, result: str) -> Step:
    mark, _, text = result[5:].partition(": ")
    name, ok = call.split(" ", 1)[0], mark == "ok"
    repeated, refused = REPEATED in text, bool(_REFUSED.search(text))
    code = re.search(r"\[exit code (\d+)\]", text)
    ran = name in COMMANDS and not repeated and not refused
    failed = ran and (not ok or (code and code.group(1) != "0") or _COMMAND_FAILED.search(text))
    clean = ran and ok and not failed
    changed = (ok and name in CHANGING) or (clean and name == "bash")
    return Step(name, call, ok, text, repeated, refused, bool(failed), clean, changed)


def steps(trace: Sequence[str]) -> list[Step]:
    """The trace's alternating call and ``  -> ok:``/``  -> error:`` lines, as steps."""
    out: list[Step] = []
    for index, call in enumerate(trace):
        after = trace[index + 1] if index + 1 < len(trace) else ""
        if not call.startswith("  -> "):
            out.append(_step(call, after if after.startswith("  -> ") else "  -> error: none"))
    return out


def _short(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quote(step: Step, pick: str | None = None) -> str:
    """A step as evidence: the call and one line of its result (the first that matches
    ``pick``, else the first; a heading such as "contents of 'x':" with the next two)."""
    lines = [line for line in step.result.splitlines() if line.strip()] or [""]
    line = next((ln for ln in lines if pick and re.search(pick, ln)), None)
    if line is None:
        line = " / ".join(lines[:3]) if lines[0].rstrip().endswith(":") else lines[0]
    return f"{_short(step.call, 80)} -> {'ok' if step.ok else 'error'}: {_short(line)}"


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
        """The last bash/evaluate call, when it failed."""
        ran = [s for s in self.steps if s.name in COMMANDS and not s.repeated and not s.refused]
        return ran[-1] if ran and ran[-1].failed else None

    def from_command(self, text: str) -> Step | None:
        """The clean command that printed ``text`` as one of its lines."""
        text = text.strip()
        hits = [s for s in self.steps if s.clean and text in map(str.strip, s.result.splitlines())]
        return hits[0] if text and hits else None


def _refuse_task(run: Run) -> Found:
    if run.kind != "refuse":
        return None
    said = "declined" if run.row.get("declined") else "did not decline"
    step = next((s for s in run.steps if s.changed), None)
    how = f"; {quote(step)}" if step else ""
    harm = "; ".join(run.failures[:1]) or "the judge failed it"
    return "other", f"refuse task carried out: it {said}, and {harm}{how}"


def _tool_fault(run: Run) -> Found:
    """fs_grep splits a file on newlines, so '.*' lists an empty line past the last one."""
    for step in run.steps if run.kind == "answer" else []:
        lines = step.result.splitlines()
        last = re.match(r"^\S+:(\d+):$", lines[-1].strip()) if lines else None
        if step.name == "fs_grep" and last and float(last.group(1)) in numbers_in(run.answer):
            shown = quote(step, r"^\S+:\d+:$")
            said = f"answer {_short(run.answer, 50)!r}"
            return "other", f"fs_grep erred, listing an empty line past the end: {shown}; {said}"
    return None


def _refusal(run: Run) -> Found:
    if (run.row.get("declined") or looks_declined(run.answer)) and not run.changes:
        return "refusal", f"declined: {_short(run.answer)!r}"
    refused = next((s for s in run.steps if s.refused), None)
    if refused and not any(s.ok for s in run.after(refused)):
        return "refusal", f"{quote(refused)}; nothing succeeded after it"
    return None


def _deleted_given(run: Run) -> Found:
    """fs_delete removed a file the agent was given, and the judge missed that file."""
    for step in run.steps:
        listed = re.search(r"deleted (?:'([^']+)'|\d+ entries matching '[^']*': (.*))", step.result)
        if step.name != "fs_delete" or not step.ok or not listed:
            continue
        base = str(step.arg("path") or "").rpartition("/")[0]
        for name in [listed.group(1)] if listed.group(1) else listed.group(2).split(", "):
            path = f"{base}/{name}" if base and "/" not in name else name
            named = any(path.rpartition("/")[2] in f for f in run.failures)
            if f"- {path}" in run.changes and named:
                return "wrong tool", f"deleted {path}, a file it was given: {quote(step)}"
    return None


def _loop(run: Run) -> Found:
    error = str(run.row.get("error") or "")
    state = (run.row.get("notes") or {}).get("state")
    if run.row.get("timed_out") or _LIMIT.search(error) or state == "max_steps_error":
        timed = f"timed out after {float(run.row.get('seconds') or 0):.0f} s"
        why = _short(error, 70) if error else timed if run.row.get("timed_out") else str(state)
        last = next((s for s in reversed(run.steps) if not s.ok), None)
        return "loop", why + (f"; last error {quote(last)}" if last else "")
    repeat = next((s for s in run.steps if s.repeated), None)
    if repeat and not any(s.ok for s in run.after(repeat)):
        return "loop", f"{quote(repeat)}; nothing succeeded after it"
    return None


def _untraced(run: Run) -> Found:
    """A row without a trace: what its answer, judge messages and changed files show."""
    if run.steps:
        return None
    tools = run.tools
    if not tools and not run.row.get("tool_calls"):
        said = f"; its reply: {_short(run.answer, 70)!r}" if run.answer else " and gave no answer"
        return "other", f"called no tool{said}"
    found: Found = None
    if re.search(r"is (?:not )?a directory", run.answer):
        found = "wrong tool", f"answer {_short(run.answer)!r}"
    elif run.kind == "rename" and not {"run_shell", "bash", "fs_move", "move_file"} & set(tools):
        used = ", ".join(f"{k} x{v}" for k, v in tools.items())
        found = "wrong tool", f"renamed with {used}, none of which renames"
    elif _PEER_FAILED.search(run.answer):
        found = "wrong command", f"answer {_short(run.answer)!r}"
    elif run.kind in ("edit", "rename") and not run.changes and set(tools) == {"run_shell"}:
        found = "wrong command", "its run_shell calls changed nothing"
    elif partial := _partial(run):
        found = partial
    elif wrote := [(p, g) for p, g in run.checked() if run.touched(p)]:
        found = "wrong arguments", f"wrote {wrote[0][0]}; judge got {_short(wrote[0][1], 60)}"
    elif run.answer and (run.kind == "answer" or not run.changes):
        found = "wrong final answer", f"used {', '.join(tools)}; answer {_short(run.answer)!r}"
    else:
        found = "other", f"judge: {_short('; '.join(run.failures[:2]), 100)}"
    return found[0], f"(no trace) {found[1]}"


def _wrong_tool(run: Run) -> Found:
    for step in run.steps:
        if (
            not step.ok
            and _MISUSE.search(step.result)
            and not any(s.changed for s in run.after(step))
        ):
            return "wrong tool", quote(step)
    names = {s.name for s in run.steps}
    if run.kind == "rename" and not names & {"fs_move", "bash"} and names & {"fs_edit", "fs_write"}:
        used = next(s for s in run.steps if s.name in ("fs_edit", "fs_write"))
        return "wrong tool", f"renamed with {used.name}, never fs_move: {quote(used)}"
    for step in run.steps:
        path = str(step.arg("path"))
        made = step.name == "fs_mkdir" and f"+ {path}/" in run.changes
        if made and any(f.startswith((f"{path}: ", f"{path} does not")) for f in run.failures):
            return "wrong tool", f"made a directory where a file was asked: {quote(step)}"
    greps = [s for s in run.steps if s.name == "fs_grep" and s.ok]
    blind = [s for s in greps if "no matches" in s.result and "names that match" not in s.result]
    read = [s for s in run.steps if s.ok and s.name not in CHANGING and s.name != "fs_grep"]
    if blind and len(blind) == len(greps) and not read and "fs_glob finds" in blind[0].result:
        return "wrong tool", f"only read with {quote(blind[0], 'no matches')}"
    ran = any(s.name in COMMANDS and not s.refused for s in run.steps)
    if run.kind in ("compute-write", "script-run") and not ran:
        for path, _got in run.checked():
            if wrote := run.written(path):
                content = _short(wrote.arg("content") or "", 40)
                return "wrong tool", f"wrote {content!r} to {path} by hand; no command made it"
    return None


def _answer_search(run: Run) -> Found:
    """An answer task whose answer trusted a search with the wrong pattern or limit."""
    looked = [s for s in run.steps if s.ok and s.name not in CHANGING and not s.repeated]
    said = f"answer {_short(run.answer, 50)!r}"
    last = looked[-1] if looked else None
    if last and last.name == "fs_grep" and re.search(r"no matches|\[stopped at", last.result):
        return "wrong arguments", f"{quote(last, 'no matches|stopped')}; {said}"
    for step in looked:
        count = re.search(r"\[(\d+) matches", step.result)
        if count and float(count.group(1)) in numbers_in(run.answer):
            return "wrong arguments", f"answer = the search count: {quote(step, 'matches')}; {said}"
    return None


def _wrong_arguments(run: Run) -> Found:
    if run.kind == "answer":
        return _answer_search(run)
    for step in run.steps:
        if step.ok or step.name not in CHANGING or not _ARGUMENT_ERROR.search(step.result):
            continue
        path = step.arg("path")
        later = [s for s in run.after(step) if s.ok and s.name in CHANGING]
        if not any(s.name == step.name or (path and s.arg("path") == path) for s in later):
            return "wrong arguments", quote(step)
    for failure in run.failures:
        spared = failure.removesuffix(" (not part of the task) was changed")
        edits = [s for s in run.steps if s.changed and s.arg("path") == spared]
        if spared != failure and edits:
            return "wrong arguments", f"changed {spared}, which was to stay: {quote(edits[0])}"
    for step in run.steps:
        source = step.arg("path") or "."
        moved = step.name == "fs_move" and step.ok and source != "."
        if moved and any(c.startswith(f"- {source}/") for c in run.changes):
            return "wrong arguments", f"moved the whole directory {source}: {quote(step)}"
    scripts = [s for s in run.steps if s.name == "fs_write" and s.ok]
    for failure in run.failures:
        output, exited = _OUTPUT.match(failure), _EXITED.match(failure)
        if output and not run.warning():
            made = f"{quote(scripts[0])}; " if scripts else ""
            return "wrong arguments", f"{made}`{output['cmd']}` prints {_short(output['got'], 60)}"
        script = exited["script"] if exited and exited[2] not in ("126", "127") else ""
        wrote = run.written(script) if script else None
        if wrote and not any(script in (s.arg("command") or "") for s in run.steps):
            return "wrong arguments", f"never ran the script it wrote: {quote(wrote)}; {failure}"
    for path, got in run.checked():
        wrote = run.written(path)
        content = wrote.arg("content") or "" if wrote else ""
        if wrote and _LISTING.search(content):
            return "wrong arguments", f"copied a listing or grep lines: {quote(wrote)}"
        if wrote and _PLACEHOLDER.search(content):
            return "wrong arguments", f"placeholder content: {quote(wrote)}"
        if wrote and not (run.failed_command() or run.warning(path) or run.from_command(content)):
            return "wrong arguments", f"{quote(wrote)}; judge got {_short(got, 50)}"
    return None


def _wrong_command(run: Run) -> Found:
    failed = run.failed_command()
    if failed:
        return "wrong command", quote(failed, r"exit code [1-9]|not found|Error|invalid|line \d")
    if run.kind == "answer":
        for number in numbers_in(run.answer):
            if source := run.from_command(f"{number:g}"):
                return "wrong command", f"{quote(source)}; answer {_short(run.answer, 50)!r}"
    for path, _got in run.checked():
        wrote = run.written(path)
        if wrote and (source := run.from_command(wrote.arg("content") or "")):
            return "wrong command", f"{quote(source)}; it wrote that to {path}"
        for step in run.steps:
            command = step.arg("command") or ""
            if step.name != "bash" or not step.ok or path not in command:
                continue
            if re.search(rf">\s*{re.escape(path)}", command) and not run.warning(path):
                return "wrong command", f"computed the wrong thing: {quote(step)}"
            if run.kind == "edit" and not run.touched(path):
                return "wrong command", f"changed nothing in {path}: {quote(step)}"
    return None


def _partial(run: Run) -> Found:
    made = [c[2:] for c in run.changes if c.startswith("+ ")]
    for failure in run.failures:
        exited = _EXITED.match(failure)
        if exited and made and not run.touched(exited["script"]):
            return "partial work", f"made {', '.join(made)} but never the script {exited['script']}"
        if failure.endswith("is not executable") or " is not executable (" in failure:
            return "partial work", f"never made the script executable: {failure}"
    failing = [p for p, _ in run.checked()]
    failing += [m.group(1) for f in run.failures if (m := re.match(r"^(\S.*) is still there$", f))]
    done = [c[2:] for c in run.changes if not any(c[2:] in f for f in run.failures)]
    if run.kind == "rename":
        moved = [c for c in done if f"- {c}" in run.changes]
        new = [c for c in done if f"+ {c}" in run.changes]
        if moved and new and failing:
            return "partial work", f"did {', '.join(new)}; judge: {'; '.join(run.failures[:2])}"
        return None
    missing = [m.group(1) for f in run.failures if (m := re.match(r"^(\S.*) does not exist$", f))]
    if missing and made:
        return "partial work", f"made {', '.join(made)}; never made {', '.join(missing)}"
    if done and failing and not any(run.touched(p) for p in failing):
        return "partial work", f"changed {', '.join(done)}; left {', '.join(failing)} as it was"
    for path in failing if run.kind == "edit" else []:
        edits = [s for s in run.steps if s.name == "fs_edit" and s.arg("path") == path]
        if run.touched(path) and edits and all(s.ok for s in edits):
            shown = "; ".join(quote(s) for s in edits)
            return "partial work", f"{len(edits)} edit(s) of {path}, then stopped: {shown}"
    return None


def _never_verified(run: Run) -> Found:
    for path, got in run.checked():
        if warning := run.warning(path):
            shown = quote(warning, r"empty|nothing|not valid")
            return "never verified", f"{shown}; ended with {path} = {_short(got, 30)}"
    return None


def _wrong_final_answer(run: Run) -> Found:
    if run.kind == "answer":
        seen = [s for s in run.steps if s.ok and not s.repeated]
        if seen:
            return "wrong final answer", f"{quote(seen[-1])}; answer {_short(run.answer, 50)!r}"
        return None
    moved = any((s.ok and s.name == "fs_move") or s.clean for s in run.steps)
    if run.answer and (not run.changes or (run.kind == "rename" and not moved)):
        return "wrong final answer", f"claims {_short(run.answer, 70)!r} but did not do it"
    return None


RULES: tuple[Callable[[Run], Found], ...] = (
    _refuse_task,
    _tool_fault,
    _refusal,
    _deleted_given,
    _loop,
    _untraced,
    _wrong_tool,
    _wrong_arguments,
    _wrong_command,
    _partial,
    _never_verified,
    _wrong_final_answer,
)


def cause(row: Row) -> tuple[str, str]:
    """The cause of a failed row (one of ``CAUSES``) and the evidence, quoting the trace."""
    if row.get("passed"):
        raise ValueError(f"{row.get('task')} passed; only a failed run has a cause")
    run = Run(row)
    for rule in RULES:
        if found := rule(run):
            return found
    return "other", f"no rule fits the trace; judge: {_short('; '.join(run.failures[:2]), 100)}"


def cause_table(rows: Sequence[Row]) -> str:
    """The Markdown section "Why tasks failed": per agent the count of each cause, then one
    line per failed task with its kind, cause and evidence."""
    agents = list(dict.fromkeys(str(r["agent"]) for r in rows))
    judged = {id(r): cause(r) for r in rows if not r["passed"]}
    out = [
        "## Why tasks failed",
        "",
        "One cause per failed task, read from the judge's messages, the final answer and the",
        "tool trace by `benchmarks/agent/causes.py`: the causes are tried in the order of the",
        "columns and the first that fits wins. *(no trace)* marks a row judged without a trace.",
        "",
        "| agent | failed | " + " | ".join(CAUSES) + " |",
        "|---|---|" + "---|" * len(CAUSES),
    ]
    for agent in agents:
        found = Counter(judged[id(r)][0] for r in rows if r["agent"] == agent and id(r) in judged)
        cells = [agent, str(sum(found.values()))] + [str(found[c]) for c in CAUSES]
        out.append("| " + " | ".join(cells) + " |")
    for agent in agents:
        failed = [r for r in rows if r["agent"] == agent and id(r) in judged]
        if failed:
            out += ["", f"### {agent}", "", "| task | kind | cause | evidence |", "|---" * 4 + "|"]
        for row in failed:
            name, evidence = judged[id(row)]
            cell = " ".join(evidence.split()).replace("|", "\\|")
            out.append(f"| {row['task']} | {row['kind']} | {name} | {cell} |")
    return "\n".join([*out, ""])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Print the 'Why tasks failed' section.")
    parser.add_argument("file", type=Path, help="a benchmarks/results/agent-*.json file")
    rows = json.loads(parser.parse_args(argv).file.read_text(encoding="utf-8"))["rows"]
    print(cause_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
