"""Model providers behind one streaming protocol."""

from conch.providers.base import (
    EventCallback,
    Provider,
    complete,
    create_provider,
    drain,
    provider_names,
    register_provider,
    respond,
)
from conch.providers.scripted import ScriptedProvider
from conch.providers.window import ContextWindow, context_window

__all__ = [
    "ContextWindow",
    "EventCallback",
    "Provider",
    "ScriptedProvider",
    "complete",
    "context_window",
    "create_provider",
    "drain",
    "provider_names",
    "register_provider",
    "respond",
]
