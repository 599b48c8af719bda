"""Shared fixtures: every test gets its own config, state and cache directories."""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

import requires
from cliutil import CliResult
from conch.cli.environment import Environment
from conch.cli.main import main

# Property tests check what the policy decides, never how fast: no per-example deadline (a
# loaded machine made one example of a policy property take 285 ms and fail).
settings.register_profile("conch", deadline=None)
settings.load_profile("conch")

_CLEARED = (
    "CONCH_CONFIG",
    "CONCH_PROVIDER",
    "CONCH_MODEL",
    "CONCH_BASE_URL",
    "CONCH_MODEL_PATH",
    "CONCH_ENGINE",
    "CONCH_TIMEOUT",
    "CONCH_DEBUG",
    "CONCH_DAEMON",
    "CONCH_BWRAP",
    "CONCH_SHELL_HISTORY",
    "XDG_RUNTIME_DIR",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "AZURE_OPENAI_ENDPOINT",
    "AZURE_OPENAI_DEPLOYMENT",
    "AZURE_OPENAI_API_VERSION",
    "AZURE_OPENAI_API_KEY",
    "NO_COLOR",
)


def pytest_configure(config: pytest.Config) -> None:
    requires.register(config)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip (or under ``CI=true`` fail) a test marked ``needs(...)`` whose tools are missing,
    before its fixtures are set up (tests/requires.py)."""
    requires.enforce(item)


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Point XDG config/state at temp dirs and clear conch's and the providers' variables.

    The cache dir is kept unless a test overrides it, so the assembled embedded model (1.1 GB)
    and the platform facts are built once per machine, not once per test. The local model runs
    in the test's own process: a warm model service per test would outlive it by minutes
    (tests/daemon turns the service back on, in a private runtime dir).
    """
    for name in _CLEARED:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CONCH_DAEMON", "0")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    if "XDG_CACHE_HOME" not in os.environ:
        monkeypatch.setenv("XDG_CACHE_HOME", str(Path.home() / ".cache"))
    monkeypatch.setenv("HOME", str(home))
    yield home


@pytest.fixture
def conch(tmp_path: Path) -> Callable[..., CliResult]:
    """Run the CLI in-process, like a user would from ``cwd`` (default: a fresh temp dir)."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)

    def run(
        *argv: str,
        stdin: str = "",
        tty: bool = False,
        answers: str | None = None,
        cwd: Path | None = None,
    ) -> CliResult:
        out, err = io.StringIO(), io.StringIO()
        env = Environment(
            stdin=io.StringIO(stdin),
            stdout=out,
            stderr=err,
            stdin_isatty=tty,
            stdout_isatty=tty,
            stderr_isatty=False,
            environ=dict(os.environ),
            cwd=cwd or work,
            terminal=io.StringIO(answers) if answers is not None else None,
            terminal_checked=True,
        )
        code = main(list(argv), env)
        return CliResult(out.getvalue(), err.getvalue(), int(code))

    return run
