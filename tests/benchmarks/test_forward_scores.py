"""The forward-score analysis scores stopping rules the way the early-exit analysis does."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.experiments.early_exit.forward_scores import render, score_rules


def task(index: int, outcome: str, first: bool, final: bool, likely: float = -10.0) -> Any:
    return {
        "task": index,
        "first_outcome": outcome,
        "first_doubtful": False,
        "first_likelihood": likely,
        "first_passed_now": first,
        "final_passed_now": final,
    }


def test_a_forward_rule_takes_the_first_answer_only_when_it_stops() -> None:
    tasks = [
        task(0, "ok", True, True),  # sure, right: stopping costs nothing
        task(1, "ok", False, True),  # sure but wrong: stopping loses it
        task(2, "ok", True, False),  # unsure: the full review stands (lost)
        task(3, "failed", True, True),  # its dry run failed: never stopped
    ]
    scores = {
        0: {"sum": -0.5, "mean": -0.1, "min": -0.4, "tokens": 5},
        1: {"sum": -0.8, "mean": -0.2, "min": -0.5, "tokens": 4},
        2: {"sum": -9.0, "mean": -1.5, "min": -6.0, "tokens": 6},
        3: {"sum": -0.1, "mean": -0.1, "min": -0.1, "tokens": 1},
    }
    rows = {r["rule"]: r for r in score_rules(tasks, scores)}
    sure = rows["F T=-1"]
    assert (sure["stops_early"], sure["passed"], sure["won"], sure["lost"]) == (2, 2, 0, 1)
    loose = rows["F T=-10"]
    assert (loose["stops_early"], loose["passed"], loose["won"], loose["lost"]) == (3, 3, 1, 1)
    assert rows["R2 T=-40 (shipped, reverse)"]["stops_early"] == 3
    assert "| F T=-1 | 2/4 |" in render(list(rows.values()), "cmd", 4)
