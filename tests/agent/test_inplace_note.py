"""The bash tool says when an in-place edit (``sed -i``) left every file it named as it was:
its pattern matched nothing, and sed says nothing about that. Commands run in a temporary
directory, with a canary beside it that must stay untouched."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conch.agent.bash import Shell
from conch.agent.inplace import snapshot, unchanged_note
from conch.policy import ExecutionMode

SETTINGS = '{\n  "debug": true\n}\n'


@pytest.fixture
def work(tmp_path: Path) -> Iterator[Path]:
    canary = tmp_path / "canary.txt"
    canary.write_text("keep\n", encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    (work / "settings.json").write_text(SETTINGS, encoding="utf-8")
    yield work
    assert canary.read_text(encoding="utf-8") == "keep\n"


def _run(work: Path, command: str) -> str:
    shell = Shell(cwd=work, mode=ExecutionMode.FULL, state_dir=work.parent / "state", root=work)
    return shell.run(command).text


def test_an_edit_whose_pattern_matched_nothing_says_so(work: Path) -> None:
    text = _run(work, "sed -i 's/debug = true/debug = false/' settings.json")
    assert text.endswith(
        "[the in-place edit changed nothing in settings.json: its pattern matched no text "
        "there. Read the file and match the text exactly as it is written, or use fs_edit]"
    )
    assert (work / "settings.json").read_text(encoding="utf-8") == SETTINGS


def test_an_edit_that_changed_the_file_has_no_note(work: Path) -> None:
    text = _run(work, 'sed -i \'s/"debug": true/"debug": false/\' settings.json')
    assert "changed nothing" not in text
    assert '"debug": false' in (work / "settings.json").read_text(encoding="utf-8")


def test_only_in_place_edits_of_files_here_are_kept() -> None:
    here = Path(__file__).parent
    assert snapshot("cat test_inplace_note.py", here) == {}  # not an in-place edit
    assert snapshot("sed -i s/a/b/ /etc/hostname", here) == {}  # not under the directory
    assert list(snapshot("sed -i.bak s/a/b/ test_inplace_note.py", here)) == [
        "test_inplace_note.py"
    ]
    assert unchanged_note({}, here, 0) == ""
    assert unchanged_note({"test_inplace_note.py": b"other"}, here, 0) == ""
    assert unchanged_note({"missing.txt": b""}, here, 0) == ""


def test_no_note_for_a_command_that_only_mentions_an_edit_or_moves_first(work: Path) -> None:
    (work / "deploy.sh").write_text("sed -i 's/a/b/' x\n", encoding="utf-8")
    assert "changed nothing" not in _run(work, "grep -n 'sed -i' deploy.sh")
    sub = work / "sub"
    sub.mkdir()
    (sub / "settings.json").write_text("debug\n", encoding="utf-8")
    text = _run(work, "cd sub && sed -i s/debug/DEBUG/ settings.json")
    assert "changed nothing" not in text
    assert (sub / "settings.json").read_text(encoding="utf-8") == "DEBUG\n"


def test_a_symlink_loop_among_the_names_is_passed_over(work: Path) -> None:
    (work / "loop").symlink_to("loop")
    assert snapshot("sed -i s/a/b/ loop settings.json", work) == {
        "settings.json": SETTINGS.encode()
    }
