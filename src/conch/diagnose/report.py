"""What ``conch doctor`` finds, as data: one ``Check`` per thing conch may need, and the
``Report`` of them all (``conch.diagnose.doctor`` makes it; front ends render it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# How long a network or service check may take.
TIMEOUT_S = 3.0


@dataclass(frozen=True, slots=True)
class Check:
    """One thing conch may need. ``ok``: it works. ``needed``: the current settings use it,
    so when it does not work a request fails or loses something (``broken``). ``detail``: one
    line; ``fix``: what to do when it does not work; ``facts``: the findings as data."""

    name: str
    ok: bool
    detail: str
    needed: bool = True
    fix: str | None = None
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def broken(self) -> bool:
        return self.needed and not self.ok

    @property
    def status(self) -> str:
        """``ok``; ``fail`` (broken); ``warn`` (does not work, but nothing needs it now)."""
        return "ok" if self.ok else "fail" if self.needed else "warn"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "ok": self.ok,
            "needed": self.needed,
            "detail": self.detail,
            "fix": None if self.ok else self.fix,
            "facts": self.facts,
        }


@dataclass(frozen=True, slots=True)
class Report:
    """Every check, in the order they are shown."""

    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        """Nothing the current settings need is broken."""
        return not any(check.broken for check in self.checks)

    @property
    def broken(self) -> list[str]:
        return [check.name for check in self.checks if check.broken]

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "checks": [check.to_json() for check in self.checks]}


def first_line(exc: BaseException) -> str:
    """The first line of an error's message (its type when it has none)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def one_line(text: str) -> str:
    """A message of several lines as one: a heading ending in ``:`` then its items, joined by
    ``; `` (``2 problems in FILE: FILE:3: ...; FILE:5: ...``)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if len(lines) > 1 and lines[0].endswith(":"):
        return f"{lines[0]} {'; '.join(lines[1:])}"
    return "; ".join(lines)


def size_text(count: int) -> str:
    """A file size for people: MiB, or GiB from one GiB up."""
    if count >= 2**30:
        return f"{count / 2**30:.1f} GiB"
    return f"{count / 2**20:.0f} MiB"
