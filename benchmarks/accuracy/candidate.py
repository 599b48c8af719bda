"""What every tool under test returns for one task."""

from __future__ import annotations

import re
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


# A reply that opens like this is prose (usually a refusal), not a command. One rule for every
# tool, so refusals are counted the same way for conch, the bare model and the peers.
_REFUSAL = re.compile(
    r"^\s*(?:i'?m sorry|i am sorry|sorry\b|i apologi[sz]e|i can(?:no|')t\b|i cannot\b"
    r"|i can not|i'?m unable|i am unable|i'm not able|i am not able|i won't|i will not"
    r"|as an ai\b|unfortunately\b)",
    re.IGNORECASE,
)


def looks_refused(text: str) -> bool:
    """True when a reply declines (or answers in prose) instead of giving a command."""
    return bool(_REFUSAL.match(text.replace("\u2019", "'")))
