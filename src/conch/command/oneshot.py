"""The one-shot request as one library call: a request in plain language in, a checked
command (or, for a question, an answer) out.

``OneShot`` serves requests on one model: ``events`` streams what happens (the pipeline's
steps, the model's text, notes) and returns a ``OneShotResult``; ``run`` waits for it. The
path is the same for every caller, so what is measured is what users get:

1. gather what goes with the request (``--scope``, ``--peek``, piped input; ``gather``);
2. decide whether it is a question or a request for a command (``conch.command.intent``,
   unless the caller says which);
3. detect the platform (once per ``OneShot``);
4. for a command: the pipeline (``conch.command.propose.Pipeline``: examples, answers
   reviewed, dry runs among the real files, validation, the policy's verdict); for a
   question: a short answer with at most one suggested command, judged by the policy.

What happens next is the caller's: the CLI offers validation's correction, explains
(``explain``), asks and runs (``conch.execute.checked.run_checked``) and records
(``conch.storage.history.HistoryEntry.record``); ``propose_command`` reports the verdict; the
accuracy benchmark judges the command. Nothing here prints, reads stdin or runs the command.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conch.command.request import RequestContext, gather
from conch.messages import Note
from conch.providers.base import drain

if TYPE_CHECKING:
    from conch.command.answer import Answer
    from conch.command.generate import Find
    from conch.command.proposal import PipelineEvent, Proposal
    from conch.command.propose import Pipeline
    from conch.config.settings import PromptConfig, Settings
    from conch.execute.dryrun import DryRunner
    from conch.host.platform import PlatformContext
    from conch.policy import PolicyContext, Verdict
    from conch.providers.base import Provider

__all__ = ["OneShot", "OneShotRequest", "OneShotResult", "Want", "policy_context"]


class Want(StrEnum):
    """What the caller wants back: whatever the request asks for, a command, or an answer."""

    AUTO = "auto"
    COMMAND = "command"
    ANSWER = "answer"


@dataclass(frozen=True, slots=True)
class OneShotRequest:
    """One request and what goes with it.

    ``prompt`` is the prompt config (the settings' default when None); ``piped`` text piped
    to the caller (at most ``context.stdin_max_bytes + 1`` characters of it); ``unsafe``
    judges the command as unsafe mode does; ``dry_run`` False skips dry runs whatever the
    settings say (``--no-dry-run``); ``policy`` replaces the policy context made from the
    prompt and settings (``propose_command`` judges for its own mode and sandbox root)."""

    text: str
    cwd: Path
    environ: Mapping[str, str]
    prompt: PromptConfig | None = None
    unsafe: bool = False
    scope: str | None = None
    peek: tuple[str, ...] = ()
    piped: str | None = None
    want: Want = Want.AUTO
    dry_run: bool = True
    policy: PolicyContext | None = None


@dataclass(slots=True)
class OneShotResult:
    """What a request gave: the ``proposal`` (a command) or the ``answer`` (a question),
    the context it was made in, the policy context it was judged in, and notes on how it
    was served."""

    request: OneShotRequest
    context: RequestContext
    policy: PolicyContext
    platform: PlatformContext
    proposal: Proposal | None = None
    answer: Answer | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def command(self) -> str | None:
        """The command: proposed, or suggested by the answer."""
        if self.proposal is not None:
            return self.proposal.command
        return self.answer.command if self.answer is not None else None

    @property
    def verdict(self) -> Verdict | None:
        if self.proposal is not None:
            return self.proposal.verdict
        return self.answer.verdict if self.answer is not None else None

    def explanation_forced(self, verdict: Verdict | None = None) -> bool:
        """Whether a program of the command is allowed only with an explanation."""
        from conch.policy.confirm import forced_explain

        prompt = self.request.prompt
        judged = verdict or self.verdict
        return bool(prompt and judged and forced_explain(judged, prompt.tools))

    def to_json(self, command: str | None = None) -> dict[str, Any]:
        """The result as ``--json`` prints it (``command``: the one chosen, when a correction
        was taken)."""
        if self.answer is not None:
            out: dict[str, Any] = {"answer": self.answer.text}
            if self.answer.command is not None and self.answer.verdict is not None:
                out["command"] = self.answer.command
                out["verdict"] = self.answer.verdict.to_json()
            return out
        proposal = self.proposal
        assert proposal is not None
        chosen = command or proposal.command
        verdict = proposal.verdict
        if chosen == proposal.correction and proposal.correction_verdict is not None:
            verdict = proposal.correction_verdict
        return {
            "command": chosen,
            **verdict.to_json(),
            "validation": proposal.validation_json(),
            "candidates": proposal.trials_json(),
            "dry_run": proposal.dry_run_seen(chosen),
        }


def policy_context(
    prompt: PromptConfig,
    cwd: Path,
    environ: Mapping[str, str],
    *,
    unsafe: bool = False,
    pass_env: tuple[str, ...] = (),
) -> PolicyContext:
    """The policy context a request made with ``prompt`` in ``cwd`` is judged in: safe mode
    expands ``$NAME`` from what a contained command may see (no secrets)."""
    from conch.execute.environ import contained_environment
    from conch.policy.confirm import context_for

    context = context_for(prompt, unsafe=unsafe, cwd=cwd)
    if unsafe:
        return context
    return replace(context, environ=contained_environment(environ, pass_env))


class OneShot:
    """Serves one-shot requests with ``settings`` on the model ``open_provider`` opens (at
    the first request that needs it; ``close`` releases it). ``platform`` is detected at the
    first request when not given; ``dry_runner`` and ``find`` replace the pipeline's own (the
    accuracy benchmark dry-runs in a task's copy and looks examples up its own way)."""

    def __init__(
        self,
        settings: Settings,
        open_provider: Callable[[], Provider],
        *,
        cache_dir: Path | None = None,
        platform: PlatformContext | None = None,
        dry_runner: DryRunner | None = None,
        find: Find | None = None,
    ) -> None:
        self.settings = settings
        self.cache_dir = cache_dir
        self.platform = platform
        self.dry_runner = dry_runner
        self.find = find
        self._open = open_provider
        self._provider: Provider | None = None
        self.pipeline: Pipeline | None = None  # the last request's, for its notes

    @property
    def provider(self) -> Provider:
        """The model, opened at the first use."""
        if self._provider is None:
            self._provider = self._open()
        return self._provider

    def close(self) -> None:
        """Release the model, if it was opened."""
        if self._provider is not None:
            self._provider.close()
            self._provider = None

    def policy(self, request: OneShotRequest) -> PolicyContext:
        """The policy context ``request`` is judged in."""
        if request.policy is not None:
            return request.policy
        prompt = request.prompt or self.settings.default_prompt
        pass_env = tuple(self.settings.execution.pass_env)
        return policy_context(
            prompt, request.cwd, request.environ, unsafe=request.unsafe, pass_env=pass_env
        )

    def assess(self, request: OneShotRequest, command: str) -> Verdict:
        """The policy's verdict on ``command`` (an edit of the proposed one) for ``request``."""
        from conch.policy import assess

        return assess(command, self.policy(request))

    def events(self, request: OneShotRequest) -> Generator[PipelineEvent, None, OneShotResult]:
        """Serve ``request``, streaming what happens; the return value is the result."""
        from conch.command.intent import Intent, classify

        ctx = gather(
            request.text,
            request.cwd,
            self.settings.context,
            request.scope,
            request.peek,
            request.piped,
        )
        platform = self._platform(request.environ)
        result = OneShotResult(request, ctx, self.policy(request), platform)
        shown = ctx.scope_listing is not None or bool(ctx.peek_samples)
        want = request.want
        if want is Want.AUTO:
            question = classify(request.text, ctx.stdin_text is not None, shown)
            want = Want.ANSWER if question is Intent.QUESTION else Want.COMMAND
        if want is Want.ANSWER:
            from conch.command.answer import answer_events
            from conch.command.proposal import Step

            yield Step("answering")
            describe = platform.describe()
            result.answer = yield from answer_events(self.provider, ctx, describe, result.policy)
            return result
        pipeline = self._pipeline(request, result.policy, platform)
        for text in pipeline.notes:
            result.notes.append(text)
            yield Note(text)
        result.proposal = yield from pipeline.events(ctx)
        result.notes.extend(result.proposal.notes)
        return result

    def run(
        self, request: OneShotRequest, on_event: Callable[[PipelineEvent], None] | None = None
    ) -> OneShotResult:
        """``events`` drained: the result, with ``on_event`` seeing every event."""
        return drain(self.events(request), on_event)

    def explain(
        self,
        result: OneShotResult,
        command: str,
        on_event: Callable[[PipelineEvent], None] | None = None,
    ) -> str:
        """A plain-language explanation of ``command`` (the proposed one or its correction),
        told what its dry run saw."""
        from conch.command.generate import explain

        seen = result.proposal.dry_run_seen(command) if result.proposal is not None else None
        return explain(self.provider, command, result.request.text, on_event, seen)

    def _platform(self, environ: Mapping[str, str]) -> PlatformContext:
        if self.platform is None:
            from conch.host.platform import detect_platform

            self.platform = detect_platform(self.cache_dir, environ)
        return self.platform

    def _pipeline(
        self, request: OneShotRequest, policy: PolicyContext, platform: PlatformContext
    ) -> Pipeline:
        from conch.command.propose import Pipeline

        prompt = request.prompt
        if self.dry_runner is not None or not request.dry_run:
            pipeline = Pipeline(
                self.provider, self.settings, platform, policy, prompt, self.cache_dir,
                cwd=request.cwd, find=self.find,
            )  # fmt: skip
            pipeline.dry_runner = self.dry_runner if request.dry_run else None
            if pipeline.dry_runner is None:
                pipeline.untried = "dry runs are turned off"
        else:
            pipeline = Pipeline.build(
                self.provider, self.settings, platform, policy, request.cwd, request.environ,
                prompt, self.cache_dir,
            )  # fmt: skip
            pipeline.find = self.find
        self.pipeline = pipeline
        return pipeline
