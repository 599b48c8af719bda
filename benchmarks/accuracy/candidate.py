"""What every tool under test returns for one task."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Task:
    """One NL2SH-ALFA task."""

    index: int
    fs: int
    nl: str
    bash: str
    bash2: str
    difficulty: int
    shell: str
    env: dict[str, str]
    clean: bool


@dataclass(frozen=True, slots=True)
class Candidate:
    """A tool's answer to a task.

    ``command`` is None when nothing usable came back: ``refused`` marks a reply that declined
    (or answered in prose), ``error`` an extraction failure, a crash or a timeout.
    """

    command: str | None
    raw: str
    seconds: float
    error: str | None = None
    refused: bool = False


class Generator(Protocol):
    """A tool under test: turns a task's request into a candidate command."""

    name: str

    def generate(self, task: Task) -> Candidate: ...
