"""The model's side of ``conch shell``: a turn streamed to the terminal (without the command
output the model made up), then each command the reply suggests, checked
(``conch.shell.check``), shown with the safety policy's verdict and run only on the user's
say.

A suggestion with a problem (a path that does not exist, a program or option this machine
lacks, a dry run that failed) is shown with it, and the model is asked once for a correction
(``generation.repair``); a correction without the problem is offered instead, otherwise the
suggestion is offered with its problems, and always asked about. A suggestion can be run
(``y``), edited (``e``: it fills the input line, and what the user sends runs as a typed line
would, after the same policy check) or left (``n``, the default). A command the policy
rejects is shown with the reason and never run. Whatever runs reaches the next turn's
context like a typed command. A suggestion that does not run leaves its line in the audit
log (``refused:policy``, ``refused:declined`` or ``refused:unasked``); the policy's refusal
is ``conch.execute.checked.refuse_rejected``, the one ``run_checked`` makes.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from conch.cli import ui
from conch.cli.shellparts import ShellParts
from conch.errors import ConchError, PolicyRejection
from conch.policy import Decision, Verdict
from conch.policy.rules import Outcome
from conch.shell.context import output_tail
from conch.shell.turns import judge, model_turn, shown_reasons, suggestion_ruling

if TYPE_CHECKING:
    from conch.execute.audit import Refusal
    from conch.execute.run import Ran
    from conch.shell.check import Checked

QUESTION = "Run it? [y]es, [e]dit, [n]o [n] "
NOT_FOUND_QUESTION = "conch: no such command; ask the model about this line instead? [y/N] "


def ask_model(parts: ShellParts, text: str) -> None:
    """One model turn about ``text``: the reply streams, is saved and counted, then its
    suggested commands are offered. Ctrl+C stops the reply; a failed reply is one line."""
    from conch.agent.events import TurnFinished
    from conch.providers.base import drain

    view = parts.view
    log = parts.turn_log()
    view.begin()
    try:
        with log.turn(text):
            turn = model_turn(parts.context, parts.provider, text, parts.options, parts.known())
            reply = drain(turn, view.on_event)
            log.code = 0
    except KeyboardInterrupt:
        view.on_event(TurnFinished("", 1))
        parts.say("stopped; the question joins your next one")
        return
    except ConchError as exc:
        view.on_event(TurnFinished("", 1))
        parts.warn(f"{exc}; the question joins your next one")
        return
    view.on_event(TurnFinished(reply.text, 1, reply.usage))
    if reply.dropped:
        lines = "a line" if reply.dropped == 1 else f"{reply.dropped} lines"
        parts.say(f"left out {lines} the model made up as command output (nothing ran)")
    parts.save_turn(text, reply)
    if reply.eviction is not None:
        parts.say(reply.eviction.notice)
    parts.count(reply.usage, "ask")
    for command in reply.commands:
        offer(parts, command)


def offer(parts: ShellParts, command: str) -> Ran | None:
    """Check one suggested command (and have it corrected when it has a problem), show it
    with the policy's verdict and what the checks found; run it (or the user's edit of it)
    when the user says so. What ran, or None."""
    env = parts.env
    checked = _check(parts, command)
    heading = "the model suggests:"
    if checked.problems and not checked.rejected and parts.loaded.settings.generation.repair:
        _show_checked(parts, checked, heading)
        corrected = _correct(parts, checked)
        if corrected is not None:
            checked, heading = corrected, "the model's correction:"
            _show_checked(parts, checked, heading)
    else:
        _show_checked(parts, checked, heading)
    command, verdict = checked.command, checked.verdict
    if _refused(parts, command, verdict):
        return None
    ruling = suggestion_ruling(command, verdict, parts.settings.confirm_cmd, parts.permissions)
    if checked.ok and ruling.outcome is Outcome.RUN:
        # No question: it runs contained, not in your shell (None: it could not, so ask).
        ran = parts.run_contained(command)
        if ran is not None:
            return ran
    if env.open_terminal() is None:
        _audit(parts, command, "unasked")
        parts.say("not run: there is no terminal to ask on")
        return None
    answer = ui.ask(env, QUESTION, "yen", "n")
    if answer == "y":
        return parts.run(command, "suggested")
    if answer == "e":
        return edit(parts, command)
    _audit(parts, command, "declined")
    return None


def edit(parts: ShellParts, command: str) -> Ran | None:
    """The input line pre-filled with ``command``; what the user sends runs after the policy
    check (an empty line runs nothing)."""
    assert parts.read is not None
    line = parts.read(parts.prompt(), command).text.strip()
    if not line:
        parts.say("nothing run")
        return None
    verdict = judge(line, parts.state.cwd)
    if verdict.decision is Decision.REJECT:
        _show(parts, line, verdict, "your edit:")
    if _refused(parts, line, verdict):
        return None
    return parts.run(line, "edited")


def not_found(parts: ShellParts, ran: Ran) -> bool:
    """Whether a typed line failed as a missing command would (exit 127, or a non-zero exit
    that says "command not found"): worth offering to ask the model instead."""
    if ran.result.interrupted:
        return False
    code = ran.exit_code
    return code == 127 or (code != 0 and "command not found" in output_tail(ran.output))


def offer_model(parts: ShellParts, line: str) -> None:
    """After a missing command: ask whether to send ``line`` to the model; on yes, do."""
    if ui.ask(parts.env, NOT_FOUND_QUESTION, "yn", "n") == "y":
        ask_model(parts, line)


def _refused(parts: ShellParts, command: str, verdict: Verdict) -> bool:
    """Whether the policy refuses ``command`` (said, and audited)."""
    from conch.execute.checked import refuse_rejected

    try:
        refuse_rejected(command, verdict, cwd=Path(parts.state.cwd), state_dir=parts.state_dir)
    except PolicyRejection:
        parts.warn(f"not running it: {_reason(verdict)}")
        return True
    return False


def _audit(parts: ShellParts, command: str, why: Refusal) -> None:
    from conch.execute.audit import audit_refusal

    audit_refusal(parts.state_dir, command, Path(parts.state.cwd), why)


def _check(parts: ShellParts, command: str) -> Checked:
    """``command`` checked where it would run (a spinner while it is)."""
    parts.view.begin("checking")
    try:
        return parts.check(command)
    finally:
        parts.view.pause()


def _correct(parts: ShellParts, checked: Checked) -> Checked | None:
    """The model's correction of ``checked``, checked, when it has none of the problems
    (said, otherwise, and None: the suggestion stands as it is)."""
    from conch.providers.base import drain
    from conch.shell.turns import repair_turn

    parts.say("asking the model to correct it")
    parts.view.begin("correcting")
    try:
        turn = repair_turn(
            parts.context, parts.provider, checked.command, checked.problems, parts.options
        )
        repaired = drain(turn)
    except KeyboardInterrupt:
        parts.say("correction stopped")
        return None
    except ConchError as exc:
        parts.say(f"no correction: {exc}")
        return None
    finally:
        parts.view.pause()
    parts.count(repaired.usage, "repair")
    if repaired.command == checked.command:
        parts.say("the model suggests the same command again")
        return None
    corrected = _check(parts, repaired.command)
    if corrected.rejected:
        parts.say(f"its correction, {corrected.command}, is refused: {_reason(corrected.verdict)}")
        return None
    if corrected.problems:
        parts.say(f"its correction, {corrected.command}, is no better: {corrected.problems[0]}")
        return None
    return corrected


def _show_checked(parts: ShellParts, checked: Checked, heading: str) -> None:
    notes = [f"problem: {problem}" for problem in checked.problems]
    if checked.ok and checked.seen:
        notes.append(f"tried: {checked.seen}")
    _show(parts, checked.command, checked.verdict, heading, notes)


def _show(
    parts: ShellParts, command: str, verdict: Verdict, heading: str, notes: list[str] | None = None
) -> None:
    parts.view.pause()
    reasons = [*shown_reasons(verdict), *(notes or [])]
    ui.show_command(parts.env, command, verdict.risk.value, reasons, [heading])


def _reason(verdict: Verdict) -> str:
    reasons = shown_reasons(verdict)
    return reasons[0] if reasons else "rejected by the safety policy"
