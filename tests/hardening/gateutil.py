"""Helpers for the gate tests: denylisted spellings of "delete my home directory" and the
audit log's refusal lines. The ``canary`` fixture is in this directory's conftest.py."""

from __future__ import annotations

from pathlib import Path

from conch.execute import AUDIT_LOG

# Denylisted spellings of "delete my home directory"; `~` is the test's temporary HOME.
DENYLISTED = [
    "rm -rf ~",
    "r''m -rf ~",
    "sh -c 'rm -rf ~'",
    "{rm,-rf,~}",
    "parallel rm -rf ::: ~",
    "env -S'rm -rf ~'",
    "cd && rm -rf *",
]

CANARY_TEXT = "still here\n"


def audited(state: Path) -> str:
    """The audit log in ``state`` ("" when there is none)."""
    log = state / AUDIT_LOG
    return log.read_text(encoding="utf-8") if log.exists() else ""


def assert_refusal_audited(state: Path, command: str, why: str = "policy") -> None:
    """The audit log holds exactly one line, the refusal of ``command`` (it never ran)."""
    (line,) = audited(state).splitlines()
    assert line.endswith(f" | {command} | refused:{why} | 0.000s"), line
