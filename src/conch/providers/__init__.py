"""Model providers behind one streaming protocol."""

from conch.providers.base import (
    Provider,
    complete,
    create_provider,
    provider_names,
    register_provider,
)
from conch.providers.scripted import ScriptedProvider

__all__ = [
    "Provider",
    "ScriptedProvider",
    "complete",
    "create_provider",
    "provider_names",
    "register_provider",
]
