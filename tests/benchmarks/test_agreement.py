"""Agreement between conch runs: union, intersection and a majority vote over recorded answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from benchmarks.experiments.accuracy.agreement import agreement, main


def row(task: int, command: str, stdout: str, passed: bool, clean: bool = True) -> dict[str, Any]:
    return {
        "task": task,
        "tool": "conch",
        "clean": clean,
        "command": command,
        "stdout": stdout,
        "normalised": passed,
    }


def runs(*answers: list[dict[str, Any]]) -> list[dict[int, dict[str, Any]]]:
    return [{r["task"]: r for r in rows} for rows in answers]


def test_counts_union_intersection_and_a_vote_by_what_the_answers_printed() -> None:
    first = [
        row(1, "ls", "a\nb\n", True),
        row(2, "date +%F", "x\n", False),
        row(3, "rm a", "", True),
    ]
    second = [
        row(1, "ls -1", "b\n a\n", True),
        row(2, "date", "y\n", True),
        row(3, "rm b", "", False),
    ]
    third = [
        row(1, "ls -l", "c\n", False),
        row(2, "date -R", "y\n", True),
        row(3, "rm c", "", False),
    ]
    result = agreement(runs(first, second, third))
    assert result["tasks"] == 3
    assert result["runs"] == [2, 2, 1]
    assert result["some_run"] == 3 and result["every_run"] == 0
    # 1: "ls" and "ls -1" printed the same lines (order, spacing aside) and win; 2: two said
    # "y" and win; 3: nothing printed, every command differs, the tie goes to the first run.
    assert result["majority_vote"] == 3


def test_the_vote_can_pick_a_failing_majority() -> None:
    first = [row(1, "env", "A=1\n", True)]
    other = [row(1, "printenv | sort", "A=1\nB=2\n", False)]
    assert agreement(runs(first, other, other))["majority_vote"] == 0


def test_main_reads_reports_and_counts_only_shared_clean_tasks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"rows": [row(1, "ls", "x\n", True), row(9, "ls", "x\n", True)]}))
    b.write_text(json.dumps({"rows": [row(1, "ls", "x\n", False), row(5, "ls", "", True, False)]}))
    assert main([str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "a.json: 1/1 (100.0%)" in out and "b.json: 0/1 (0.0%)" in out
    assert "passed by some run: 1/1" in out and "passed by every run: 0/1" in out


def test_main_rejects_an_unreadable_report_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps({"rows": [row(1, "ls", "x\n", True)]}))
    bad.write_text("not json")
    with pytest.raises(SystemExit) as exit_info:
        main([str(good), str(bad)])
    assert exit_info.value.code == 2
    assert "bad.json: not a readable accuracy report" in capsys.readouterr().err
