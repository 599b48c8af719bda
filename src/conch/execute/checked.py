"""Running a checked command: the one call every surface makes to run what the policy allowed.

``run_checked`` refuses a command the policy rejects, asks the front end (its ``approve``
callback) when the confirmation rule says a question is needed, and runs it: safe mode spawns
the programs itself from the plan the policy read (no shell), or, for a command that needs
one (a loop, ``$(...)``...), runs bash (or ``/bin/sh``) contained, or the user's shell after a
person's yes; unsafe mode hands the text to the user's shell. It applies the timeout and the
output caps, and appends one line to the audit log, for a refused command too. It never
prints, reads the terminal or exits: the front end asks, the library decides and runs.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from conch.errors import ConfirmationRequired, NoOneToAsk, PolicyRejection
from conch.execute.audit import append_audit, audit_line, audit_refusal
from conch.execute.contain import Shape, explain_failure, shape_for, unsafe_workspace, wrap
from conch.execute.environ import contained_environment, scrubbed_environment
from conch.execute.run import (
    MAX_STDERR,
    MAX_STDOUT,
    ExecResult,
    Ran,
    plan_runner_argv,
    run_captured,
    run_interactive,
    run_plan_captured,
    run_plan_interactive,
)
from conch.execute.sandbox import Sandbox, find_sandbox
from conch.execute.stages import expand_words
from conch.messages import Plan
from conch.policy import Decision, PolicyContext, Risk, Verdict, assess
from conch.policy.confirm import Confirmation, ConfirmOptions, command_ruling
from conch.policy.confirm import asked as asked_about
from conch.policy.plan import plan
from conch.policy.rules import ExecutionMode, Outcome, Ruling

# The exit code of a command stopped by Ctrl+C (128 + SIGINT), as the shell reports it.
_INTERRUPTED = 130
# The shell a contained command that needs one runs in: bash, whose grammar the policy
# parsed it with, when installed (else /bin/sh), reading no start-up file of the user's (its
# environment is the allowlist: no BASH_ENV). A person's yes runs their own shell instead.
CONTAINED_SHELL = "/bin/sh"


def contained_shell(env: Mapping[str, str]) -> list[str]:
    """The command line prefix of the shell a contained command runs in (see above)."""
    bash = shutil.which("bash", path=env.get("PATH"))
    return [bash, "--norc", "--noprofile"] if bash else [CONTAINED_SHELL]


class Choice(StrEnum):
    """What the user said to "run this?"."""

    RUN = "run"
    ABORT = "abort"
    EDIT = "edit"


@dataclass(frozen=True, slots=True)
class Answer:
    """The front end's answer: run the command shown, run nothing, or run an edit of it
    (which is checked again and asked about again). Build one with ``run()``, ``abort()`` or
    ``edit(text)``."""

    choice: Choice
    command: str = ""  # the edited text, for EDIT
    # False: a yes given in advance, nobody looked at this command (``--yes``): it runs
    # contained, as if nobody was asked (``unattended()``), except in unsafe mode.
    person: bool = True
    # Run it, and allow ``Confirmation.always``'s pattern for the rest of the session.
    always: str = ""

    @classmethod
    def run(cls) -> Answer:
        return cls(Choice.RUN)

    @classmethod
    def run_always(cls, pattern: str) -> Answer:
        """Run it, and what ``pattern`` matches without a question for the session."""
        return cls(Choice.RUN, always=pattern)

    @classmethod
    def unattended(cls) -> Answer:
        """Run it, on a yes given in advance (``--yes``): contained in safe mode."""
        return cls(Choice.RUN, person=False)

    @classmethod
    def abort(cls) -> Answer:
        return cls(Choice.ABORT)

    @classmethod
    def edit(cls, command: str) -> Answer:
        return cls(Choice.EDIT, command)


# The front end's question: (the command, its verdict, what the rule wants) -> the answer.
# ``confirmation.explain`` says the command must be explained before the question.
Approve = Callable[[str, Verdict, Confirmation], Answer]


def run_checked(
    command: str,
    context: PolicyContext,
    *,
    cwd: Path,
    state_dir: Path | None,
    approve: Approve,
    options: ConfirmOptions | None = None,
    shell: str = "/bin/sh",
    timeout: float | None = None,
    interactive: bool = True,
    verdict: Verdict | None = None,
    max_stdout: int = MAX_STDOUT,
    max_stderr: int = MAX_STDERR,
    on_start: Callable[[str, Verdict], None] | None = None,
    sandbox: Sandbox | None = None,
    base_env: Mapping[str, str] | None = None,
    pass_env: Sequence[str] = (),
    scrub_env: bool = True,
) -> Ran:
    """Check ``command`` under ``context``, ask ``approve`` if the rule says so, run it, audit it.

    The mode comes from the context: safe mode runs the command without a shell, as the
    plan ``conch.policy.plan.plan`` makes of it (each program spawned by conch, pipes,
    ``&&``/``||``/``;`` and file redirections done by conch, globs and ``~`` expanded by
    conch); a command that needs a real shell (``Verdict.needs_shell``: a loop, ``$(...)``,
    a here-document...) runs as ``bash -c command`` when nobody was asked (contained, like
    every such run) and as ``shell -c command`` after a person's yes. Unsafe mode
    (``context.unsafe``) runs ``shell -c command``. Whether to ask is
    ``conch.policy.confirm.command_ruling`` with the surface's ``options`` (None: no flags,
    no allowed-program list, so every command is asked about). ``verdict`` is the policy's
    verdict when the caller has it already.

    ``interactive`` runs the command on the user's terminal (stdin, stdout and stderr
    inherited; Ctrl+C goes to the command); otherwise it runs in its own process group with
    stdin from /dev/null and its output captured, up to ``max_stdout`` / ``max_stderr``
    bytes. ``timeout`` (seconds) stops it in either case. ``on_start`` hears the command just
    before it is spawned. The audit line goes to ``state_dir/audit.log`` (none when
    ``state_dir`` is None), for a command stopped by Ctrl+C too.

    Raises PolicyRejection for a command the policy rejects (an edit included) or the rule
    refuses, before any question; ConfirmationRequired when ``approve`` aborts. Nothing has run then. Whatever ``approve``
    raises passes through. A command that cannot start is a result (exit code 127 or 126 and
    an ``error``), not an exception.

    A refused command gets its audit line too, with a status in place of the exit code
    (``conch.execute.audit``): ``refused:policy`` for a rejection (or a PolicyRejection
    ``approve`` raises), ``refused:declined`` for an abort (or a ConfirmationRequired
    ``approve`` raises), ``refused:unasked`` when ``approve`` raises NoOneToAsk.
    """
    options = options or ConfirmOptions()
    environ = dict(os.environ if base_env is None else base_env)
    if context.environ is None and not context.unsafe:
        # Safe mode expands $NAME from what a contained command may see: no secrets.
        context = dataclasses.replace(context, environ=contained_environment(environ, pass_env))
        if verdict is not None and verdict.needs_unsafe:
            verdict = None  # judged without the variables: judge it again with them
    verdict = verdict or assess(command, context)
    box = sandbox if sandbox is not None else find_sandbox()
    workspace = context.sandbox_root or cwd
    asked = edited = False
    ruling: Ruling | None = None
    while True:
        refuse_rejected(command, verdict, cwd=cwd, state_dir=state_dir)
        # Safe mode runs the plan of programs when there is one; else a shell runs the text.
        steps = None if context.unsafe else _plan(command, context, cwd)
        ruling = command_ruling(
            command,
            verdict,
            options,
            mode=context.mode,
            unsafe=context.unsafe,
            contain=_containable(box, verdict, workspace, environ) and not context.unsafe,
        )
        if ruling.outcome is Outcome.REFUSE:
            audit_refusal(state_dir, command, cwd, "policy")
            raise PolicyRejection(f"not running it: {ruling.why}")
        if ruling.outcome is Outcome.RUN and not edited:
            break
        asked = True
        wanted = asked_about(ruling, verdict, options.programs)
        answer = _ask(approve, command, verdict, wanted, cwd, state_dir)
        if answer.choice is Choice.ABORT:
            audit_refusal(state_dir, command, cwd, "declined")
            raise ConfirmationRequired("aborted; nothing ran")
        if answer.choice is Choice.RUN and not answer.person and not context.unsafe:
            # A yes given in advance: nobody saw this command, so it runs contained.
            if not _containable(box, verdict, workspace, environ):
                audit_refusal(state_dir, command, cwd, "unasked")
                raise NoOneToAsk(
                    "a yes given in advance (--yes) runs a command contained, and no sandbox "
                    "can hold this one here; nothing ran (answer the question yourself)"
                )
            asked = False
            break
        if answer.choice is Choice.RUN or answer.command == command:
            break
        # The user's edit is a new command: checked again, and always asked about again.
        command, verdict, edited = answer.command, assess(answer.command, context), True
    # Nobody said yes: the OS holds the command to its verdict. A person's yes runs it as
    # they asked, without the secrets of conch's environment (execution.scrub_env).
    shape = None
    if not asked:
        shape = shape_for(
            verdict.risks or (verdict.risk,),
            workspace=workspace,
            network_allowed=context.mode is ExecutionMode.FULL,
        )
    env = (
        contained_environment(environ, pass_env)
        if shape is not None
        else scrubbed_environment(environ, pass_env, scrub=scrub_env)
    )
    if on_start is not None:
        on_start(command, verdict)
    started = time.monotonic()
    try:
        result = _run(
            command,
            steps,
            shape,
            box,
            env,
            shell,
            cwd,
            timeout,
            interactive,
            max_stdout,
            max_stderr,
        )
    except KeyboardInterrupt:
        if state_dir is not None:
            line = audit_line(command, cwd, _INTERRUPTED, time.monotonic() - started)
            append_audit(state_dir, line)
        raise
    audited = False
    if state_dir is not None:
        line = audit_line(command, cwd, result.exit_code, result.duration_s)
        audited = append_audit(state_dir, line)
    note = None if shape is None else explain_failure(shape, result.exit_code, result.stderr)
    return Ran(command, result, verdict, asked, audited, shape, note)


def _run(
    command: str,
    steps: Plan | None,
    shape: Shape | None,
    box: Sandbox,
    env: dict[str, str],
    shell: str,
    cwd: Path,
    timeout: float | None,
    interactive: bool,
    max_stdout: int,
    max_stderr: int,
) -> ExecResult:
    """Run the checked command: contained in ``shape`` (bubblewrap ``box``) or not; a plan
    of several programs through conch's plan runner, one program from its argv, or, with no
    plan (``steps`` None: it needs a shell, or unsafe mode), ``contained_shell`` contained
    and the user's ``shell`` otherwise."""
    if shape is not None:
        assert box.path is not None  # contained: safe mode, a sandbox
        if steps is None:
            argv = [*contained_shell(env), "-c", command]
        elif steps.simple:
            argv = expand_words(steps.stages[0].words, cwd)
        else:
            argv = plan_runner_argv(steps, cwd)
        wrapped = wrap(argv, shape, bwrap=box.path, cwd=cwd, environ=env)
        if interactive:
            return run_interactive(wrapped, cwd=cwd, env=env, timeout=timeout)
        return run_captured(
            wrapped,
            cwd=cwd,
            env=env,
            timeout=timeout,
            max_stdout=max_stdout,
            max_stderr=max_stderr,
        )
    if steps is not None and not steps.simple:
        if interactive:
            return run_plan_interactive(steps, cwd=cwd, env=env, timeout=timeout)
        return run_plan_captured(
            steps, cwd=cwd, env=env, timeout=timeout, max_stdout=max_stdout, max_stderr=max_stderr
        )
    words = None if steps is None else expand_words(steps.stages[0].words, cwd)
    if interactive:
        if words is None:
            return run_interactive(
                shell_command=command, shell=shell, cwd=cwd, env=env, timeout=timeout
            )
        return run_interactive(words, cwd=cwd, env=env, timeout=timeout)
    return run_captured(
        words,
        shell_command=None if words is not None else command,
        shell=shell,
        cwd=cwd,
        env=env,
        timeout=timeout,
        max_stdout=max_stdout,
        max_stderr=max_stderr,
    )


def _containable(
    box: Sandbox, verdict: Verdict, workspace: Path, environ: Mapping[str, str]
) -> bool:
    """Whether a sandbox can hold ``verdict``'s command: one runs here, and a command that
    writes has a workspace it may write to (not ``/``, a system directory or one holding the
    home directory: ``conch.execute.contain.unsafe_workspace``)."""
    if not box.usable:
        return False
    writes = set(verdict.risks or (verdict.risk,)) - {Risk.READ_ONLY}
    return not writes or unsafe_workspace(workspace, environ) is None


def refuse_rejected(command: str, verdict: Verdict, *, cwd: Path, state_dir: Path | None) -> None:
    """Refuse ``command`` when its ``verdict`` rejects it: write its ``refused:policy`` audit
    line to ``state_dir/audit.log`` (none when ``state_dir`` is None) and raise
    PolicyRejection. ``run_checked`` starts with this; a surface that runs what passes in a
    runner of its own (``conch shell`` runs the user's lines on their terminal) calls it
    first, so a refusal is refused and audited the same way everywhere."""
    if verdict.decision is Decision.REJECT:
        audit_refusal(state_dir, command, cwd, "policy")
        reason = verdict.reasons[0] if verdict.reasons else "rejected by the safety policy"
        raise PolicyRejection(f"not running it: {reason}")


def _plan(command: str, context: PolicyContext, cwd: Path) -> Plan | None:
    """The plan safe mode runs ``command`` as, or None when it needs a shell (the verdict
    has judged it whole either way)."""
    try:
        return plan(command, context.environ, cwd=cwd, root=context.sandbox_root)
    except PolicyRejection:
        return None


def _ask(
    approve: Approve,
    command: str,
    verdict: Verdict,
    wanted: Confirmation,
    cwd: Path,
    state_dir: Path | None,
) -> Answer:
    """``approve``'s answer; a refusal it raises is audited, then passes through."""
    try:
        return approve(command, verdict, wanted)
    except NoOneToAsk:
        audit_refusal(state_dir, command, cwd, "unasked")
        raise
    except ConfirmationRequired:
        audit_refusal(state_dir, command, cwd, "declined")
        raise
    except PolicyRejection:
        audit_refusal(state_dir, command, cwd, "policy")
        raise
