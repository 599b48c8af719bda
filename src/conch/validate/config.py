"""The ``validation:`` section of conch's config."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conch.config.settings import DEFAULT_SKIP_COMMANDS, ValidationSettings

__all__ = ["DEFAULT_SKIP_COMMANDS", "ValidationSettings", "coerce_settings"]


def coerce_settings(value: ValidationSettings | Mapping[str, Any] | None) -> ValidationSettings:
    """``value`` as ``ValidationSettings`` (a raw config mapping is validated; None: defaults)."""
    if value is None:
        return ValidationSettings()
    if isinstance(value, ValidationSettings):
        return value
    return ValidationSettings.model_validate(dict(value))
