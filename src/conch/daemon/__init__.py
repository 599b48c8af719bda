"""The warm model service: one process keeps the local model loaded for every conch call.

A fresh ``conch`` process would load the model (seconds) and evaluate the same system prompt
(more seconds) on every call. The service does both once, then answers requests over a private
Unix socket; ``conch.daemon.provider.DaemonProvider`` starts it on demand and talks to it, and
``open_provider`` is how front ends get a provider (through the service when it is enabled).

This package's ``__init__`` imports nothing at import time, so naming it costs nothing on the
fast paths.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conch.config.paths import Paths
    from conch.config.settings import AISettings, DaemonSettings
    from conch.providers.base import Provider


def open_provider(
    ai: AISettings, daemon: DaemonSettings | None = None, paths: Paths | None = None
) -> Provider:
    """The provider ``ai.provider`` names, through the warm service where it applies (see
    ``conch.daemon.provider.open_provider``)."""
    from conch.daemon.provider import open_provider as opened

    return opened(ai, daemon, paths)
