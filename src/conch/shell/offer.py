"""The offer of a suggested command in ``conch shell``: checked, shown, then run only on the
user's say.

A command the conversation suggested is checked where it would run (``ShellParts.check``:
the policy's verdict, the files it reads, its programs and options, a dry run). A problem is
shown, and the model is asked once for a correction (``generation.repair``,
``conch.shell.turns.repair_turn``); a correction without the problem is offered in its place,
otherwise the suggestion is offered with its problems. A command the one-shot pipeline made
has been through those stages there: its checks are read off the proposal
(``conch.shell.check.from_proposal``), and a correction validation suggested is offered in
its place; a problem left (a file the shell's own check finds missing) is shown to the model
once more, in the conversation, which holds what ran before the request.

Then one rule decides (``decide``): a command the policy rejects is shown with the reason and
never run (audited ``refused:policy``); one that may run without a question
(``shell.confirm_cmd: false``, read-only, no problem) runs contained; every other one is asked
about (``Question("suggestion")``): yes runs it on the terminal, edit runs the user's edit of
it after the policy's check, no leaves it (audited ``refused:declined``; no one to ask,
``refused:unasked``). Whatever runs reaches the next turn like a typed command.

A file the reply proposes (``conch.shell.diffs``) is offered by ``offer_file``: shown as a
diff against the disk (``FileShown``), never written when it has a problem, and written
(``apply_change``: atomically, only when the file is still as the diff saw it) only after the
user's yes to ``Question("file")``.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from conch.errors import ConchError, NoOneToAsk, PolicyRejection
from conch.policy import Decision, Verdict
from conch.policy.rules import Outcome
from conch.shell.events import CommandShown, FileShown, Question, Said, ShellEvent, Working
from conch.shell.turns import judge, shown_reasons, suggestion_ruling

if TYPE_CHECKING:
    from conch.command.proposal import Proposal
    from conch.execute.audit import Refusal
    from conch.execute.run import Ran
    from conch.shell.check import Checked
    from conch.shell.diffs import Proposed
    from conch.shell.parts import ShellParts

__all__ = ["CORRECTION", "EDITED", "SUGGESTS", "decide", "offer", "offer_file", "offer_proposal"]

SUGGESTS = "the model suggests:"
CORRECTION = "the model's correction:"
EDITED = "your edit:"

Offered = Generator[ShellEvent, None, "Ran | None"]


def offer(parts: ShellParts, command: str) -> Offered:
    """Check one command the conversation suggested (and have it corrected when it has a
    problem), show it, and run it (or the user's edit of it) when the rule or the user says
    so. Returns what ran, or None."""
    yield Working("checking")
    checked = parts.check(command)
    if checked.problems and not checked.rejected and parts.loaded.settings.generation.repair:
        yield shown(checked, SUGGESTS)
        corrected = yield from _correct(parts, checked)
        if corrected is not None:
            checked = corrected
            yield shown(checked, CORRECTION)
    else:
        yield shown(checked, SUGGESTS)
    return (yield from decide(parts, checked))


def offer_proposal(parts: ShellParts, proposal: Proposal) -> Offered:
    """Show the command the one-shot pipeline proposed, with what its stages found; a
    correction validation suggested is offered in its place. Then as ``offer``."""
    from conch.shell.check import correction_of, from_proposal

    checked = from_proposal(proposal, parts.state)
    yield shown(checked, SUGGESTS)
    correction = None if checked.rejected else correction_of(proposal, parts.state)
    if correction is not None:
        checked = correction
        yield shown(checked, CORRECTION)
    elif checked.problems and not checked.rejected and parts.loaded.settings.generation.repair:
        # The pipeline saw the request alone; the conversation holds what ran before it
        # (``ls logs`` showing where app.log is), so the model is asked once more with it.
        corrected = yield from _correct(parts, checked)
        if corrected is not None:
            checked = corrected
            yield shown(checked, CORRECTION)
    return (yield from decide(parts, checked))


def offer_file(parts: ShellParts, proposed: Proposed) -> Iterator[ShellEvent]:
    """Show a file the reply proposes as a diff, and write it on the user's yes."""
    from conch.execute.checked import Choice
    from conch.shell.diffs import ChangeError, apply_change, change_for

    change = change_for(proposed, parts.state.cwd)
    yield FileShown(change)
    if change.problem:
        yield Said(f"not written: {change.summary}", warning=True)
        return
    if change.unchanged:
        yield Said(f"{change.path} is already as proposed")
        return
    try:
        answer = parts.approve(Question("file", change.path, change=change))
    except NoOneToAsk:
        answer = None
    written = answer is not None and answer.choice is Choice.RUN
    if written:
        try:
            apply_change(change)
        except ChangeError as exc:
            yield Said(str(exc), warning=True)
            written = False
        else:
            yield Said(f"wrote {change.summary}")
    else:
        yield Said(f"{change.path} not written")
    yield from parts.save({"type": "file", "path": change.path, "written": written})


def decide(parts: ShellParts, checked: Checked) -> Offered:
    """Refuse, run or ask about a checked command (the module says how)."""
    command, verdict = checked.command, checked.verdict
    if (yield from refused(parts, command, verdict)):
        return None
    ruling = suggestion_ruling(command, verdict, parts.settings.confirm_cmd, parts.permissions)
    if checked.ok and ruling.outcome is Outcome.RUN:
        # No question: it runs contained, not in the user's shell (None: it could not, so ask).
        ran = yield from parts.run_contained(command)
        if ran is not None:
            return ran
    from conch.execute.checked import Choice

    try:
        answer = parts.approve(Question("suggestion", command, verdict))
    except NoOneToAsk:
        _audit(parts, command, "unasked")
        yield Said("not run: there is no terminal to ask on")
        return None
    if answer.choice is Choice.RUN:
        return (yield from parts.run(command, "suggested"))
    if answer.choice is Choice.EDIT:
        return (yield from edit(parts, answer.command or command))
    _audit(parts, command, "declined")
    return None


def edit(parts: ShellParts, command: str) -> Offered:
    """The user edits ``command`` (``parts.edit``); what they send runs after the policy's
    check (an empty line runs nothing)."""
    line = parts.edit(command).strip()
    if not line:
        yield Said("nothing run")
        return None
    verdict = judge(line, parts.state.cwd)
    if verdict.decision is Decision.REJECT:
        yield CommandShown(EDITED, line, verdict, tuple(shown_reasons(verdict)))
    if (yield from refused(parts, line, verdict)):
        return None
    return (yield from parts.run(line, "edited"))


def refused(parts: ShellParts, command: str, verdict: Verdict) -> Generator[ShellEvent, None, bool]:
    """Whether the policy refuses ``command`` (said, and audited as ``run_checked``'s own
    refusal is: ``conch.execute.checked.refuse_rejected``)."""
    from conch.execute.checked import refuse_rejected

    try:
        refuse_rejected(command, verdict, cwd=Path(parts.state.cwd), state_dir=parts.state_dir)
    except PolicyRejection:
        yield Said(f"not running it: {reason(verdict)}", warning=True)
        return True
    return False


def shown(checked: Checked, heading: str) -> CommandShown:
    """How a checked command is shown: the verdict's reasons worth showing, its problems,
    and what its dry run saw when it has none."""
    notes = [*shown_reasons(checked.verdict), *(f"problem: {p}" for p in checked.problems)]
    if checked.ok and checked.seen:
        notes.append(f"tried: {checked.seen}")
    return CommandShown(heading, checked.command, checked.verdict, tuple(notes))


def reason(verdict: Verdict) -> str:
    """The first reason worth showing why the policy rejects a command."""
    reasons = shown_reasons(verdict)
    return reasons[0] if reasons else "rejected by the safety policy"


def _correct(parts: ShellParts, checked: Checked) -> Generator[ShellEvent, None, Checked | None]:
    """The model's correction of ``checked``, checked, when it has none of the problems
    (said, otherwise, and None: the suggestion stands as it is). Ctrl+C stops the
    correction, and the suggestion is offered as it was."""
    from conch.providers.base import drain
    from conch.shell.turns import repair_turn

    yield Said("asking the model to correct it")
    yield Working("correcting")
    try:
        turn = repair_turn(
            parts.context, parts.provider, checked.command, checked.problems, parts.options
        )
        repaired = drain(turn)  # its text is a command line, not shown as it streams
    except KeyboardInterrupt:
        yield Said("correction stopped")
        return None
    except ConchError as exc:
        yield Said(f"no correction: {exc}")
        return None
    yield from parts.count(repaired.usage, "repair")
    if repaired.command == checked.command:
        yield Said("the model suggests the same command again")
        return None
    yield Working("checking")
    corrected = parts.check(repaired.command)
    if corrected.rejected:
        yield Said(f"its correction, {corrected.command}, is refused: {reason(corrected.verdict)}")
        return None
    if corrected.problems:
        yield Said(f"its correction, {corrected.command}, is no better: {corrected.problems[0]}")
        return None
    return corrected


def _audit(parts: ShellParts, command: str, why: Refusal) -> None:
    from conch.execute.audit import audit_refusal

    audit_refusal(parts.state_dir, command, Path(parts.state.cwd), why)
