"""``conch QUESTION``: a short answer in prose, with at most one suggested command, never run.

A request asked ABOUT something ("what does this error mean", "why does this fail") takes this
path instead of the command pipeline: ``conch.command.intent.classify`` decides, ``--answer``
and ``--command`` decide instead, and a flag that is about running a command (``--print``,
``--yes``, ``--confirm``, ``--explain``) means a command is wanted.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from conch.cli import ui
from conch.cli.invocation import Run
from conch.cli.status import ExitStatus
from conch.errors import UsageError

if TYPE_CHECKING:
    from conch.command.request import RequestContext
    from conch.config.settings import LoadedSettings
    from conch.messages import ProviderEvent
    from conch.policy import PolicyContext
    from conch.providers.base import Provider

ANSWERED = "answered as a question"


def wants_answer(args: argparse.Namespace, request: str, piped: bool, shown: bool = False) -> bool:
    """Whether the request gets an answer rather than a command.

    ``--answer`` says yes (a usage error with a flag about running a command); ``--command``
    and the flags about a command say no; otherwise the classifier decides, with ``piped``
    saying whether input was piped to conch and ``shown`` whether files were listed or
    sampled for the model (``--scope``, ``--peek``).
    """
    command_flags = (
        ("--print", args.print_only),
        ("--yes", args.yes),
        ("--confirm", args.confirm),
        ("--explain", args.explain),
    )
    if args.force_answer:
        flag = next((flag for flag, on in command_flags if on), None)
        if flag is not None:
            raise UsageError(
                f"--answer cannot be combined with {flag}: an answer runs and prints no "
                "command of its own; drop one of them"
            )
        return True
    if args.force_task or any(on for _, on in command_flags):
        return False
    from conch.command.intent import Intent, classify

    return classify(request, piped, shown) is Intent.QUESTION


def run_answer(
    state: Run,
    loaded: LoadedSettings,
    ctx: RequestContext,
    policy: PolicyContext,
    open_provider: Callable[[], Provider],
    renderer: Callable[[ui.Progress], Callable[[ProviderEvent], None]],
) -> int:
    """Answer the question, print the answer (and the suggested command the policy allows),
    and return the exit status: 0, since nothing runs."""
    from conch.command.answer import answer
    from conch.config.paths import Paths
    from conch.host.platform import detect_platform
    from conch.policy import Decision

    args, env = state.args, state.env
    settings = loaded.settings
    state.notes.append(ANSWERED)
    platform = detect_platform(Paths.default().cache_dir, env.environ)
    n_ctx = settings.ai.local.n_ctx if settings.ai.provider == "local" else None
    progress = ui.Progress(env, enabled=not args.quiet, n_ctx=n_ctx)
    provider = open_provider()
    try:
        progress.start("answering")
        try:
            result = answer(provider, ctx, platform.describe(), policy, renderer(progress))
        finally:
            progress.clear()
    finally:
        provider.close()
    state.command, state.verdict = result.command, result.verdict
    if args.json:
        out: dict[str, object] = {"answer": result.text}
        if result.command is not None and result.verdict is not None:
            out["command"] = result.command
            out["verdict"] = result.verdict.to_json()
        env.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        return ExitStatus.OK
    if result.text:
        env.stdout.write(result.text.rstrip() + "\n")
    verdict = result.verdict
    if result.command is None or verdict is None:
        return ExitStatus.OK
    if verdict.decision is Decision.REJECT:
        reason = verdict.reasons[0] if verdict.reasons else "rejected by the safety policy"
        if not args.quiet:
            env.stderr.write(
                f"conch: note: the suggested command is left out; the safety policy rejects "
                f"it: {reason}\n"
            )
        return ExitStatus.OK
    env.stdout.write(("\n" if result.text else "") + f"  {result.command}\n")
    if not args.quiet:
        env.stderr.write(f"  risk: {verdict.risk.value} (suggested; conch did not run it)\n")
    return ExitStatus.OK
