"""A ``ShellSession`` for tests, without a terminal: a scripted model, a front end whose
answers are given in advance and which records what it was asked, the events of a line as
a list, and a canary file outside the session's directories that no command may touch."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from conch.config.settings import LoadedSettings, Settings
from conch.execute.checked import Answer
from conch.providers import ScriptedProvider
from conch.shell.events import Question, Said, ShellEvent
from conch.shell.models import ModelChoice
from conch.shell.session import ShellSession
from conch.shell.state import ShellState

# No dry runs, one answer, no validation: the turn logic without the sandbox or the
# pipeline's extra model calls (tests that want them say so).
QUIET: dict[str, Any] = {
    "generation": {"dry_run": False, "review": 1},
    "validation": {"enabled": False},
}


@pytest.fixture(autouse=True)
def canary(tmp_path: Path) -> Iterator[None]:
    """A file beside the test's work directory and HOME, checked untouched at the end (a
    module that imports this fixture takes it for every test)."""
    path = tmp_path / "canary.txt"
    path.write_text("untouched\n", encoding="utf-8")
    yield
    assert path.read_text(encoding="utf-8") == "untouched\n"


@dataclass
class Front:
    """Answers the session's questions in order (no when they run out; an exception given
    as an answer is raised) and its edits; keeps every question and edit it was given."""

    answers: list[Answer | BaseException] = field(default_factory=list)
    edits: list[str] = field(default_factory=list)
    asked: list[Question] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)

    def approve(self, question: Question) -> Answer:
        self.asked.append(question)
        answer = self.answers.pop(0) if self.answers else Answer.abort()
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def edit(self, command: str) -> str:
        self.edited.append(command)
        return self.edits.pop(0) if self.edits else ""


@dataclass
class Shell:
    """A session in ``work`` (a directory of the test's own) with ``provider`` answering."""

    session: ShellSession
    provider: ScriptedProvider
    front: Front
    work: Path
    state_dir: Path
    out: io.BytesIO
    opened: list[ShellEvent] = field(default_factory=list)

    def line(self, text: str, flipped: bool = False) -> list[ShellEvent]:
        """The events of one input line."""
        return list(self.session.handle(text, flipped))

    def audit(self) -> list[list[str]]:
        """The audit log's lines, each as its fields (time, directory, command, status...)."""
        path = self.state_dir / "audit.log"
        if not path.exists():
            return []
        return [line.split(" | ") for line in path.read_text(encoding="utf-8").splitlines()]


@contextmanager
def open_shell(
    tmp_path: Path,
    *replies: Any,
    front: Front | None = None,
    sections: dict[str, Any] | None = None,
    provider: ScriptedProvider | None = None,
    others: dict[str, ScriptedProvider | Exception] | None = None,
    state_dir: Path | None = None,
    work: Path | None = None,
    resume: bool = False,
) -> Iterator[Shell]:
    """A started session (a new saved session), closed when the generator resumes.
    ``others``: the providers of other models by name (``models:`` entries the sections
    configure), for routing, fallback and the planner (an exception: opening that model
    raises it); ``state_dir`` and ``work``: where
    the session keeps its state and runs (two sessions may share them); ``resume``: take
    up the last saved session (``--continue``)."""
    settings = Settings.model_validate({**QUIET, **(sections or {})})
    loaded = LoadedSettings(settings, tmp_path / "config.yaml", False)
    work = work or tmp_path / "work"
    work.mkdir(exist_ok=True)
    state_dir = state_dir or tmp_path / "state"
    environ = {
        "HOME": str(tmp_path / "home"),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "SHELL": "/bin/bash",
        "LANG": "C.UTF-8",
    }
    state = ShellState.from_environment(environ, cwd=str(work))
    provider = provider or ScriptedProvider.of(*replies)
    models = others or {}

    def open_model(choice: ModelChoice) -> ScriptedProvider:
        found = models.get(choice.name, provider)
        if isinstance(found, Exception):
            raise found
        return found

    front = front or Front()
    out = io.BytesIO()
    keys = os.open(os.devnull, os.O_RDONLY)
    session = ShellSession(
        loaded,
        ModelChoice("scripted", settings.ai),
        state=state,
        state_dir=state_dir,
        approve=front.approve,
        edit=front.edit,
        open_model=open_model,
        keys=keys,
        out=out,
        cache_dir=tmp_path / "cache",
    )
    opened = list(session.open(resume))
    try:
        yield Shell(session, provider, front, work, state_dir, out, opened)
    finally:
        session.close()
        os.close(keys)


def said(events: list[ShellEvent]) -> list[str]:
    """What conch said among ``events``."""
    return [e.text for e in events if isinstance(e, Said)]


def kinds(events: list[ShellEvent]) -> list[str]:
    """The events' class names, in order."""
    return [type(e).__name__ for e in events]
