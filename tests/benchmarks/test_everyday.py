"""The everyday benchmark's directory and checks: a right output passes, a wrong one fails."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.everyday import fixture
from benchmarks.everyday.run import HELD_OUT, tree_state


def _check(request: str):  # type: ignore[no-untyped-def]
    return next(c.check for c in HELD_OUT if request in " ".join(c.argv))


def test_the_directory_has_what_the_requests_talk_about(tmp_path: Path) -> None:
    root = fixture.build(tmp_path / "project")
    assert fixture.largest(root, recursive=False)[0] == "backup.tar"
    assert fixture.largest(root, recursive=True)[0] == "data/measurements.csv"
    assert fixture.top_dirs(root) == ["build", "cache", "data", "empty-dir", "logs", "src"]
    assert (root / "build.sh").stat().st_mode & 0o111
    assert len((root / "access.log").read_text(encoding="utf-8").splitlines()) == 20


def test_right_outputs_pass_and_wrong_ones_fail(tmp_path: Path) -> None:
    root = fixture.build(tmp_path / "project")
    before = tree_state(root)
    last = _check("last 3 lines")
    assert last("\n".join(fixture.app_log_lines()[-3:]) + "\n", before, root)
    assert not last("\n".join(fixture.app_log_lines()[-4:]) + "\n", before, root)
    emails = _check("core team")
    assert emails('"ada@example.org"\n"carol@example.org"\n', before, root)
    assert not emails('{"name": "ada", "email": "ada@example.org"}\n', before, root)
    big = _check("bigger than 1 MB")
    assert big("./data/measurements.csv\n./data/archive/2025.bin\n", before, root)
    assert not big("./data/measurements.csv\n", before, root)
    statuses = _check("status code")
    assert not statuses("200\n304\n404\n", before, root)


def test_a_delete_check_sees_what_else_went(tmp_path: Path) -> None:
    root = fixture.build(tmp_path / "project")
    before = tree_state(root)
    gone = _check("cache folder")
    assert not gone("", before, root)  # nothing deleted yet
    for name in ("cache/session.tmp", "cache/render.tmp", "cache/today.tmp"):
        (root / name).unlink()
    assert gone("", before, root)
    (root / "notes.txt").unlink()
    assert not gone("", before, root)
