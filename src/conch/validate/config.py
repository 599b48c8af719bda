"""The ``validation:`` section of conch's config."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_SKIP_COMMANDS = ("cd", "pwd", "echo", "true", "false")


class ValidationSettings(BaseModel):
    """How conch checks a generated command against this machine before running it."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    enabled: bool = True
    collect_help_text: bool = True
    collect_man_pages: bool = True
    collect_tldr: bool = True
    max_help_text_size: int = Field(default=5000, ge=200)
    validation_timeout_ms: int = Field(default=5000, ge=100)
    auto_fix: bool = False
    show_validation_details: bool = True
    skip_commands: list[str] = Field(default_factory=lambda: list(DEFAULT_SKIP_COMMANDS))
    help_cache_ttl_days: float = Field(default=7.0, ge=0)


def coerce_settings(value: ValidationSettings | Mapping[str, Any] | None) -> ValidationSettings:
    """``value`` as ``ValidationSettings`` (a raw config mapping is validated; None: defaults)."""
    if value is None:
        return ValidationSettings()
    if isinstance(value, ValidationSettings):
        return value
    return ValidationSettings.model_validate(dict(value))
