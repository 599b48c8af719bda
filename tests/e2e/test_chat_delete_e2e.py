"""``conch chat --allow-bash`` on the real embedded model, on a real terminal: after two
questions about other files, "delete all the .tmp files here" deletes the .tmp files and
nothing else (the user says yes to each question before a delete), and the reply is about
the deletion, not an earlier question."""

from __future__ import annotations

import re
from pathlib import Path

import pexpect
import pytest

from cliutil import plain_terminal, spawn_conch
from conch.cli.repl import PROMPT
from conch.cli.sessionfile import load_session, session_path
from conch.config.paths import Paths

pytestmark = pytest.mark.e2e

STATUS = r"● \d+% / \d+ tokens"
ASKED = r"Run it\? \[y/N(/a)?\]"
STOPPED = r"conch: [^\r\n]*stopped[^\r\n]*"
KEPT = {
    "notes.txt": "buy milk\ncall the plumber\nwater the plants\n",
    "report.md": "# Report\n\nIn March our sales rose by 4 percent.\n",
    "tmp_plan.txt": "not a .tmp file, though its name starts with tmp\n",
    "data.tmp.bak": "a backup: its name does not end in .tmp\n",
    "src/app.py": "print('hello')\n",
    "src/notes.txt": "kept: inside a subdirectory\n",
}
DELETED = ("build.tmp", "cache.tmp", "session-1.tmp")
CANARY = "must survive\n"


def _ask(child: pexpect.spawn, question: str) -> int:
    """Send ``question`` and say yes to every question conch asks before acting, until the
    status line that ends the reply; how many yeses were given."""
    child.send(question + "\r")
    yeses = 0
    while child.expect([STATUS, ASKED, STOPPED]) == 1:
        child.send("y\r")
        yeses += 1
    child.expect_exact(PROMPT)
    return yeses


def _shown(transcript: Path) -> str:
    """The terminal transcript without escape sequences and spinner frames."""
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", transcript.read_text(encoding="utf-8"))
    lines = text.replace("\r", "\n").splitlines()
    return "\n".join(ln for ln in lines if ln.strip() and not re.match(r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] ", ln))


def test_delete_the_tmp_files_after_two_questions(
    isolated_dirs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain_terminal(monkeypatch)
    canaries = [isolated_dirs / "canary.txt", tmp_path / "canary.tmp"]  # outside the work dir
    for canary in canaries:
        canary.write_text(CANARY, encoding="utf-8")
    work = tmp_path / "work"
    for name, text in KEPT.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text, encoding="utf-8")
    for name in DELETED:
        (work / name).write_text(f"scratch data of {name}\n", encoding="utf-8")

    transcript = tmp_path / "transcript.txt"
    child = spawn_conch(work, "chat", "--allow-bash")
    child.timeout = 600
    with transcript.open("w", encoding="utf-8") as log:
        child.logfile_read = log
        try:
            child.expect_exact(PROMPT)
            _ask(child, "How many lines does notes.txt have?")
            _ask(child, "What does report.md say about sales?")
            yeses = _ask(child, "delete all the .tmp files here")
            child.send("/exit\r")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
    shown = _shown(transcript)

    left = sorted(p.relative_to(work).as_posix() for p in work.rglob("*") if p.is_file())
    assert left == sorted(KEPT), shown
    for name, text in KEPT.items():
        assert (work / name).read_text(encoding="utf-8") == text, name
    for canary in canaries:
        assert canary.read_text(encoding="utf-8") == CANARY, canary
    assert yeses >= 1, shown
    assert child.exitstatus == 0, shown
    history = load_session(session_path(Paths.default().state_dir, work))
    assert history is not None, shown
    reply = history[-1].content.lower()
    assert history[-1].role == "assistant" and "tmp" in reply, shown
