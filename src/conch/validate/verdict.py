"""The second opinion: the model judges a command against this machine's documentation.

Static findings (a program not installed, an option its help does not list) are facts given to
the model, not suggestions, and they decide validity whatever the model says.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Generator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from conch.errors import ModelOutputError
from conch.host.platform import PlatformContext
from conch.messages import GenerationOptions, Message, ProviderEvent
from conch.policy import PolicyContext, Verdict, assess
from conch.providers.base import EventCallback, Provider, drain, respond
from conch.validate.config import ValidationSettings, coerce_settings
from conch.validate.extract import extract_command
from conch.validate.helptext import PolicyCheck, collect_help
from conch.validate.render import render_help
from conch.validate.static import programs, static_check, used_options

UNREADABLE = "the model's verdict could not be read"

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "valid": {"type": "boolean"},
        "issues": {"type": "array", "items": {"type": "string"}},
        "corrected_command": {"type": ["string", "null"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "explanation": {"type": "string"},
    },
    "required": ["valid", "issues", "corrected_command", "confidence", "explanation"],
    "additionalProperties": False,
}

VALIDATOR_PROMPT = (
    "You are a CRITICAL command validator. Your job is to verify that a shell command will "
    "work on the target platform described below, using the documentation collected from "
    "this very machine. Check every program and every option against that documentation; "
    "look for wrong flags (GNU versus BSD), missing utilities and shell syntax errors. "
    "If the command is incompatible, give a CORRECTED command that achieves the same goal on "
    "this platform, using only programs and options the documentation shows. Do not flag "
    "matters of style. Reply with JSON only: "
    '{"valid": true|false, "issues": ["..."], "corrected_command": "fixed command or null if '
    'valid", "confidence": 0.0-1.0, "explanation": "brief explanation"}'
)

_FENCE = re.compile(r"```[\w-]*\s*\n?(.*?)```", re.S)
_DOC_CAP = 6000


@dataclass(slots=True)
class ValidationResult:
    """The outcome of validating one command."""

    valid: bool
    issues: list[str] = field(default_factory=list)
    corrected_command: str | None = None
    confidence: float = 0.0
    explanation: str = ""
    static_issues: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    skipped: bool = False
    seconds: float = 0.0
    model_called: bool = False

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (for ``--json`` output and history)."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class ModelVerdict:
    """What the model's JSON said, with every field defaulted and coerced."""

    valid: bool
    issues: list[str]
    corrected_command: str | None
    confidence: float
    explanation: str


def validate(
    command: str,
    provider: Provider,
    platform: PlatformContext,
    settings: ValidationSettings | Mapping[str, Any] | None = None,
    cache_dir: Path | None = None,
    request: str | None = None,
    on_event: EventCallback | None = None,
    policy_check: PolicyCheck | None = None,
) -> ValidationResult:
    """Check ``command`` statically, then ask the model for a verdict (ProviderError passes);
    ``on_event`` sees the model's reply as it streams."""
    events = validate_events(
        command, provider, platform, settings, cache_dir, request, policy_check
    )
    return drain(events, on_event)


def validate_events(
    command: str,
    provider: Provider,
    platform: PlatformContext,
    settings: ValidationSettings | Mapping[str, Any] | None = None,
    cache_dir: Path | None = None,
    request: str | None = None,
    policy_check: PolicyCheck | None = None,
) -> Generator[ProviderEvent, None, ValidationResult]:
    """``validate`` as a stream: the model's events as they come, then the result."""
    started = time.monotonic()
    opts = coerce_settings(settings)
    names = programs(command)
    why = (
        "validation is disabled"
        if not opts.enabled
        else "no program to check"
        if not names
        else "every program is in validation.skip_commands"
        if all(n in opts.skip_commands for n in names)
        else None
    )
    if why is not None:
        return ValidationResult(True, explanation=f"skipped: {why}", checked=names, skipped=True)
    helps = collect_help(names, opts, cache_dir, policy_check)
    static = static_check(command, helps)
    if opts.model_check == "never" or (opts.model_check == "on_issues" and not static):
        return ValidationResult(
            not static,
            list(static),
            explanation=f"static checks only (validation.model_check: {opts.model_check})",
            static_issues=list(static),
            checked=names,
            seconds=time.monotonic() - started,
        )
    docs = render_help(helps, used_options(command), total=_DOC_CAP)
    messages = [
        Message("system", VALIDATOR_PROMPT),
        Message("user", build_prompt(command, platform, docs, static, request)),
    ]
    options = GenerationOptions(temperature=0.0, max_tokens=600, json_schema=SCHEMA)
    reply = (yield from respond(provider, messages, options)).text
    parsed = parse_verdict(reply)
    result = combine(command, static, parsed)
    result.checked = names
    result.model_called = True
    result.seconds = time.monotonic() - started
    return result


def build_prompt(
    command: str,
    platform: PlatformContext,
    docs: str,
    static: list[str],
    request: str | None = None,
) -> str:
    """The user message of the validation request."""
    parts = [f"PLATFORM:\n{platform.describe()}"]
    if request:
        parts.append(f"THE USER ASKED FOR:\n{request}")
    parts.append(f"GENERATED COMMAND:\n{command}")
    parts.append(f"COMMAND DOCUMENTATION (collected on this machine):\n{docs or '(none)'}")
    if static:
        facts = "\n".join(f"- {issue}" for issue in static)
        parts.append(
            "FACTS ALREADY ESTABLISHED ON THIS MACHINE (each makes the command invalid; "
            f"address every one, and your correction must avoid them):\n{facts}"
        )
    parts.append(
        "TASK:\n1. Check if the command will work on this platform.\n2. Identify any "
        "incompatibilities (wrong flags, missing utilities, syntax errors).\n3. If "
        "incompatible, provide a CORRECTED command that achieves the same goal.\n"
        "Respond with the JSON object only."
    )
    return "\n\n".join(parts)


def combine(command: str, static: list[str], parsed: ModelVerdict | None) -> ValidationResult:
    """Merge the static findings and the model's verdict into one result."""
    if parsed is None:
        issues = [*static, UNREADABLE]
        return ValidationResult(not static, issues, None, 0.0, UNREADABLE, list(static))
    issues = list(static)
    seen = {i.casefold() for i in issues}
    for issue in parsed.issues:
        if issue.casefold() not in seen:
            seen.add(issue.casefold())
            issues.append(issue)
    valid = parsed.valid and not static
    if not parsed.valid and not parsed.issues:
        issues.append("the model judged the command invalid without naming an issue")
    corrected = _normalise(parsed.corrected_command, command) if not valid else None
    return ValidationResult(
        valid, issues, corrected, parsed.confidence, parsed.explanation, list(static)
    )


def _normalise(corrected: str | None, command: str) -> str | None:
    if not corrected:
        return None
    try:
        fixed = extract_command(corrected)
    except ModelOutputError:
        return None
    if "\n" in fixed or " ".join(fixed.split()) == " ".join(command.split()):
        return None  # the same command again is not a correction
    return fixed


def parse_verdict(reply: str) -> ModelVerdict | None:
    """The verdict in ``reply`` (bare JSON, fenced, or amid prose), or None if there is none."""
    data = _find_object(reply)
    if data is None:
        return None
    issues_raw = data.get("issues")
    if isinstance(issues_raw, str):
        issues_raw = [issues_raw]
    issues = (
        [str(i).strip() for i in issues_raw or [] if str(i).strip()]
        if isinstance(issues_raw, list)
        else []
    )
    corrected = data.get("corrected_command")
    if not isinstance(corrected, str) or corrected.strip().lower() in ("", "null", "none"):
        corrected = None
    valid = _as_bool(data.get("valid"))
    if valid is None:
        valid = not issues and corrected is None
    explanation = data.get("explanation")
    return ModelVerdict(
        valid=valid,
        issues=issues,
        corrected_command=corrected.strip() if corrected else None,
        confidence=_as_confidence(data.get("confidence")),
        explanation=explanation.strip() if isinstance(explanation, str) else "",
    )


def _find_object(reply: str) -> dict[str, Any] | None:
    candidates = [reply.strip(), *(m.strip() for m in _FENCE.findall(reply))]
    for text in candidates:
        try:
            data = json.loads(text)
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    decoder = json.JSONDecoder()
    fallback: dict[str, Any] | None = None
    for match in re.finditer(r"\{", reply):
        try:
            data, _end = decoder.raw_decode(reply, match.start())
        except ValueError:
            continue
        if isinstance(data, dict):
            if "valid" in data:
                return data
            fallback = fallback or data
    return fallback


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "valid"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "no", "invalid"):
        return False
    return None


def _as_confidence(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.5
    if number != number:  # NaN
        return 0.5
    if 1 < number <= 100:
        number /= 100  # a percentage
    return min(1.0, max(0.0, number))


def recheck(
    corrected: str,
    policy_context: PolicyContext | None = None,
    settings: ValidationSettings | Mapping[str, Any] | None = None,
    cache_dir: Path | None = None,
    policy_check: PolicyCheck | None = None,
) -> tuple[Verdict, list[str]]:
    """The policy verdict and static issues of a proposed correction, before anyone runs it."""
    verdict = assess(corrected, policy_context or PolicyContext())
    helps = collect_help(programs(corrected), settings, cache_dir, policy_check)
    return verdict, static_check(corrected, helps)
