"""The state of one ``conch`` invocation, turned into its history entry at the end."""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from conch.cli.environment import Environment

if TYPE_CHECKING:
    from conch.policy import Verdict


@dataclass
class Run:
    """State of one invocation, turned into its history entry at the end."""

    args: argparse.Namespace
    env: Environment
    started: float = field(default_factory=time.monotonic)
    command: str | None = None
    verdict: Verdict | None = None
    provider_name: str | None = None
    model: str | None = None
    executed: bool = False
    notes: list[str] = field(default_factory=list)
    request: str | None = None
    validation: dict[str, Any] | None = None
    validation_details: bool = True
    candidates: list[dict[str, Any]] = field(default_factory=list)
