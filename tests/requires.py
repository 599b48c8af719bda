"""Tests that need a program a machine may lack: busybox, chromium, bubblewrap, man, zsh,
fish.

``needs("busybox")`` marks a test (or a module, as ``pytestmark``, or a parameter) that needs
the program. It is the one place that decides what happens when the program is missing:

- present: the test runs;
- missing: the test is skipped, saying what is missing and how to install it, so the README's
  test command passes on a fresh machine with only Python;
- missing under ``CI=true``: the test fails, for ``.ci/run`` installs every one of them and
  a missing one there is a broken CI machine, not a reason to test less.

``require("chromium")`` applies the same decision from inside a fixture or a test.
tests/conftest.py applies the marks (``enforce``) before a test's fixtures are set up.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Literal

import pytest

from conch.execute.sandbox import BWRAP_VARIABLE, find_sandbox

MARK = "needs"


def _on_path(*programs: str) -> Callable[[Mapping[str, str]], str | None]:
    def missing(environ: Mapping[str, str]) -> str | None:
        absent = [p for p in programs if shutil.which(p, path=environ.get("PATH")) is None]
        if not absent:
            return None
        return f"{' and '.join(absent)} {'is' if len(absent) == 1 else 'are'} not installed"

    return missing


def _bubblewrap(environ: Mapping[str, str]) -> str | None:
    return _sandbox_error(environ.get("PATH"), environ.get(BWRAP_VARIABLE))


@cache
def _sandbox_error(path: str | None, named: str | None) -> str | None:
    environ = {"PATH": path or ""} | ({BWRAP_VARIABLE: named} if named else {})
    sandbox = find_sandbox(environ)
    return None if sandbox.usable else f"bubblewrap cannot create a sandbox here: {sandbox.error}"


@dataclass(frozen=True)
class Tool:
    """A program some tests need: how to tell it is missing, and how to install it."""

    name: str
    install: str  # how to get it (on Debian)
    missing: Callable[[Mapping[str, str]], str | None]  # what is missing, or None


TOOLS = {
    tool.name: tool
    for tool in (
        Tool("busybox", "apt-get install busybox", _on_path("busybox")),
        Tool("chromium", "apt-get install chromium", _on_path("chromium")),
        Tool("man", "apt-get install man-db psmisc", _on_path("man", "pstree")),
        Tool("zsh", "apt-get install zsh", _on_path("zsh")),
        Tool("fish", "apt-get install fish", _on_path("fish")),
        Tool(
            "bubblewrap",
            "it comes with conch, and needs unprivileged user namespaces",
            _bubblewrap,
        ),
    )
}


@dataclass(frozen=True)
class Decision:
    """What happens to a test that needs some tools: run it, skip it or fail it, and why."""

    action: Literal["run", "skip", "fail"]
    reason: str = ""


def decide(tools: tuple[str, ...], environ: Mapping[str, str] | None = None) -> Decision:
    """Run, skip or fail a test that needs ``tools``, on a machine with ``environ``
    (default: this process's environment; ``PATH`` finds the tools, ``CI`` says whether a
    missing one is a failure)."""
    env = os.environ if environ is None else environ
    reasons = []
    for name in tools:
        tool = TOOLS.get(name)
        if tool is None:
            known = ", ".join(sorted(TOOLS))
            raise ValueError(f"needs({name!r}): no such tool; known tools: {known}")
        why = tool.missing(env)
        if why is not None:
            reasons.append(f"{why} ({tool.install})")
    if not reasons:
        return Decision("run")
    reason = "; ".join(reasons)
    if env.get("CI") == "true":
        return Decision("fail", f"{reason}; under CI=true .ci/run installs it, so this fails")
    return Decision("skip", reason)


def needs(*tools: str) -> pytest.MarkDecorator:
    """Mark a test, a module (``pytestmark``) or a parameter as needing ``tools``."""
    for name in tools:
        if name not in TOOLS:
            raise ValueError(f"needs({name!r}): no such tool; known tools: {', '.join(TOOLS)}")
    return getattr(pytest.mark, MARK)(*tools)


def require(*tools: str) -> None:
    """Skip or fail the running test (or fixture) now unless ``tools`` are usable."""
    decision = decide(tools)
    if decision.action == "skip":
        pytest.skip(decision.reason)
    if decision.action == "fail":
        pytest.fail(decision.reason, pytrace=False)


def register(config: pytest.Config) -> None:
    """Declare the mark (the suite runs with ``--strict-markers``)."""
    config.addinivalue_line(
        "markers", f"{MARK}(*tools): the test needs these programs ({', '.join(TOOLS)})"
    )


def enforce(item: pytest.Item) -> None:
    """Apply every ``needs`` mark on ``item`` (its own, its class's, its module's); a skip
    is reported at the test, not here."""
    tools = tuple(dict.fromkeys(name for mark in item.iter_markers(MARK) for name in mark.args))
    if not tools:
        return
    decision = decide(tools)
    if decision.action == "skip":
        raise pytest.skip.Exception(decision.reason, _use_item_location=True)
    if decision.action == "fail":
        pytest.fail(decision.reason, pytrace=False)
