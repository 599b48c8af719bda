"""What a service runs: the model behind it (conch's own local provider, or a stand-in named
``module:function``) and the settings it was started with."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from conch.config.settings import LocalSettings
from conch.daemon import protocol
from conch.daemon.location import ServiceUnavailable
from conch.providers.base import Provider


class ServedModel(Provider, Protocol):
    """A provider the service keeps loaded: it can be loaded ahead of the first request."""

    @property
    def loaded(self) -> bool: ...

    def load(self) -> Any: ...


Backend = Callable[[LocalSettings, Path], ServedModel]


def local_backend(settings: LocalSettings, cache_dir: Path) -> ServedModel:
    """conch's own in-process provider: llama.cpp on ``settings.model_path``."""
    from conch.providers.local.provider import LocalProvider

    return LocalProvider(settings, cache_dir)


def load_backend(name: str) -> Backend:
    """The provider factory ``name`` selects: ``local``, or ``module:function`` (for tests)."""
    if name == protocol.LOCAL_BACKEND:
        return local_backend
    module, _, attribute = name.partition(":")
    if not module or not attribute:
        raise ServiceUnavailable(f"unknown model service backend '{name}'")
    try:
        factory: Backend = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as exc:
        raise ServiceUnavailable(f"cannot load backend '{name}': {exc}") from None
    return factory


@dataclass(frozen=True, slots=True)
class ServiceConfig:
    """What one service runs: its socket and pid file, the model, and when to quit."""

    socket_path: Path
    pid_file: Path
    local: LocalSettings
    cache_dir: Path
    idle_timeout_s: float
    backend: str = protocol.LOCAL_BACKEND
