"""Validating a generated command against this machine before it runs.

Order: find the programs (``static.programs``), collect their documentation in parallel
(``helptext.collect_help``: ``--help``, man page, cached tldr page, ``--version``, cached per
binary), check statically (``static.static_check``: installed? options documented?), then ask
the model for a JSON verdict (``verdict.validate``). See docs/validation.md.
"""

from __future__ import annotations

from conch.validate.config import ValidationSettings, coerce_settings
from conch.validate.helptext import CommandHelp, collect_help, default_policy_check
from conch.validate.render import help_for_prompt, render_help
from conch.validate.static import programs, static_check, used_options
from conch.validate.verdict import (
    SCHEMA,
    ModelVerdict,
    ValidationResult,
    parse_verdict,
    recheck,
    validate,
    validate_events,
)

__all__ = [
    "SCHEMA",
    "CommandHelp",
    "ModelVerdict",
    "ValidationResult",
    "ValidationSettings",
    "coerce_settings",
    "collect_help",
    "default_policy_check",
    "help_for_prompt",
    "parse_verdict",
    "programs",
    "recheck",
    "render_help",
    "static_check",
    "used_options",
    "validate",
    "validate_events",
]
