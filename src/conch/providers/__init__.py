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

__all__ = [
    "EventCallback",
    "Provider",
    "ScriptedProvider",
    "complete",
    "create_provider",
    "drain",
    "provider_names",
    "register_provider",
    "respond",
]
