"""The selection-headroom count: unchosen candidates run like final answers."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from requires import needs

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.accuracy.run import Runner
from benchmarks.experiments.accuracy.headroom import headroom, main


def row(task: int, chosen: str, tried: list[str], normalised: bool) -> dict[str, object]:
    trials = [{"command": c, "outcome": "ok"} for c in tried]
    return {"task": task, "tool": "conch", "command": chosen, "trials": trials,
            "normalised": normalised}  # fmt: skip


@needs("bubblewrap")
def test_an_unchosen_candidate_that_matches_a_reference_is_counted(tmp_path: Path) -> None:
    rows = [
        row(0, "ls -a", ["ls -a", "ls"], False),  # "ls" is task 0's reference
        row(1, "ls", ["ls"], False),  # one candidate: nothing to choose
        row(3, "ls -a", ["ls -a", "pwd"], False),  # no candidate passes
    ]
    result = headroom(rows, Runner(tmp_path))
    assert result["several_candidates"] == 2
    assert result["missed"] == [{"task": 0, "chosen": "ls -a", "passing": "ls"}]


def test_an_unreadable_report_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"meta": {}}))
    with pytest.raises(SystemExit) as exit_info:
        main([str(report)])
    assert exit_info.value.code == 2
    assert "report.json: not a readable accuracy report" in capsys.readouterr().err
