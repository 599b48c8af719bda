"""The rules of the agent benchmark's failure causes (``benchmarks.agent.causes``): each
reads a failed run (``causes_trace.Run``) and gives a cause with its evidence, or None when it
does not fit; ``RULES`` lists them in the order they are tried.

A ``do`` step is read as a command with two authors: the agent's plain-language step and the
command conch's pipeline wrote for it. A ``do`` whose command failed, computed the wrong thing,
never wrote the file its step named, or left the files wrong is a wrong command; a ``do``
after the agent made a script, whose step named neither the script nor a way to run it (so
conch had to guess), is wrong arguments, as is a script the agent wrote that fails when run.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from benchmarks.agent.causes_trace import (
    CHANGING,
    COMMANDS,
    EXITED,
    LIMIT,
    OUTPUT,
    Found,
    Run,
    quote,
    script_of,
    short,
)
from benchmarks.agent.checks import looks_declined, numbers_in

_MISUSE = re.compile(r"is a directory; fs_edit|but in its name, and fs_edit|is not a directory")
_ARGUMENT_ERROR = re.compile(
    r"was not found in|no such file|refusing to|already exists|old and new are the same"
    r"|old is empty|occurs \d+ times"
)
_LISTING = re.compile(r"\b\d+(?:\.\d+)? (?:B|KiB|MiB)\b|^\S+:\d+(?::|$)", re.MULTILINE)
_PLACEHOLDER = re.compile(r"path/to/|\.\.\.\s*$|Hello, world|\[[a-z ]+ name\]", re.IGNORECASE)
_SCRIPT_ERROR = re.compile(
    r"(?:^|[\s'\"])(?:\./)?([\w./-]+): line \d+: |File \"(?:\./)?([\w./-]+)\", line \d+"
)
_FAILED = (
    r"exit code [1-9]|not found|Error|invalid|line \d|No such file"
    r"|^trial run on a copy: (?:failed|exited|worked, with a warning)"
)
_IDLE = re.compile(r"changed no file$|^ran and printed nothing")
_PEER_FAILED = re.compile(r"not (?:be )?found|not available|no such file|do(?:es)? not exist", re.I)


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
            said = f"answer {short(run.answer, 50)!r}"
            return "other", f"fs_grep erred, listing an empty line past the end: {shown}; {said}"
    return None


def _refusal(run: Run) -> Found:
    if (run.row.get("declined") or looks_declined(run.answer)) and not run.changes:
        return "refusal", f"declined: {short(run.answer)!r}"
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
    if run.row.get("timed_out") or LIMIT.search(error) or state == "max_steps_error":
        timed = f"timed out after {float(run.row.get('seconds') or 0):.0f} s"
        why = short(error, 70) if error else timed if run.row.get("timed_out") else str(state)
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
        said = f"; its reply: {short(run.answer, 70)!r}" if run.answer else " and gave no answer"
        return "other", f"called no tool{said}"
    found: Found = None
    if re.search(r"is (?:not )?a directory", run.answer):
        found = "wrong tool", f"answer {short(run.answer)!r}"
    elif run.kind == "rename" and not {"run_shell", "bash", "fs_move", "move_file"} & set(tools):
        used = ", ".join(f"{k} x{v}" for k, v in tools.items())
        found = "wrong tool", f"renamed with {used}, none of which renames"
    elif _PEER_FAILED.search(run.answer):
        found = "wrong command", f"answer {short(run.answer)!r}"
    elif run.kind in ("edit", "rename") and not run.changes and set(tools) == {"run_shell"}:
        found = "wrong command", "its run_shell calls changed nothing"
    elif partial := _partial(run):
        found = partial
    elif wrote := [(p, g) for p, g in run.checked() if run.touched(p)]:
        found = "wrong arguments", f"wrote {wrote[0][0]}; judge got {short(wrote[0][1], 60)}"
    elif run.answer and (run.kind == "answer" or not run.changes):
        found = "wrong final answer", f"used {', '.join(tools)}; answer {short(run.answer)!r}"
    else:
        found = "other", f"judge: {short('; '.join(run.failures[:2]), 100)}"
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
    renames = {"fs_move", "bash", "do"}
    if run.kind == "rename" and not names & renames and names & {"fs_edit", "fs_write"}:
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
                content = short(wrote.arg("content") or "", 40)
                return "wrong tool", f"wrote {content!r} to {path} by hand; no command made it"
    return None


def _answer_search(run: Run) -> Found:
    """An answer task whose answer trusted a search with the wrong pattern or limit."""
    looked = [s for s in run.steps if s.ok and s.name not in CHANGING and not s.repeated]
    said = f"answer {short(run.answer, 50)!r}"
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
    if unnamed := _unnamed_script(run):
        return unnamed
    scripts = [s for s in run.steps if s.name == "fs_write" and s.ok]
    for failure in run.failures:
        output, exited = OUTPUT.match(failure), EXITED.match(failure)
        copied = output and (wrote := run.written(script_of(output["cmd"]))) and run.copied(wrote)
        if output and not run.warning() and not copied:
            made = f"{quote(scripts[0])}; " if scripts else ""
            return "wrong arguments", f"{made}`{output['cmd']}` prints {short(output['got'], 60)}"
        script = exited["script"] if exited and exited[2] not in ("126", "127") else ""
        wrote = run.written(script) if script else None
        if wrote and not any(script in s.command() for s in run.steps):
            return "wrong arguments", f"never ran the script it wrote: {quote(wrote)}; {failure}"
    for path, got in run.checked():
        wrote = run.written(path)
        content = wrote.arg("content") or "" if wrote else ""
        if wrote and _LISTING.search(content):
            return "wrong arguments", f"copied a listing or grep lines: {quote(wrote)}"
        if wrote and _PLACEHOLDER.search(content):
            return "wrong arguments", f"placeholder content: {quote(wrote)}"
        known = run.failed_command() or run.warning(path) or run.from_command(content)
        if wrote and not (known or run.asked(path)):
            return "wrong arguments", f"{quote(wrote)}; judge got {short(got, 50)}"
    return _script_fails(run)


def _unnamed_script(run: Run) -> Found:
    """A script the judge runs, made by the agent and run by no command after, with a ``do``
    after it whose step does not name it: conch was left to guess what to run."""
    for failure in run.failures:
        output, exited = OUTPUT.match(failure), EXITED.match(failure)
        script = script_of(output["cmd"]) if output else exited["script"] if exited else ""
        made = next((s for s in run.steps if script and script in s.made()), None)
        if made is None or any(script in s.command() for s in run.after(made)):
            continue
        for step in run.after(made):
            if step.name == "do" and step.ok and script not in (step.arg("step") or ""):
                shown = quote(step)
                return (
                    "wrong arguments",
                    f"the step after making {script} does not name it: {shown}",
                )
    return None


def _script_fails(run: Run) -> Found:
    """A script the agent wrote that fails where it runs (the shell or Python names it in
    the error the judge got)."""
    for path, got in run.checked():
        for found in _SCRIPT_ERROR.finditer(got):
            script = found.group(1) or found.group(2)
            if wrote := run.written(script):
                return "wrong arguments", f"{quote(wrote)}; it fails: {path} got {short(got, 60)}"
    return None


def _wrong_command(run: Run) -> Found:
    failed = run.failed_command()
    if failed:
        return "wrong command", quote(failed, _FAILED)
    for failure in run.failures:  # the agent put the code of a command into its script
        output = OUTPUT.match(failure)
        wrote = run.written(script_of(output["cmd"])) if output else None
        if output and wrote and (source := run.copied(wrote)):
            shown = f"`{output['cmd']}` prints {short(output['got'], 40)}"
            return "wrong command", f"{quote(source)}; its code became {wrote.arg('path')}: {shown}"
    if run.kind == "answer":
        said = [f"{number:g}" for number in numbers_in(run.answer)] + [run.answer]
        if source := next(filter(None, map(run.from_command, said)), None):
            return "wrong command", f"{quote(source)}; answer {short(run.answer, 50)!r}"
    for path, _got in run.checked():
        wrote = run.written(path)
        if wrote and (source := run.from_command(wrote.arg("content") or "")):
            return "wrong command", f"{quote(source)}; it wrote that to {path}"
        if asked := run.asked(path):
            return (
                "wrong command",
                f"the step named {path}, its command did not write it: {quote(asked)}",
            )
        for step in run.steps:
            command = step.command()
            if step.name not in ("bash", "do") or not step.ok or path not in command:
                continue
            if re.search(rf">\s*{re.escape(path)}", command) and not run.warning(path):
                return "wrong command", f"computed the wrong thing: {quote(step)}"
            if run.kind == "edit" and not run.touched(path) and not run.warning(path):
                return "wrong command", f"changed nothing in {path}: {quote(step)}"
    return None


def _partial(run: Run) -> Found:
    made = [c[2:] for c in run.changes if c.startswith("+ ")]
    for failure in run.failures:
        exited = EXITED.match(failure)
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
            shown = quote(warning, r"empty|nothing|not valid|changed no file")
            return "never verified", f"{shown}; ended with {path} = {short(got, 30)}"
    idle = [s for s in run.steps if s.name == "do" and s.clean and _IDLE.search(s.trial())]
    if idle and run.kind != "answer" and not run.changes:
        shown = quote(idle[-1], r"^trial run on a copy: ")
        return "never verified", f"{shown}; ended with nothing changed"
    return None


def _left_wrong(run: Run) -> Found:
    """The last ``do`` that changed the files, with nothing changed after it, and the
    judge failing what it left: conch's command did not do what the step said."""
    done = [s for s in run.steps if s.name == "do" and s.changed]
    if run.kind == "answer" or not done or not run.changes:
        return None
    if any(s.changed for s in run.after(done[-1])):
        return None
    shown = quote(done[-1], r"^trial run on a copy: ")
    return "wrong command", f"its command left the files wrong: {shown}"


def _wrong_final_answer(run: Run) -> Found:
    if run.kind == "answer":
        seen = [s for s in run.steps if s.ok and not s.repeated]
        if seen:
            return "wrong final answer", f"{quote(seen[-1])}; answer {short(run.answer, 50)!r}"
        return None
    moved = any((s.ok and s.name == "fs_move") or s.clean for s in run.steps)
    if run.answer and (not run.changes or (run.kind == "rename" and not moved)):
        return "wrong final answer", f"claims {short(run.answer, 70)!r} but did not do it"
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
    _left_wrong,
    _wrong_final_answer,
)
