"""The whole path from a request to a checked command: generate, validate, correct, assess.

Every surface that turns a request into a command (the one-shot CLI, the accuracy benchmark)
calls ``propose``, so what is measured is what users get.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conch.context import RequestContext
from conch.generate import Generated, generate
from conch.messages import Chunk
from conch.platform import PlatformContext
from conch.policy import Decision, PolicyContext, Verdict, assess
from conch.providers.base import Provider
from conch.settings import PromptConfig, Settings
from conch.validate import ValidationResult, recheck, validate


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
) -> Proposal:
    """Generate a command for ``ctx.request`` and check it every way conch knows."""
    generated = generate(
        provider,
        prompt,
        platform.describe(),
        ctx,
        settings.ai.temperature,
        on_chunk,
        few_shot=settings.generation.few_shot,
    )
    command = generated.command
    proposal = Proposal(command, assess(command, policy_context), generated)
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
