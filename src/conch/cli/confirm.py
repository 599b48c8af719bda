"""The front ends' side of running a command: refusing a rejected one with a hint, and
asking on the terminal when the library's confirmation rule (or the agent's execution
mode) wants a yes."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from conch.cli import ui
from conch.cli.environment import Environment
from conch.cli.invocation import Run
from conch.errors import NoOneToAsk, PolicyRejection

if TYPE_CHECKING:
    from conch.config.settings import LoadedSettings, PromptConfig
    from conch.execute.checked import Answer, Approve
    from conch.policy import Verdict
    from conch.policy.confirm import Confirmation
    from conch.providers.base import Provider


def fail_if_rejected(
    state: Run, verdict: Verdict, show: str | None = None, *, printing: bool = False
) -> None:
    """Refuse a rejected command, showing it (with ``show``) and saying what would allow it
    where something would: unsafe mode, for a command that needs a shell.

    ``printing`` is for --print and --json, which run nothing anyway: the message says that
    the policy rejects the command rather than that conch will not run it. A command that
    was to run is refused by ``run_checked`` instead, which writes its audit line
    (``show_rejected`` shows it first, ``with_hint`` adds the hint to the refusal).
    """
    from conch.policy import Decision

    if verdict.decision is not Decision.REJECT:
        return
    if show is not None:
        show_rejected(state, verdict, show)
    reason = verdict.reasons[0] if verdict.reasons else "rejected by the safety policy"
    if printing:
        hint = (
            " (conch --unsafe would allow it after asking)" if _unsafe_would(state, verdict) else ""
        )
        raise PolicyRejection(f"the safety policy rejects this command: {reason}{hint}")
    raise with_hint(state, verdict, PolicyRejection(f"not running it: {reason}"))


def show_rejected(state: Run, verdict: Verdict, command: str) -> None:
    """Show a command the policy rejects, with its risk and the reasons."""
    ui.show_command(state.env, command, verdict.risk.value, verdict.reasons)


def with_hint(state: Run, verdict: Verdict | None, refusal: PolicyRejection) -> PolicyRejection:
    """``refusal``, saying that unsafe mode would allow the command where it would."""
    if verdict is None or not _unsafe_would(state, verdict):
        return refusal
    return PolicyRejection(f"{refusal} (conch --unsafe allows it, after asking you)")


def _unsafe_would(state: Run, verdict: Verdict) -> bool:
    return verdict.needs_unsafe and not state.args.unsafe


class Asker:
    """The one-shot CLI's side of the confirmation: show the command, ask on the terminal."""

    def __init__(
        self,
        state: Run,
        loaded: LoadedSettings,
        prompt: PromptConfig,
        prompt_source: str | None,
        explanation: str | None,
        provider: Provider,
    ) -> None:
        self.state, self.loaded, self.prompt = state, loaded, prompt
        self.prompt_source, self.explanation, self.provider = prompt_source, explanation, provider
        self.shown = False
        # The command the question was last about (None: no question was asked).
        self.displayed: str | None = None
        # The policy's verdict on the user's edit of the command (set by the caller).
        self.reassess: Callable[[str], Verdict] = _assess
        # What the dry run of a command saw, in words (set by the caller).
        self.seen: Callable[[str], str] | None = None

    def __call__(self, command: str, verdict: Verdict, wanted: Confirmation) -> Answer:
        """Run this command, run the user's edit of it, or run nothing."""
        from conch.command.generate import explain
        from conch.execute.checked import Answer
        from conch.policy import Decision

        state, env = self.state, self.state.env
        state.command, state.verdict = command, verdict
        self._show(command, verdict, wanted)
        if state.args.yes:
            # A yes given in advance: nobody looked at this command, so it runs contained
            # (in safe mode; --unsafe hands it to your shell).
            state.notes.append("confirmed by --yes")
            return Answer.unattended()
        if env.open_terminal() is None:
            env.stdout.write(command + "\n")
            raise NoOneToAsk(
                "this command needs confirmation and there is no terminal to ask; nothing ran "
                "(re-run in a terminal, or add --yes to accept it)"
            )
        while True:
            answer = ui.ask(env, "[E]xecute, [D]escribe, [M]odify, [A]bort? [a] ", "edma", "a")
            if answer == "e":
                return Answer.run()
            if answer == "a":
                state.notes.append("aborted by the user")
                return Answer.abort()
            if answer == "d":
                seen = self.seen(command) if self.seen is not None else None
                text = explain(self.provider, command, state.request, seen=seen)
                env.stderr.write(text.rstrip() + "\n")
                continue
            edited = ui.edit_command(env, command)
            if not edited or edited == command:
                continue
            state.notes.append("modified by the user")
            state.command = edited
            edit_verdict = self.reassess(edited)
            if edit_verdict.decision is Decision.REJECT:  # run_checked refuses it, audited
                show_rejected(state, edit_verdict, edited)
            return Answer.edit(edited)

    def _show(self, command: str, verdict: Verdict, wanted: Confirmation) -> None:
        env = self.state.env
        self.displayed = command
        if self.shown:  # an edit: the command and what the policy says of it
            lines = [f"dry run: {self.seen(command)}"] if self.seen is not None else []
            ui.show_command(env, command, verdict.risk.value, verdict.reasons, lines)
            return
        self.shown = True
        loaded = self.loaded
        context_lines = [
            f"config: {loaded.config_path}"
            + ("" if loaded.config_exists else " (not present; defaults)"),
            f"prompt: {self.prompt_source or 'default_prompt'}",
            f"request: {self.state.request}",
        ]
        if self.seen is not None:
            context_lines.append(f"dry run: {self.seen(command)}")
        if wanted.explain:
            context_lines.append(
                "note: a tool in this command requires an explanation (force_explain)"
            )
        ui.show_command(env, command, verdict.risk.value, verdict.reasons, context_lines)
        if self.explanation:
            env.stderr.write(self.explanation.rstrip() + "\n")


def _assess(command: str) -> Verdict:
    from conch.policy import assess

    return assess(command)


_DETAIL_LINES = 40


def _shown_detail(detail: str) -> list[str]:
    """The first lines of a change to show before the question (a file write's diff)."""
    lines = detail.splitlines()
    if len(lines) <= _DETAIL_LINES:
        return lines
    return [*lines[:_DETAIL_LINES], f"... {len(lines) - _DETAIL_LINES} more lines"]


def agent_approver(env: Environment, before: Callable[[], None]) -> Approve:
    """The question ``conch chat`` and ``conch run`` ask before a command of the agent's
    runs, when its execution mode wants a yes: the command, its risk and the policy's
    reasons, then ``Run it? [y/N/a]`` (default No; ``a``: yes, and the like of it without
    a question for the rest of the session, when the library offers a pattern). ``before``
    runs first (it stops the spinner). Without a terminal the answer is No."""

    def approve(command: str, verdict: Verdict, wanted: Confirmation) -> Answer:
        from conch.execute.checked import Answer

        before()
        lines = ["the agent wants to run:"]
        if wanted.explain:
            lines.append(f"note: {', '.join(wanted.forced_by) or 'this program'} asks for care")
        ui.show_command(env, command, verdict.risk.value, verdict.reasons, lines)
        for line in _shown_detail(wanted.detail):
            env.stderr.write(f"  {line}\n")
        if wanted.always:
            env.stderr.write(f"  a = yes, and always `{wanted.always}` this session\n")
            answer = ui.ask(env, "Run it? [y/N/a] ", "yna", "n")
        else:
            answer = ui.ask(env, "Run it? [y/N] ", "yn", "n")
        if answer == "a" and wanted.always:
            return Answer.run_always(wanted.always)
        if answer == "y":
            return Answer.run()
        env.stderr.write("  not run; the agent is told you said no\n")
        env.stderr.flush()
        return Answer.abort()

    return approve
