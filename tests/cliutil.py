"""Helpers shared by the CLI tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class CliResult:
    """What one in-process CLI run produced."""

    out: str
    err: str
    code: int


def write_config(home: Path, text: str) -> Path:
    """Write the user config file under the test's XDG_CONFIG_HOME."""
    path = home / ".config" / "conch" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
