"""Every dotted ``conch.*`` name the documentation gives resolves: a module, or something a
module defines (a class, a function, a constant, a method of a class). A rename that leaves
the docs behind fails here."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = sorted(
    [ROOT / "README.md", ROOT / "SECURITY.md", *(ROOT / "docs").glob("*.md")],
)
# A dotted name inside backticks, possibly called (`conch.command.oneshot.OneShot.run(...)`).
_NAME = re.compile(r"`(conch(?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
# Dotted names that are not Python: a file (the model service's pid file) and the web
# server's event types (docs/server.md).
_EVENTS = ("type", "note", "pruned", "tool_call", "tool_result", "prompt_eval", "prompt_progress")
NOT_PYTHON = {"conch.pid"} | {f"conch.{kind}" for kind in _EVENTS}


def _names() -> list[tuple[str, str]]:
    found: dict[str, str] = {}
    for path in DOCUMENTS:
        for name in _NAME.findall(path.read_text(encoding="utf-8")):
            if name not in NOT_PYTHON:
                found.setdefault(name, path.name)
    return sorted(found.items())


def resolves(name: str) -> bool:
    """Whether ``name`` is a module, or an attribute chain under the longest module prefix."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            annotations = getattr(target, "__annotations__", {})
            fields = getattr(target, "__dataclass_fields__", {})
            if hasattr(target, attribute):
                target = getattr(target, attribute)
                continue
            # A field of a class with slots or without a default, or nothing.
            return attribute in annotations or attribute in fields
        return True
    return False


def test_the_documents_name_conch_objects() -> None:
    # The scan itself finds names: a broken pattern would make the test below vacuous.
    assert len(_names()) > 20


@pytest.mark.parametrize(("name", "document"), _names())
def test_a_documented_name_resolves(name: str, document: str) -> None:
    assert resolves(name), f"{document} names `{name}`, which does not exist"
