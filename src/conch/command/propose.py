"""The whole path from a request to a checked command: generate, validate, correct, assess.

Every surface that turns a request into a command (the one-shot CLI, the accuracy benchmark)
goes through ``Pipeline``, so what is measured is what users get. ``Pipeline.events`` streams
what happens (``conch.command.proposal``); ``Pipeline.propose`` waits for the answer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from conch.command.candidates import RANK, Trial, choose, is_doubtful
from conch.command.examples import RETRIEVALS, retrieval, shared_examples
from conch.command.generate import (
    Ask,
    Attempt,
    Find,
    Generated,
    documentation_for,
    generate_events,
    mode_rules,
)
from conch.command.judge import format_literal, mismatch, written_mismatch
from conch.command.proposal import PipelineEvent, Proposal, Proposed, Step, Tried, Validated
from conch.command.request import RequestContext
from conch.command.shorten import shortened
from conch.config.settings import PromptConfig, Settings
from conch.errors import ConchError, ModelOutputError
from conch.execute.dryrun import DryRun, DryRunner
from conch.host.platform import PlatformContext
from conch.messages import Message
from conch.policy import Decision, PolicyContext, assess
from conch.providers.base import Provider, drain
from conch.validate import recheck, validate_events

__all__ = ["Pipeline", "Proposal", "review_messages"]

# A sampled candidate that runs longer than this is rambling, not a better command.
SAMPLE_MAX_TOKENS = 160

# ``generation.review``: the question a command answers, to which the request is the reply.
REVIEW_SYSTEM = "You are an expert at the Unix shell."
REVIEW_USER = (
    "Here is a shell command:\n{command}\n"
    "What request, in plain English, would this command answer? Reply with the request only."
)


@dataclass(slots=True)
class Pipeline:
    """Everything the request -> command pipeline needs besides the request.

    ``prompt`` is the prompt config (``settings.default_prompt`` when None); ``policy`` the
    policy context every candidate is assessed in; ``dry_runner`` dry-runs candidates when
    ``generation.dry_run`` is on; ``find`` looks worked examples up instead of
    ``conch.command.examples.nearest``.
    """

    provider: Provider
    settings: Settings
    platform: PlatformContext
    policy: PolicyContext
    prompt: PromptConfig | None = None
    cache_dir: Path | None = None
    dry_runner: DryRunner | None = None
    find: Find | None = None
    notes: list[str] = field(default_factory=list)
    untried: str | None = None  # why candidates are not dry-run, when they are not
    cwd: Path | None = None  # where dry runs run: their output is judged against its files

    @classmethod
    def build(
        cls,
        provider: Provider,
        settings: Settings,
        platform: PlatformContext,
        policy: PolicyContext,
        cwd: Path,
        environ: Mapping[str, str],
        prompt: PromptConfig | None = None,
        cache_dir: Path | None = None,
        dry_run: bool = True,
    ) -> Pipeline:
        """A pipeline as the settings describe it, dry-running in a sandbox of ``cwd`` when
        ``generation.dry_run`` (and ``dry_run``) ask for it and bubblewrap can; when it
        cannot, ``notes`` says so."""
        pipeline = cls(provider, settings, platform, policy, prompt, cache_dir, cwd=cwd)
        gen = settings.generation
        if gen.dry_run and dry_run:
            from conch.execute.dryrun import SandboxDryRunner

            runner = SandboxDryRunner(
                cwd,
                platform.shell,
                dict(environ),
                gen.dry_run_timeout_s,
                scratch=gen.dry_run_scratch,
            )
            if runner.available:
                pipeline.dry_runner = runner
            else:
                pipeline.notes.append(f"dry runs skipped: {runner.unavailable_reason}")
                pipeline.untried = "the sandbox cannot run on this machine"
        else:
            pipeline.untried = "dry runs are turned off"
        return pipeline

    def events(self, ctx: RequestContext) -> Generator[PipelineEvent, None, Proposal]:
        """Generate a command for ``ctx.request`` and check it every way conch knows,
        streaming what happens; the last event is ``Proposed``.

        With a ``dry_runner`` (and ``generation.dry_run``), the greedy answer is dry-run;
        when that gives reason for doubt (or ``generation.sample_when: always``), more
        candidates are sampled and dry-run, and ``conch.command.candidates.choose`` picks one
        by outcome and vote. If the chosen one still fails, the model is shown the error once
        and asked for a repair. With ``generation.review`` above 1, that whole answer is made
        again with worked examples found other ways, and the best dry run, then the model's
        likelihood of the request, picks one (``_Request.review``).
        """
        proposal = yield from _Request(self, ctx).run()
        yield Proposed(proposal)
        return proposal

    def propose(
        self, ctx: RequestContext, on_event: Callable[[PipelineEvent], None] | None = None
    ) -> Proposal:
        """``events`` drained: the proposal, with ``on_event`` seeing every event."""
        return drain(self.events(ctx), on_event)


@dataclass(slots=True)
class _Answer:
    """One run of the pipeline: the chosen trial, the reply it came from, every trial, notes."""

    chosen: Trial
    generated: Generated
    trials: list[Trial]
    notes: list[str]


class _Request:
    """One request going through a pipeline."""

    def __init__(self, pipeline: Pipeline, ctx: RequestContext) -> None:
        self.pipeline = pipeline
        self.settings = settings = pipeline.settings
        self.gen = gen = settings.generation
        self.runner = pipeline.dry_runner if gen.dry_run else None
        prompt = pipeline.prompt or settings.default_prompt
        cache_dir = pipeline.cache_dir
        documentation = documentation_for(
            prompt,
            ctx.request,
            gen.documentation,
            gen.few_shot,
            settings.validation,
            cache_dir,
            pipeline.find,
        )
        hints = ""
        if gen.program_hints:
            from conch.command.whatis import program_hints

            hints = program_hints(ctx.request, gen.program_hints, cache_dir=cache_dir)
        self.ask = Ask(
            prompt,
            pipeline.platform.describe(),
            ctx,
            few_shot=gen.few_shot,
            documentation=documentation,
            hints=hints,
            end_bias=gen.brevity,
            find=pipeline.find,
            rules=mode_rules(pipeline.policy),
            # A whitelist narrows the examples to its programs: the shared ones are not.
            shared=() if prompt.tools else shared_examples(gen.shared_examples),
        )

    def run(self) -> Generator[PipelineEvent, None, Proposal]:
        """The answer (reviewed when ``generation.review`` asks), then validation."""
        pipeline, settings = self.pipeline, self.settings
        yield Step("generating")
        first = yield from self.answer(self.ask, [])
        answers, best_index = [first], 0
        if self.gen.review > 1:
            answers, best_index = yield from self.review(first)
        best = answers[best_index]
        chosen = best.chosen
        command = chosen.command
        notes = [note for a in answers for note in a.notes]
        trials = [trial for a in answers for trial in a.trials]
        proposal = Proposal(command, chosen.verdict, best.generated, notes=notes, trials=trials)
        proposal.untried = pipeline.untried if self.runner is None else None
        if not settings.validation.enabled or proposal.verdict.decision is Decision.REJECT:
            return proposal
        yield Step("validating")
        result = yield from validate_events(
            command,
            pipeline.provider,
            pipeline.platform,
            settings.validation,
            pipeline.cache_dir,
            self.ask.ctx.request,
        )
        yield Validated(result)
        proposal.validation = result
        fix = result.corrected_command
        if result.valid or not fix or fix == command:
            return proposal
        fix_verdict, fix_issues = recheck(
            fix, pipeline.policy, settings.validation, pipeline.cache_dir
        )
        if fix_verdict.decision is Decision.REJECT:
            proposal.notes.append(f"validation suggested '{fix}', which the policy rejects")
        elif fix_issues:
            proposal.notes.append(f"validation suggested '{fix}', which fails its own checks")
        elif settings.validation.auto_fix:
            proposal.command, proposal.verdict, proposal.corrected = fix, fix_verdict, True
            proposal.notes.append(f"validation replaced '{command}' with '{fix}' (auto_fix)")
        else:
            proposal.correction, proposal.correction_verdict = fix, fix_verdict
        return proposal

    def answer(self, ask: Ask, earlier: list[Trial]) -> Generator[PipelineEvent, None, _Answer]:
        """One answer the way conch makes it: the greedy command, alternatives when in doubt,
        a repair when the chosen one fails; a command tried in an ``earlier`` answer is not
        dry-run again."""
        gen, temperature = self.gen, self.settings.ai.temperature
        provider = self.pipeline.provider
        generated = yield from generate_events(provider, ask, Attempt(temperature))
        trials = [(yield from self.trial(generated.command, "greedy", earlier))]
        trials[0].forward = generated.logprob
        replies = {generated.command: generated}
        notes: list[str] = []
        # A command that ran but does not fit the request is repaired below, not sampled
        # around: the samples of a small model repeat its first idea.
        doubt = is_doubtful(trials[0]) and trials[0].outcome != "mismatch"
        sampling = gen.sample_when == "always" or doubt
        if self.runner is not None and gen.candidates > 1 and sampling:
            yield Step("trying alternatives")
            for seed in range(1, gen.candidates):
                # "next": every other sample sees the next-nearest examples instead.
                skip = gen.few_shot if gen.sample_examples == "next" and seed % 2 else 0
                attempt = Attempt(
                    gen.sample_temperature,
                    seed=seed,
                    max_tokens=SAMPLE_MAX_TOKENS,
                    examples_skip=skip,
                )
                try:
                    sample = yield from generate_events(provider, ask, attempt)
                except ModelOutputError:
                    continue
                except ConchError as exc:  # the first answer stands; say why there is no other
                    notes.append(f"no further candidates: {exc}")
                    break
                replies.setdefault(sample.command, sample)
                trials.append((yield from self.trial(sample.command, "sample", earlier + trials)))
        chosen = trials[choose(trials)]
        repair = None
        if chosen.dry_run is not None and chosen.dry_run.failed:
            repair = Attempt(temperature, failed=(chosen.command, chosen.dry_run.error_excerpt()))
        elif chosen.outcome == "mismatch":
            repair = Attempt(temperature, misfit=(chosen.command, chosen.mismatch or ""))
        if self.runner is not None and gen.repair and repair is not None:
            yield Step("repairing")
            chosen = yield from self.retry(ask, repair, "repair", replies, trials, earlier, notes)
        wrote = chosen.dry_run is not None and chosen.dry_run.scratch
        if self.runner is not None and gen.repair and chosen.outcome == "mismatch" and not wrote:
            chosen = yield from self.shorten(chosen, replies, trials, earlier)
        if chosen.verdict.decision is Decision.REJECT and chosen.verdict.needs_unsafe:
            # Told what this mode runs, the model still wrote something that needs a shell:
            # one more try with the reason, before the user sees a refusal.
            yield Step("asking for a command this mode runs")
            reason = chosen.verdict.reasons[0] if chosen.verdict.reasons else "it needs a shell"
            attempt = Attempt(temperature, refused=(chosen.command, reason))
            chosen = yield from self.retry(
                ask, attempt, "reshaped", replies, trials, earlier, notes
            )
        return _Answer(chosen, replies[chosen.command], trials, notes)

    def retry(
        self,
        ask: Ask,
        attempt: Attempt,
        source: str,
        replies: dict[str, Generated],
        trials: list[Trial],
        earlier: list[Trial],
        notes: list[str],
    ) -> Generator[PipelineEvent, None, Trial]:
        """One more command after showing the model what was wrong with the chosen one
        (``attempt``); a new command joins ``trials`` and the choice is made again."""
        try:
            made = yield from generate_events(self.pipeline.provider, ask, attempt)
        except ModelOutputError:
            made = None
        except ConchError as exc:
            notes.append(f"no {source} command: {exc}")
            made = None
        if made is not None and made.command not in replies:
            replies[made.command] = made
            trials.append((yield from self.trial(made.command, source, earlier + trials)))
        return trials[choose(trials)]

    def shorten(
        self,
        chosen: Trial,
        replies: dict[str, Generated],
        trials: list[Trial],
        earlier: list[Trial],
    ) -> Generator[PipelineEvent, None, Trial]:
        """``chosen``'s pipeline without its last stages (``conch.command.shorten``), longest
        first, until one's output fits the request; the choice is then made again."""
        for command in shortened(chosen.command):
            if command in replies:
                continue
            replies[command] = replace(replies[chosen.command], command=command, logprob=None)
            trial = yield from self.trial(command, "shortened", earlier + trials)
            trials.append(trial)
            if trial.outcome == "ok":
                break
        return trials[choose(trials)]

    def trial(
        self, command: str, source: str, earlier: list[Trial]
    ) -> Generator[PipelineEvent, None, Trial]:
        """A candidate with the policy's verdict and, unless the policy rejects it, its dry
        run (reused from an identical earlier candidate)."""
        made: Trial | None = None
        for previous in earlier:
            if previous.command == command:
                made = Trial(command, previous.verdict, previous.dry_run, source)
                made.mismatch = previous.mismatch
                break
        if made is None:
            verdict = assess(command, self.pipeline.policy)
            run = None
            if self.runner is not None and verdict.decision is not Decision.REJECT:
                run = self.runner(command)
            made = Trial(command, verdict, run, source)
            made.mismatch = self.misfit(command, run)
        yield Tried(made)
        return made

    def misfit(self, command: str, run: DryRun | None) -> str | None:
        """Why what ``command``'s dry run printed, or wrote in its scratch copy, does not fit
        the request (``conch.command.judge``); None when it fits or cannot be judged."""
        request = self.ask.ctx.request
        if run is None or run.failed or run.wrote:
            return None
        if run.scratch:
            if run.exit_code != 0:
                return None
            return written_mismatch(request, command, run.changes, run.written)
        literal = format_literal(command, run.stdout.decode("utf-8", "replace"))
        if literal is not None:
            return f"printed {literal}: print does not format; printf does"
        return mismatch(request, run.stdout, self.pipeline.cwd)

    def review(self, first: _Answer) -> Generator[PipelineEvent, None, tuple[list[_Answer], int]]:
        """``generation.review``: up to that many answers, each made with worked examples
        found a different way (``conch.command.examples.RETRIEVALS``), and the index of the
        best: never one the policy rejects over one it does not, nor one whose dry run went
        worse (``RANK``: failed below printed nothing or complained, below worked) over one
        whose run went better; among the rest, the one whose command makes the user's request
        likeliest as its description (``review_messages``); the first on a tie.

        With ``generation.review_stop: worked`` the first answer stands alone when its dry
        run worked (``ok``), and its score is at least ``review_stop_score`` when one is set;
        or, with ``review_stop_forward`` set, when it is the greedy command and the model's
        own log-probability of it (which comes with the generation) is at least that, so no
        score is asked for.
        A provider that cannot score (OpenAI, Azure) is found out by scoring the first answer,
        before any other is made: only the first is then made. A provider failure (or Ctrl+C)
        ends the review with the answers made so far, and says so in the notes.
        """
        provider, request = self.pipeline.provider, self.ask.ctx.request

        def score(command: str) -> float | None:
            return provider.likelihood(review_messages(command), request)

        answers = [first]
        stop, threshold = self.gen.review_stop, self.gen.review_stop_score
        worked = stop == "worked" and first.chosen.outcome == "ok"
        if worked and threshold is None:
            return answers, 0  # the first answer worked: no doubt to resolve
        sure, forward = self.gen.review_stop_forward, first.chosen.forward
        if worked and sure is not None and forward is not None and forward >= sure:
            return answers, 0  # the greedy command worked and the model was sure of it
        try:
            scores = {first.chosen.command: score(first.chosen.command)}
        except ConchError as exc:
            first.notes.append(f"no review: {exc}")
            return answers, 0
        first_score = scores[first.chosen.command]
        if first_score is None:
            return answers, 0
        if worked and threshold is not None and first_score >= threshold:
            first.chosen.likelihood = first_score
            return answers, 0
        try:
            for name in RETRIEVALS[1 : self.gen.review]:
                yield Step(f"reviewing: examples {name}")
                earlier = [t for a in answers for t in a.trials]
                try:
                    made = yield from self.answer(
                        replace(self.ask, find=retrieval(name).nearest), earlier
                    )
                except ModelOutputError as exc:
                    first.notes.append(f"no answer with examples {name}: {exc}")
                    continue
                except ConchError as exc:  # the provider failed: the answers so far stand
                    first.notes.append(f"no answer with examples {name}: {exc}")
                    break
                for trial in made.trials:
                    trial.examples = name
                answers.append(made)
                if made.chosen.command not in scores:
                    try:
                        scores[made.chosen.command] = score(made.chosen.command)
                    except ConchError as exc:
                        scores[made.chosen.command] = None
                        first.notes.append(f"no score for the answer with examples {name}: {exc}")
                        break
        except KeyboardInterrupt:  # Ctrl+C while reviewing: the answers so far stand
            first.notes.append("review interrupted; the best answer so far is shown")
        for a in answers:
            a.chosen.likelihood = scores.get(a.chosen.command)

        def rank(i: int) -> tuple[bool, int, float, int]:
            chosen = answers[i].chosen
            allowed = chosen.verdict.decision is not Decision.REJECT
            score = chosen.likelihood if chosen.likelihood is not None else -math.inf
            return (allowed, -RANK[chosen.outcome], score, -i)

        return answers, max(range(len(answers)), key=rank)


def review_messages(command: str) -> list[Message]:
    """The conversation after which the user's request is scored as the model's reply."""
    return [Message("system", REVIEW_SYSTEM), Message("user", REVIEW_USER.format(command=command))]
