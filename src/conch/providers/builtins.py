"""Factories of the built-in providers. Each imports its backend only when called."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conch.providers.base import Provider, ProviderFactory
    from conch.settings import AISettings


def _local(settings: AISettings) -> Provider:
    from conch.providers.local import LocalProvider

    return LocalProvider.from_settings(settings)


def _openai(settings: AISettings) -> Provider:
    from conch.providers.openai import OpenAIProvider

    return OpenAIProvider.from_settings(settings)


def _azure(settings: AISettings) -> Provider:
    from conch.providers.openai import OpenAIProvider

    return OpenAIProvider.azure_from_settings(settings)


def _scripted(settings: AISettings) -> Provider:
    from conch.providers.scripted import ScriptedProvider

    return ScriptedProvider.from_settings(settings)


BUILTIN_PROVIDERS: dict[str, ProviderFactory] = {
    "local": _local,
    "openai": _openai,
    "azure": _azure,
    "scripted": _scripted,
}
