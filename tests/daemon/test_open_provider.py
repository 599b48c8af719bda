"""Which provider a front end gets from ``conch.daemon.open_provider``."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conch.config.paths import Paths
from conch.config.settings import AISettings, DaemonSettings
from conch.daemon import open_provider, process
from conch.daemon.provider import DaemonProvider
from conch.providers import ScriptedProvider, register_provider
from conch.providers.base import BUILTIN_PROVIDERS, is_builtin
from conch.providers.local.provider import LocalProvider


@pytest.fixture
def local_replaced() -> Iterator[ScriptedProvider]:
    """A provider registered over the name ``local``; the built-in one is back afterwards."""
    replacement = ScriptedProvider.of("pwd")
    register_provider("local", lambda settings: replacement)
    try:
        yield replacement
    finally:
        register_provider("local", BUILTIN_PROVIDERS["local"])
    assert is_builtin("local")


def test_the_builtin_local_provider_goes_through_the_service_when_it_is_enabled(
    runtime: Path,
) -> None:
    provider = open_provider(AISettings(), DaemonSettings(), Paths.default())
    assert isinstance(provider, DaemonProvider) and provider.name == "local"
    # Opening starts nothing: the service is found or started on the first request.
    assert provider.service_pid is None and not provider.in_process
    assert process.spawned() == []
    provider.close()


@pytest.mark.parametrize("daemon", [None, DaemonSettings(enabled=False)])
def test_without_the_service_the_local_model_runs_in_this_process(
    daemon: DaemonSettings | None,
) -> None:
    provider = open_provider(AISettings(), daemon)
    assert isinstance(provider, LocalProvider) and not provider.loaded


def test_a_provider_registered_over_local_is_used_as_it_is(
    local_replaced: ScriptedProvider,
) -> None:
    assert not is_builtin("local")
    assert open_provider(AISettings(), DaemonSettings()) is local_replaced


def test_other_providers_never_go_through_the_service() -> None:
    provider = open_provider(AISettings(provider="scripted", script=["ls"]), DaemonSettings())
    assert isinstance(provider, ScriptedProvider)


def test_naming_the_package_imports_no_provider_or_service_code() -> None:
    code = "import sys, conch.daemon; print(' '.join(sorted(sys.modules)))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = run.stdout.split()
    assert "conch.daemon" in loaded
    heavy = ("conch.daemon.", "conch.providers", "conch.config", "pydantic", "filelock")
    assert [name for name in loaded if name.startswith(heavy)] == []
