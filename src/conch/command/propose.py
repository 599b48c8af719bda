"""The whole path from a request to a checked command: generate, validate, correct, assess.

Every surface that turns a request into a command (the one-shot CLI, the accuracy benchmark)
calls ``propose``, so what is measured is what users get.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conch.command.candidates import RANK, Trial, choose, is_doubtful
from conch.command.examples import RETRIEVALS, retrieval
from conch.command.generate import Find, Generated, documentation_for, generate
from conch.command.request import RequestContext
from conch.config.settings import PromptConfig, Settings
from conch.errors import ConchError, ModelOutputError
from conch.execute.dryrun import DryRunner
from conch.host.platform import PlatformContext
from conch.messages import Chunk, Message
from conch.policy import Decision, PolicyContext, Verdict, assess
from conch.providers.base import Provider, likelihood
from conch.validate import ValidationResult, recheck, validate

# A sampled candidate that runs longer than this is rambling, not a better command.
SAMPLE_MAX_TOKENS = 160

# ``generation.review``: the question a command answers, to which the request is the reply.
REVIEW_SYSTEM = "You are an expert at the Unix shell."
REVIEW_USER = (
    "Here is a shell command:\n{command}\n"
    "What request, in plain English, would this command answer? Reply with the request only."
)


@dataclass(slots=True)
class Proposal:
    """A command ready to show: the policy's verdict on it and what validation found.

    ``correction`` is a fix validation suggested that has not been applied (it needs the
    user's yes unless ``validation.auto_fix``); ``corrected`` tells whether ``command`` is
    already the fixed one.
    """

    command: str
    verdict: Verdict
    generated: Generated
    validation: ValidationResult | None = None
    correction: str | None = None
    correction_verdict: Verdict | None = None
    corrected: bool = False
    notes: list[str] = field(default_factory=list)
    trials: list[Trial] = field(default_factory=list)

    def trials_json(self) -> list[dict[str, Any]]:
        """The candidates that were considered, for ``--json`` and history."""
        return [t.to_json() for t in self.trials]

    def validation_json(self) -> dict[str, Any] | None:
        """The validation result for ``--json`` and history, or None when none ran."""
        if self.validation is None:
            return None
        data = self.validation.to_json()
        data["applied_correction"] = self.corrected
        return data


def propose(
    provider: Provider,
    prompt: PromptConfig,
    platform: PlatformContext,
    ctx: RequestContext,
    settings: Settings,
    policy_context: PolicyContext,
    cache_dir: Path | None = None,
    on_chunk: Callable[[Chunk], None] | None = None,
    on_stage: Callable[[str], None] | None = None,
    dry_runner: DryRunner | None = None,
) -> Proposal:
    """Generate a command for ``ctx.request`` and check it every way conch knows.

    With a ``dry_runner`` (and ``generation.dry_run``), the greedy answer is dry-run; when
    that gives reason for doubt (or ``generation.sample_when: always``), more candidates are
    sampled and dry-run, and ``conch.command.candidates.choose`` picks one by outcome and vote. If the
    chosen one still fails, the model is shown the error once and asked for a repair.
    With ``generation.review`` above 1, that whole answer is made again with worked examples
    found other ways, and the best dry run, then the model's likelihood of the request,
    picks one (``_review``).
    """
    gen = settings.generation
    describe = platform.describe()
    documentation = documentation_for(
        prompt, ctx.request, gen.documentation, gen.few_shot, settings.validation, cache_dir
    )
    hints = ""
    if gen.program_hints:
        from conch.command.whatis import program_hints

        hints = program_hints(ctx.request, gen.program_hints, cache_dir=cache_dir)

    def answer(
        find: Find | None,
        earlier: list[Trial],
        stream: Callable[[Chunk], None] | None = None,
    ) -> _Answer:
        """One answer the way conch makes it: the greedy command, alternatives when in doubt,
        a repair when the chosen one fails, with examples found by ``find``; a command tried
        in an ``earlier`` answer is not dry-run again."""

        def ask(
            temperature: float,
            seed: int | None = None,
            failed: tuple[str, str] | None = None,
            stream: Callable[[Chunk], None] | None = None,
            max_tokens: int = 256,
            examples_skip: int = 0,
        ) -> Generated:
            return generate(
                provider,
                prompt,
                describe,
                ctx,
                temperature,
                stream,
                few_shot=gen.few_shot,
                seed=seed,
                max_tokens=max_tokens,
                failed=failed,
                documentation=documentation,
                hints=hints,
                examples_skip=examples_skip,
                end_bias=gen.brevity,
                find=find,
            )

        generated = ask(settings.ai.temperature, stream=stream)
        trials = [_trial(generated.command, "greedy", policy_context, runner, earlier)]
        replies = {generated.command: generated}
        notes: list[str] = []
        sampling = gen.sample_when == "always" or is_doubtful(trials[0])
        if runner is not None and gen.candidates > 1 and sampling:
            if on_stage is not None:
                on_stage("trying alternatives")
            for seed in range(1, gen.candidates):
                try:
                    # "next": every other sample sees the next-nearest examples instead.
                    skip = gen.few_shot if gen.sample_examples == "next" and seed % 2 else 0
                    sample = ask(
                        gen.sample_temperature,
                        seed=seed,
                        max_tokens=SAMPLE_MAX_TOKENS,
                        examples_skip=skip,
                    )
                except ModelOutputError:
                    continue
                except ConchError as exc:  # the first answer stands; say why there is no other
                    notes.append(f"no further candidates: {exc}")
                    break
                replies.setdefault(sample.command, sample)
                trials.append(
                    _trial(sample.command, "sample", policy_context, runner, earlier + trials)
                )
        chosen = trials[choose(trials)]
        if (
            runner is not None
            and gen.repair
            and chosen.dry_run is not None
            and chosen.dry_run.failed
        ):
            if on_stage is not None:
                on_stage("repairing")
            error = chosen.dry_run.error_excerpt()
            try:
                fixed = ask(settings.ai.temperature, failed=(chosen.command, error))
            except ModelOutputError:
                fixed = None
            except ConchError as exc:
                notes.append(f"no repair: {exc}")
                fixed = None
            if fixed is not None and fixed.command not in replies:
                replies[fixed.command] = fixed
                trials.append(
                    _trial(fixed.command, "repair", policy_context, runner, earlier + trials)
                )
                chosen = trials[choose(trials)]
        return _Answer(chosen, replies[chosen.command], trials, notes)

    runner = dry_runner if gen.dry_run else None
    first = answer(None, [], on_chunk)
    answers, best_index = [first], 0
    if gen.review > 1:
        answers, best_index = _review(provider, ctx.request, first, answer, gen.review, on_stage)
    best = answers[best_index]
    chosen, generated = best.chosen, best.generated
    command = chosen.command
    notes = [note for a in answers for note in a.notes]
    trials = [trial for a in answers for trial in a.trials]
    proposal = Proposal(command, chosen.verdict, generated, notes=notes, trials=trials)
    if not settings.validation.enabled or proposal.verdict.decision is Decision.REJECT:
        return proposal
    if on_stage is not None:
        on_stage("validating")
    result = validate(
        command, provider, platform, settings.validation, cache_dir, ctx.request, on_chunk
    )
    proposal.validation = result
    fix = result.corrected_command
    if result.valid or not fix or fix == command:
        return proposal
    fix_verdict, fix_issues = recheck(fix, policy_context, settings.validation, cache_dir)
    if fix_verdict.decision is Decision.REJECT:
        proposal.notes.append(f"validation suggested '{fix}', which the policy rejects")
        return proposal
    if fix_issues:
        proposal.notes.append(f"validation suggested '{fix}', which fails its own checks")
        return proposal
    if settings.validation.auto_fix:
        proposal.command, proposal.verdict, proposal.corrected = fix, fix_verdict, True
        proposal.notes.append(f"validation replaced '{command}' with '{fix}' (auto_fix)")
    else:
        proposal.correction, proposal.correction_verdict = fix, fix_verdict
    return proposal


@dataclass(slots=True)
class _Answer:
    """One run of the pipeline: the chosen trial, the reply it came from, every trial, notes."""

    chosen: Trial
    generated: Generated
    trials: list[Trial]
    notes: list[str]


def _review(
    provider: Provider,
    request: str,
    first: _Answer,
    answer: Callable[[Find | None, list[Trial]], _Answer],
    count: int,
    on_stage: Callable[[str], None] | None,
) -> tuple[list[_Answer], int]:
    """``generation.review``: up to ``count`` answers, each made with worked examples found a
    different way (``conch.command.examples.RETRIEVALS``), and the index of the best: never one the
    policy rejects over one it does not, nor one whose dry run went worse (``RANK``: failed
    below printed nothing or complained, below worked) over one whose run went better; among
    the rest, the one whose command makes the user's request likeliest as its description
    (``review_messages``); the first on a tie.

    A provider that cannot score (OpenAI, Azure) is found out by scoring the first answer,
    before any other is made: only the first is then made. A provider failure (or Ctrl+C)
    ends the review with the answers made so far, and says so in the notes.
    """

    def score(command: str) -> float | None:
        return likelihood(provider, review_messages(command), request)

    answers = [first]
    try:
        scores = {first.chosen.command: score(first.chosen.command)}
    except ConchError as exc:
        first.notes.append(f"no review: {exc}")
        return answers, 0
    if scores[first.chosen.command] is None:
        return answers, 0
    try:
        for name in RETRIEVALS[1:count]:
            if on_stage is not None:
                on_stage(f"reviewing: examples {name}")
            earlier = [t for a in answers for t in a.trials]
            try:
                made = answer(retrieval(name).nearest, earlier)
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


def _trial(
    command: str,
    source: str,
    policy_context: PolicyContext,
    runner: DryRunner | None,
    earlier: list[Trial] | None = None,
) -> Trial:
    """A candidate with the policy's verdict and, unless the policy rejects it, its dry run
    (reused from an identical earlier candidate)."""
    for previous in earlier or []:
        if previous.command == command:
            return Trial(command, previous.verdict, previous.dry_run, source)
    verdict = assess(command, policy_context)
    run = None
    if runner is not None and verdict.decision is not Decision.REJECT:
        run = runner(command)
    return Trial(command, verdict, run, source)
