"""``conch REQUEST``: the request served by the library (``conch.command.oneshot``), then
shown, explained, asked about, run and recorded as the flags say."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from conch.cli import ui
from conch.cli.confirm import Asker, fail_if_rejected, show_rejected, with_hint
from conch.cli.environment import Environment
from conch.cli.invocation import Run
from conch.cli.loading import load_for
from conch.cli.status import ExitStatus, status_for
from conch.errors import (
    ConchError,
    NoHistoryError,
    PolicyRejection,
    UsageError,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from conch.command.oneshot import OneShot, OneShotResult
    from conch.command.proposal import PipelineEvent, Proposal
    from conch.config.settings import LoadedSettings, PromptConfig
    from conch.policy import Verdict
    from conch.providers.base import Provider

_OPS = ("init", "create_prompt", "add_prompt", "list_tools")


def run(args: argparse.Namespace, env: Environment) -> int:
    """The one-shot front end; every outcome, error or not, gets one history entry."""
    _check_combinations(args)
    if any(getattr(args, name) not in (None, False) for name in _OPS):
        from conch.cli.opscmd import run_ops

        return run_ops(args, env)
    state = Run(args, env)
    loaded: LoadedSettings | None = None
    code: int = ExitStatus.ERROR
    try:
        loaded = load_for(args, env)
        state.validation_details = loaded.settings.validation.show_validation_details
        code = _analyze(state, loaded) if args.analyze else _oneshot(state, loaded)
        return code
    except KeyboardInterrupt:
        code = ExitStatus.INTERRUPTED
        state.notes.append("interrupted by the user (Ctrl+C)")
        raise
    except ConchError as exc:
        code = status_for(exc)
        state.notes.append(str(exc))
        raise
    finally:
        if loaded is not None and not args.no_history:
            _record(state, loaded, code)


def _check_combinations(args: argparse.Namespace) -> None:
    ops = [f"--{n.replace('_', '-')}" for n in _OPS if getattr(args, n) not in (None, False)]
    if len(ops) > 1:
        raise UsageError(f"{' and '.join(ops)} cannot be combined; use one at a time")
    if ops and args.words and ops[0] != "--list-tools":
        raise UsageError(f"{ops[0]} takes no request")
    if args.analyze:
        others = [
            flag
            for flag, on in (
                ("a request", bool(args.words)),
                ("--scope", args.scope is not None),
                ("--peek", bool(args.peek)),
                ("--unsafe", args.unsafe),
                ("--confirm", args.confirm),
                ("--explain", args.explain),
                ("--yes", args.yes),
                ("--print", args.print_only),
                ("--json", args.json),
                (ops[0] if ops else "", bool(ops)),
            )
            if on
        ]
        if others:
            raise UsageError(f"--analyze cannot be combined with {others[0]}")
        return
    if ops:
        return
    if args.print_only and args.json:
        raise UsageError("--print and --json cannot be combined; pick one output form")
    if (args.print_only or args.json) and (args.yes or args.confirm):
        flag = "--yes" if args.yes else "--confirm"
        raise UsageError(f"{flag} has no effect with --print/--json, which never run anything")
    if not args.words:
        raise UsageError('no request given; try: conch "list the ten largest files here"')
    words: list[str] = args.words
    prompt_file = words[0] if len(words) > 1 and words[0].endswith((".yaml", ".yml")) else None
    if not " ".join(words[1:] if prompt_file else words).strip():
        after = f" after {prompt_file}" if prompt_file else ""
        raise UsageError(
            f"the request{after} is empty; say what you want, e.g. "
            'conch "list the ten largest files here"'
        )


def _provider(state: Run, loaded: LoadedSettings) -> Provider:
    from conch.daemon import open_provider

    ai = loaded.settings.ai
    provider = open_provider(ai, loaded.settings.daemon)
    state.provider_name = ai.provider
    state.model = ai.model_in_use
    return provider


def _renderer(state: Run, progress: ui.Progress) -> Callable[[PipelineEvent], None]:
    """Show the events of a request as they come: steps and the model's progress on the
    spinner line, notes on stderr (and in history)."""
    from conch.command.proposal import Step
    from conch.messages import Finished, Note, Stage, TextDelta

    def render(event: PipelineEvent) -> None:
        if isinstance(event, Note):
            _note(state, progress, event.text)
        elif isinstance(event, Step):
            progress.start(event.label)
        elif isinstance(event, TextDelta | Stage | Finished):
            progress.on_event(event)

    return render


def _note(state: Run, progress: ui.Progress, text: str) -> None:
    """Something the user should know about how the request was served (kept in history)."""
    state.notes.append(text)
    if not state.args.quiet:
        progress.clear()
        state.env.stderr.write(f"conch: note: {text}\n")


def _prompt_and_request(state: Run, loaded: LoadedSettings) -> tuple[PromptConfig, str, str | None]:
    from conch.config.edits import load_prompt_arg

    words: list[str] = state.args.words
    if len(words) > 1 and words[0].endswith((".yaml", ".yml")):
        prompt, source = load_prompt_arg(words[0], state.env.cwd)
        return prompt, " ".join(words[1:]), source
    return loaded.settings.default_prompt, " ".join(words), None


def _oneshot(state: Run, loaded: LoadedSettings) -> int:
    from conch.cli.answer import show_answer, want_of
    from conch.command.oneshot import OneShot, OneShotRequest
    from conch.config.paths import Paths

    args, env = state.args, state.env
    settings = loaded.settings
    prompt, text, prompt_source = _prompt_and_request(state, loaded)
    state.request = text
    piped = None if env.stdin_isatty else env.stdin.read(settings.context.stdin_max_bytes + 1)
    request = OneShotRequest(
        text,
        env.cwd,
        env.environ,
        prompt,
        unsafe=args.unsafe,
        scope=args.scope,
        peek=tuple(args.peek or ()),
        piped=piped,
        want=want_of(args),
        dry_run=not args.no_dry_run,
    )
    n_ctx = settings.ai.local.n_ctx if settings.ai.provider == "local" else None
    progress = ui.Progress(env, enabled=not args.quiet, n_ctx=n_ctx)
    service = OneShot(
        settings, lambda: _provider(state, loaded), cache_dir=Paths.default().cache_dir
    )
    try:
        try:
            result = service.run(request, _renderer(state, progress))
        finally:
            progress.clear()
        if result.proposal is None:
            return show_answer(state, result)
        return _offered(state, loaded, service, result, progress, prompt_source)
    finally:
        service.close()


def _offered(
    state: Run,
    loaded: LoadedSettings,
    service: OneShot,
    result: OneShotResult,
    progress: ui.Progress,
    prompt_source: str | None,
) -> int:
    """The proposed command: printed, explained, asked about and run as the flags say."""
    from conch.policy import Decision

    args, env = state.args, state.env
    proposal = result.proposal
    assert proposal is not None
    state.validation = proposal.validation_json()
    state.candidates = proposal.trials_json()
    state.notes.extend(proposal.notes)
    command = _offer_correction(state, proposal)
    verdict = state.verdict
    assert verdict is not None
    if args.print_only:
        env.stdout.write(command + "\n")
        fail_if_rejected(state, verdict, printing=True)
        return ExitStatus.OK
    forced = result.explanation_forced(verdict)
    explanation = None
    if (args.explain or forced) and verdict.decision is not Decision.REJECT:
        progress.start("explaining")
        try:
            explanation = service.explain(result, command, _renderer(state, progress))
        finally:
            progress.clear()
    if args.json:
        out = result.to_json(command)
        if explanation is not None:
            out["explanation"] = explanation
        env.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        fail_if_rejected(state, verdict, printing=True)
        return ExitStatus.OK
    if verdict.decision is Decision.REJECT:  # run_checked refuses it, with its audit line
        show_rejected(state, verdict, command)
    if forced:
        state.notes.append("force_explain: a tool of this command requires an explanation")
    prompt = result.request.prompt or loaded.settings.default_prompt
    asker = Asker(state, loaded, prompt, prompt_source, explanation, service.provider)
    asker.seen = proposal.dry_run_seen
    asker.reassess = lambda edited: _assess(state, service, result, edited)
    return _execute(state, loaded, service, result, command, verdict, asker)


def _assess(state: Run, service: OneShot, result: OneShotResult, command: str) -> Verdict:
    verdict = service.assess(result.request, command)
    state.verdict = verdict
    return verdict


def _offer_correction(state: Run, proposal: Proposal) -> str:
    """Show what validation found; switch to its correction if the user (or --yes) agrees."""
    args, env = state.args, state.env
    state.command, state.verdict = proposal.command, proposal.verdict
    result = proposal.validation
    details = state.validation_details
    if result is not None and result.issues and details and not args.quiet:
        for issue in result.issues:
            env.stderr.write(f"conch: validation: {issue}\n")
    fix, fix_verdict = proposal.correction, proposal.correction_verdict
    if fix is None or fix_verdict is None:
        if proposal.corrected and not args.quiet:
            env.stderr.write(f"conch: corrected to: {proposal.command} (validation.auto_fix)\n")
        return proposal.command
    if args.print_only or args.json:
        if not args.quiet:
            env.stderr.write(f"conch: validation suggests: {fix} (not applied; see --json)\n")
        return proposal.command
    env.stderr.write(f"conch: suggested fix:\n  - {proposal.command}\n  + {fix}\n")
    if args.yes:
        accept = True
    elif env.open_terminal() is None:
        accept = False
    else:
        accept = ui.ask(env, "Use the suggested fix? [Y/n] ", "yn", "y") == "y"
    if accept:
        state.notes.append(f"validation fix accepted: '{proposal.command}' -> '{fix}'")
        if state.validation is not None:
            state.validation["applied_correction"] = True
        state.command, state.verdict = fix, fix_verdict
        return fix
    state.notes.append("validation fix declined")
    return proposal.command


def _execute(
    state: Run,
    loaded: LoadedSettings,
    service: OneShot,
    result: OneShotResult,
    command: str,
    verdict: Verdict,
    asker: Asker,
) -> int:
    """Run the command through the library (which asks through ``asker`` when the rule says)."""
    from conch.execute.checked import run_checked
    from conch.policy.confirm import ConfirmOptions
    from conch.policy.rules import permissions_from

    args, env = state.args, state.env
    execution = loaded.settings.execution
    timeout = execution.timeout_seconds

    def started(command: str, verdict: Verdict) -> None:
        state.executed = True
        state.command, state.verdict = command, verdict
        if asker.displayed != command:  # no question: still shown before it runs (even -q)
            ui.show_command(env, command, verdict.risk.value, verdict.reasons)

    try:
        ran = run_checked(
            command,
            service.policy(result.request),
            cwd=env.cwd,
            state_dir=_state_dir(),
            approve=asker,
            options=ConfirmOptions(
                args.confirm,
                args.explain,
                tuple(asker.prompt.tools),
                permissions=permissions_from(loaded.settings.permissions),
            ),
            shell=execution.shell or result.platform.shell,
            timeout=timeout,
            verdict=verdict,
            on_start=started,
            base_env=env.environ,
            pass_env=tuple(execution.pass_env),
            scrub_env=execution.scrub_env,
        )
    except PolicyRejection as exc:  # the command refused (or the user's edit of it)
        raise with_hint(state, state.verdict, exc) from None
    finally:
        if state.executed and not args.no_history:
            _to_shell_history(state)
    outcome = ran.result
    if outcome.error:
        env.stderr.write(f"conch: {outcome.error}\n")
        state.notes.append(outcome.error)
    if outcome.timed_out:
        state.notes.append(f"killed after the {timeout:g} s timeout (execution.timeout_seconds)")
        env.stderr.write(f"conch: the command was stopped after {timeout:g} s\n")
    return outcome.exit_code


def _to_shell_history(state: Run) -> None:
    """The command that ran, for the user's own shell history when the shell integration's
    ``conch`` function asks for it (``CONCH_SHELL_HISTORY``)."""
    from conch.integration.history import append_ran

    if state.command is None:
        return
    try:
        append_ran(state.env.environ, state.command)
    except ConchError as exc:
        state.notes.append(str(exc))
        state.env.stderr.write(f"conch: warning: {exc}\n")


def _analyze(state: Run, loaded: LoadedSettings) -> int:
    from conch.cli.status import meaning
    from conch.diagnose.analysis import analyze, last_analysable
    from conch.storage.history import History

    env = state.env
    history = History(_state_dir(), loaded.settings.history.max_bytes)
    entry = last_analysable(history)
    if entry is None:
        raise NoHistoryError(
            f"no history yet at {history.path}: run a request first, then --analyze explains it"
        )
    progress = ui.Progress(env, enabled=not state.args.quiet)
    provider = _provider(state, loaded)
    try:
        progress.start("analyzing")
        try:
            outcome = meaning(entry.exit_code)
            text = analyze(provider, entry, _renderer(state, progress), outcome)
        finally:
            progress.clear()
    finally:
        provider.close()
    env.stdout.write(text.rstrip() + "\n")
    return ExitStatus.OK


def _state_dir() -> Path:
    from conch.config.paths import Paths

    return Paths.default().state_dir


def _record(state: Run, loaded: LoadedSettings, code: int) -> None:
    from conch.policy import Decision
    from conch.storage.history import History, HistoryEntry

    if not loaded.settings.history.enabled:
        return
    args = state.args
    verdict = state.verdict
    notes = list(state.notes)
    if verdict is not None and verdict.reasons and verdict.decision is not Decision.ALLOW:
        notes.extend(verdict.reasons)
    entry = HistoryEntry.record(
        cwd=state.env.cwd,
        argv=["conch", *args.argv],
        exit_code=code,
        started=state.started,
        notes=notes,
        generated_command=state.command,
        unsafe_mode=args.unsafe,
        confirm=args.confirm,
        explain=args.explain,
        scope=args.scope,
        peek_files=list(args.peek or []),
        request=state.request,
        provider=state.provider_name,
        model=state.model,
        risk=verdict.risk.value if verdict else None,
        decision=verdict.decision.value if verdict else None,
        executed=state.executed,
        validation=state.validation,
        candidates=state.candidates or None,
    )
    try:
        History(_state_dir(), loaded.settings.history.max_bytes).append(entry)
    except ConchError as exc:
        state.env.stderr.write(f"conch: warning: {exc}\n")
