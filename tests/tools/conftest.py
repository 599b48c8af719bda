"""Fixtures for the built-in tool tests: a sandbox directory, and calls made the way the
agent makes them (JSON arguments through a ``ToolRegistry``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from conch.messages import ToolCall, ToolResult
from conch.tools import Tool, ToolRegistry

Call = Callable[..., ToolResult]


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """An empty directory to confine the file tools to."""
    root = tmp_path / "sandbox"
    root.mkdir()
    return root


@pytest.fixture
def caller() -> Callable[[Iterable[Tool]], Call]:
    """Makes a function that calls one of the given tools by name, arguments sent as JSON."""

    def make(tools: Iterable[Tool]) -> Call:
        registry = ToolRegistry(tools)

        def call(name: str, **arguments: Any) -> ToolResult:
            return registry.call(ToolCall("call-1", name, json.dumps(arguments)))

        return call

    return make
