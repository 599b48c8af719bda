"""Factories of the built-in providers. Each imports its backend only when called."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conch.config.settings import AISettings, DaemonSettings
    from conch.providers.base import Provider, ProviderFactory


def _local(settings: AISettings) -> Provider:
    return local_provider(settings)


def local_provider(settings: AISettings, daemon: DaemonSettings | None = None) -> Provider:
    """The embedded model: through the warm model service when ``daemon`` enables it.

    Without the ``daemon`` section (library callers, ``--no-daemon``) the model runs in this
    process, as it always did.
    """
    if daemon is not None and daemon.enabled:
        from conch.daemon.client import DaemonProvider

        return DaemonProvider.from_settings(settings, daemon)
    from conch.providers.local.provider import LocalProvider

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
