"""The ``bash`` tool: a command the model proposes, checked and run like any other.

Every command goes through the safety policy and ``conch.execute.run_checked``, the one
runner every surface uses (a shell in safe mode only for what needs one, contained when
nobody is asked; a timeout that kills the process group, output caps, an audit line). Whether the user is asked depends on the execution mode
(``conch.agent.modes``); the question itself is the front end's ``confirm`` callback. A
command the user refused is remembered: proposed again in the same session, it is refused
without asking, and the model is told why. Every refusal leaves its audit line
(``refused:policy``, ``refused:declined`` or ``refused:unasked``), written by
``run_checked`` or, for what never reaches it (a command refused earlier in the session, a
file tool's delete), by the ``Shell``.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from conch.agent.inplace import snapshot, unchanged_note
from conch.agent.modes import describe
from conch.config.agent import COMMAND_TIMEOUT_S, MAX_STDERR_BYTES, MAX_STDOUT_BYTES
from conch.errors import ConfirmationRequired, NoOneToAsk, PolicyRejection
from conch.execute.audit import Refusal, audit_refusal
from conch.execute.checked import Answer, Approve, Choice, run_checked
from conch.execute.environ import contained_environment
from conch.execute.run import ExecResult
from conch.execute.sandbox import Sandbox
from conch.execute.stages import installed_twin
from conch.messages import ToolOutput
from conch.policy import Decision, ExecutionMode, PolicyContext, Risk, Verdict, assess
from conch.policy.confirm import Confirmation, ConfirmOptions, asked, command_parts
from conch.policy.plan import plan
from conch.policy.rules import (
    TOOL_OF_KIND,
    Action,
    Kind,
    Outcome,
    Permissions,
    always_pattern,
    decide,
    with_rule,
)
from conch.tools import Tool, make_tool

# The defaults of ``agent.terminal`` in the config.
DEFAULT_TIMEOUT_S = COMMAND_TIMEOUT_S
MAX_STDOUT = MAX_STDOUT_BYTES
MAX_STDERR = MAX_STDERR_BYTES

BASH_TRIGGER = "Run a shell command (ls, grep, find, git...) and read its output."
BASH_DESCRIPTION = """\
Run one shell command in the working directory and return its output and exit code.

Commands run without a shell: pipes (|), lists (&&, ||, ;), file redirections (<, >, >>)
and globs work; $(...), backticks, variables, loops and here-documents do not. Every
command is checked by a safety policy first; a refused command does not run and the
reason comes back instead. Do not propose a command the user refused again.

Args:
    command: the command line to run, e.g. "ls -la src" or "grep -rn TODO . | head".
"""


# Why a command did not run (``conch.execute.audit.Refusal``): the safety policy refused it,
# the user said no (now or earlier in the session), or it needed a yes and there was no one
# to ask. Told of each refused command and why, before the model is.
OnRefused = Callable[[str, Refusal], None]


class CommandRefused(Exception):
    """The command did not run: the policy, the mode or the user said no (the message says
    which, for the model to read)."""


class _NoOneToAsk(NoOneToAsk):
    """The command needs a yes and there is no confirmation callback."""


@dataclass(slots=True)
class Shell:
    """What the ``bash`` tool runs with in one session: where, in which mode, who is asked,
    and the commands the user refused.

    ``root``: when set, every path a command names must resolve inside it. ``state_dir``:
    where the audit log goes, for commands that ran and commands refused (None: no audit
    line). ``unsafe``: hand commands to ``shell``
    (the user's shell), which always asks first. ``on_refused``: told of every command
    that did not run, and why.
    """

    cwd: Path
    mode: ExecutionMode = ExecutionMode.RESTRICTED
    confirm: Approve | None = None
    state_dir: Path | None = None
    root: Path | None = None
    unsafe: bool = False
    shell: str = "/bin/sh"
    timeout: float = DEFAULT_TIMEOUT_S
    max_stdout: int = MAX_STDOUT  # bytes of a command's output kept; the rest is cut
    max_stderr: int = MAX_STDERR
    refused: set[str] = field(default_factory=set)
    on_refused: OnRefused | None = None
    permissions: Permissions | None = None  # the user's permission rules
    sandbox: Sandbox | None = None  # None: found when a command first runs
    pass_env: tuple[str, ...] = ()  # variables a contained command may see besides the usual
    scrub_env: bool = True  # False: a command the user approved sees their whole environment
    # What the user allowed "always, for this session": (tool, pattern), in order.
    session_rules: list[tuple[str, str]] = field(default_factory=list)

    def run(self, command: str) -> ToolOutput:
        """Check, maybe ask, run ``command``; its output for the model, holding the command
        that ran and how it ended (``ToolOutput.detail``). Raises CommandRefused when it did
        not run, and ValueError for an empty command."""
        key = _normal(command)
        if not key:
            raise ValueError("the command is empty")
        command, note = _with_installed_twin(command)
        if key in self.refused:
            self._refused(command, "declined", audit=True)
            raise CommandRefused(
                f"the user already refused `{key}` in this session, so it was not run. "
                "Do not propose it again: try another way or ask the user."
            )
        context = PolicyContext(
            unsafe=self.unsafe,
            mode=self.mode,
            cwd=self.cwd,
            sandbox_root=self.root,
            environ=None if self.unsafe else contained_environment(os.environ, self.pass_env),
        )
        before = snapshot(command, self.cwd)
        try:
            ran = run_checked(
                command,
                context,
                cwd=self.cwd,
                state_dir=self.state_dir,
                approve=self._approve,
                options=ConfirmOptions(mode=self.mode, permissions=self._rules()),
                shell=self.shell,
                timeout=self.timeout,
                interactive=False,
                max_stdout=self.max_stdout,
                max_stderr=self.max_stderr,
                sandbox=self.sandbox,
                pass_env=self.pass_env,
                scrub_env=self.scrub_env,
            )
        except PolicyRejection as exc:  # run_checked wrote the audit line of each refusal
            self._refused(command, "policy")
            raise CommandRefused(f"the safety policy refused it: {_reason(exc)}") from None
        except NoOneToAsk:
            self._refused(command, "unasked")
            raise CommandRefused(
                f"it needs the user's yes in {self.mode} mode and no one can be asked; "
                "nothing ran. Use read-only commands, or tell the user what to run."
            ) from None
        except ConfirmationRequired:
            self.refused.add(key)
            self._refused(command, "declined")
            raise CommandRefused(
                "the user refused to run it; nothing ran. Do not propose this command again."
            ) from None
        result = format_result(ran.command, ran.result)
        written = redirected_files(ran.command, self.cwd)
        silent = _silent_script(ran.command, ran.result, written)
        same = unchanged_note(before, self.cwd, ran.result.exit_code) if before else ""
        contained = f"[{ran.note}]" if ran.note else ""
        parts = (result, contained, note, show_written(written), silent, same)
        return ToolOutput("\n".join(p for p in parts if p), ran)

    def permit(self, command: str, kind: Kind = Kind.DELETE, parts: tuple[str, ...] = ()) -> None:
        """Decide ``command`` as ``run`` would, without running it: the policy, then the one
        rule (``conch.policy.rules.decide``) and, where it wants a yes, the user. For what a
        tool does itself that a command could do too (a file tool's delete is decided as
        the ``rm`` doing it), so the same rules hold. Raises CommandRefused when it may not
        happen (with its audit line); an edit counts as a no. ``parts``: what the user's
        permission rules match (a delete's paths); none: ``command``."""
        context = PolicyContext(unsafe=False, mode=self.mode, cwd=self.cwd, sandbox_root=self.root)
        self.permit_action(kind, command, assess(command, context), parts=parts)

    def permit_write(self, path: str, exists: bool, diff: str = "") -> None:
        """Decide a file tool's write of ``path`` (relative to the root): replacing or
        editing a file that exists, or creating one, under the one rule, as a command that
        writes would be decided. Raises CommandRefused when it may not happen."""
        kind = Kind.WRITE if exists else Kind.CREATE
        what = "replace or edit" if exists else "create"
        subject = f"fs_write {path}"
        verdict = Verdict(
            Decision.CONFIRM,
            Risk.WRITES,
            (f"The file tool would {what} {path!r}.",),
            ("fs_write",),
            (),
            (path,),
            risks=(Risk.WRITES,),
        )
        self.permit_action(kind, subject, verdict, parts=(path,), detail=diff)

    def permit_move(self, pairs: Sequence[tuple[str, str]]) -> None:
        """Decide a file tool's move of each (source, target) pair, relative to the root,
        under the one rule, as ``mv`` would be decided (one question for them all; ``move``
        rules match each path)."""
        command = shlex.join(["mv", *(p for pair in pairs for p in pair)])
        verdict = Verdict(
            Decision.CONFIRM,
            Risk.WRITES,
            tuple(f"The file tool would move {a!r} to {b!r}." for a, b in pairs[:5]),
            ("fs_move",),
            (),
            tuple(p for pair in pairs for p in pair),
            risks=(Risk.WRITES,),
        )
        parts = tuple(p for pair in pairs for p in pair)
        self.permit_action(Kind.MOVE, command, verdict, parts=parts)

    def permit_fetch(self, url: str) -> None:
        """Decide a web fetch (or search) of ``url`` under the one rule: it reaches the
        network, so it is asked about where a network command would be."""
        verdict = Verdict(
            Decision.CONFIRM,
            Risk.NETWORK,
            (f"A web request: {url}",),
            ("web_fetch",),
            (),
            (),
            risks=(Risk.NETWORK,),
        )
        self.permit_action(Kind.FETCH, url, verdict)

    def permit_foreign(self, server: str, tool: str) -> None:
        """Decide a call of another MCP server's ``tool`` under the one rule: conch cannot
        tell or contain what it does, so it is asked about in every mode unless a
        permission rule (``mcp``, pattern ``server.tool``) allows it."""
        subject = f"{server}.{tool}"
        verdict = Verdict(
            Decision.CONFIRM,
            Risk.UNKNOWN,
            (f"A tool of the MCP server {server!r}: conch cannot tell what it does.",),
            (subject,),
            (),
            (),
            risks=(Risk.UNKNOWN,),
        )
        self.permit_action(Kind.MCP_TOOL, subject, verdict, contain=False)

    def permit_action(
        self,
        kind: Kind,
        subject: str,
        verdict: Verdict,
        *,
        contain: bool = True,
        parts: tuple[str, ...] = (),
        detail: str = "",
    ) -> None:
        """The one rule for an action of ``kind`` on ``subject`` judged ``verdict``: return
        when it may happen (the user said yes where asked), else raise CommandRefused."""
        key = _normal(subject)
        if key in self.refused:
            self._refused(subject, "declined", audit=True)
            raise CommandRefused(
                f"the user already refused `{key}` in this session, so nothing was done. "
                "Do not try it again: try another way or ask the user."
            )
        ruling = decide(
            Action(
                kind,
                subject,
                risk=verdict.risk,
                rejected=verdict.decision is Decision.REJECT,
                reasons=verdict.reasons,
                parts=parts,
            ),
            self.mode,
            permissions=self._rules(),
            contain=contain,
        )
        if ruling.outcome is Outcome.REFUSE:
            self._refused(subject, "policy", audit=True)
            raise CommandRefused(f"the safety policy refused it: {ruling.why or 'not allowed'}")
        if ruling.outcome is Outcome.RUN:
            return
        wanted = dataclasses.replace(asked(ruling, verdict, ()), detail=detail)
        try:
            answer = self._approve(subject, verdict, wanted, kind, (parts or (subject,))[0])
        except _NoOneToAsk:
            self._refused(subject, "unasked", audit=True)
            raise CommandRefused(
                f"it needs the user's yes in {self.mode} mode and no one can be asked; "
                f"nothing was done. Tell the user what you would {kind} instead."
            ) from None
        if answer.choice is not Choice.RUN:
            self.refused.add(key)
            self._refused(subject, "declined", audit=True)
            raise CommandRefused("the user refused it; nothing was done. Do not try it again.")

    def _refused(self, command: str, why: Refusal, *, audit: bool = False) -> None:
        """Tell ``on_refused``; with ``audit``, write the refusal's audit line (run_checked
        writes it for the refusals it makes)."""
        if audit:
            audit_refusal(self.state_dir, command, self.cwd, why)
        if self.on_refused is not None:
            self.on_refused(command, why)

    def _approve(
        self,
        command: str,
        verdict: Verdict,
        wanted: Confirmation,
        kind: Kind = Kind.COMMAND,
        part: str = "",
    ) -> Answer:
        """Ask the person (the rule, ``conch.policy.rules``, decided a question is needed),
        offering to allow the like of ``part`` for the rest of the session; an answer that
        does is kept (``session_rules``)."""
        if self.confirm is None:
            raise _NoOneToAsk(command)
        first = part or (command_parts(command)[0][:1] or (command,))[0]
        offered = dataclasses.replace(wanted, always=always_pattern(kind, first))
        answer = self.confirm(command, verdict, offered)
        if answer.choice is Choice.RUN and answer.always:
            self.session_rules.append((TOOL_OF_KIND[kind], answer.always))
        return answer

    def _rules(self) -> Permissions | None:
        """The user's permission rules, then what they allowed for this session."""
        rules = self.permissions
        for tool, pattern in self.session_rules:
            rules = with_rule(rules, tool, pattern)
        return rules


def bash_tool(shell: Shell) -> Tool:
    """The ``bash`` tool running commands through ``shell``; its system addendum tells the
    model what the mode lets it run."""

    def bash(command: str) -> ToolOutput:
        return shell.run(command)

    addendum = "BASH: " + describe(shell.mode, shell.confirm is not None)
    addendum += (
        " Count, sum and find with commands (wc, awk, sort, find, grep) rather than working"
        " the numbers or names out yourself."
    )
    if not shell.unsafe:
        # The small model is told the plainer subset (measured: the agent benchmark passed
        # fewer tasks when told that loops and $(...) work, docs/agent.md); what it writes
        # beyond it still runs when the policy allows, through a shell.
        addendum += " Commands run without a shell: no $(...), backticks or variables."
    return make_tool(
        bash, name="bash", description=BASH_DESCRIPTION, trigger=BASH_TRIGGER, system=addendum
    )


_FIRST_PROGRAM = re.compile(r"\s*([A-Za-z0-9_.-]+)(?=\s|$)")


def _with_installed_twin(command: str) -> tuple[str, str]:
    """``command`` with its first program replaced by the installed twin when that program
    is missing (``python`` -> ``python3`` on Debian), and a note saying so; the command
    checked, confirmed, audited and run is the replaced one."""
    found = _FIRST_PROGRAM.match(command)
    twin = installed_twin(found.group(1)) if found else None
    if found is None or twin is None:
        return command, ""
    name = found.group(1)
    replaced = command[: found.start(1)] + twin + command[found.end(1) :]
    return replaced, f"[{name} is not installed here; ran it as {twin}]"


def format_result(command: str, result: ExecResult) -> str:
    """What the model reads of a finished command: output, errors, exit code, and notes."""
    parts: list[str] = []
    if result.stdout:
        parts.append(result.stdout.rstrip("\n"))
    if result.stdout_truncated:
        parts.append("[stdout truncated]")
    if result.stderr:
        parts.append("[stderr]\n" + result.stderr.rstrip("\n"))
    if result.stderr_truncated:
        parts.append("[stderr truncated]")
    if result.error:
        parts.append(f"[error] {result.error}")
    if result.timed_out:
        parts.append("[stopped: it ran past the time limit]")
    if not (result.stdout or result.stderr or result.error):
        parts.append("(no output)")
    parts.append(f"[exit code {result.exit_code}]")
    return "\n".join(parts)


_SHOW_LINES = 20
_SHOW_CHARS = 2000


def redirected_files(command: str, cwd: Path) -> list[tuple[str, str]]:
    """Each file in ``cwd`` that ``command`` redirected its output to, once, in the order
    written, with the text it holds now: a command whose output went to a file shows
    "(no output)", and small models then wrote that text over the file, so the result shows
    it (``show_written``). Files outside ``cwd`` (``/dev/null``) are left out."""
    try:
        steps = plan(command).steps
    except PolicyRejection:  # not a command line conch runs itself (the user's shell)
        return []
    targets = [
        r.target
        for step in steps
        for stage in step.stages
        for r in stage.redirects
        if r.writes and r.target
    ]
    base = cwd.resolve()
    found: list[tuple[str, str]] = []
    for target in dict.fromkeys(targets):
        path = (cwd / target).resolve()
        if not path.is_relative_to(base) or not path.is_file():
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        found.append((target, data.decode("utf-8", errors="replace")))
    return found


def show_written(written: list[tuple[str, str]]) -> str:
    """``redirected_files`` as the model reads it: each file's first lines, or that it is
    empty."""
    blocks: list[str] = []
    for target, text in written:
        lines = text.splitlines()
        if not lines:
            blocks.append(f"{target} is empty")
            continue
        body = "\n".join(lines[:_SHOW_LINES])[:_SHOW_CHARS]
        more = "\n[...]" if len(lines) > _SHOW_LINES or len(body) < len(text.rstrip("\n")) else ""
        count = "1 line" if len(lines) == 1 else f"{len(lines)} lines"
        blocks.append(f"{target} now holds ({count}):\n{body}{more}")
    return "\n".join(blocks)


_PYTHON_SCRIPT = re.compile(r"\s*python3?\s+(?:-\S+\s+)*([^\s;|&<>]+\.py)(?=[\s;|&<>]|$)")


def _silent_script(command: str, result: ExecResult, written: list[tuple[str, str]]) -> str:
    """A note when a Python script ran without error and printed nothing, to its output or
    to the file it was sent to: small models write a function and never call it."""
    found = _PYTHON_SCRIPT.match(command)
    printed = result.stdout.strip() or any(text.splitlines() for _, text in written)
    if found is None or result.exit_code != 0 or printed:
        return ""
    return (
        f"[{found.group(1)} printed nothing: a script shows its result only with print(), "
        "and a function it defines runs only when the script calls it]"
    )


def _normal(command: str) -> str:
    return " ".join(command.split())


def _reason(exc: PolicyRejection) -> str:
    text = str(exc)
    return text.removeprefix("not running it: ")
