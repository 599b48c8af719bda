"""Early exit from the review: answers read from a report's trials, stopping rules, scoring."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.experiments.early_exit import (
    Rule,
    TaskView,
    cost,
    evaluate,
    held_out,
    main,
    recommend,
    reconstruct_choice,
    review_choice,
    rules,
    split_answers,
    verdicts,
    view,
)


def trial(
    command: str,
    outcome: str = "ok",
    source: str = "greedy",
    examples: str | None = None,
    likelihood: float | None = None,
    **extra: Any,
) -> dict[str, Any]:
    made: dict[str, Any] = {
        "command": command,
        "source": source,
        "decision": "confirm",
        "outcome": outcome,
        "exit_code": 1 if outcome == "failed" else 0,
        **extra,
    }
    if examples is not None:
        made["examples"] = examples
    if likelihood is not None:
        made["likelihood"] = likelihood
    return made


def row(
    task: int, trials: list[dict[str, Any]], command: str, passed: bool, nl: str = "list files"
) -> dict[str, Any]:
    return {"task": task, "tool": "conch", "nl": nl, "clean": True, "trials": trials,
            "command": command, "normalised": passed}  # fmt: skip


def three_answers(
    first: list[dict[str, Any]], final: str = "ls", passed: bool = True
) -> dict[str, Any]:
    """A row whose first answer is ``first`` and whose answers 2 and 3 chose ``ls -a``/``ls``."""
    later = [
        trial("ls -a", examples="larger", likelihood=-12.0),
        trial("ls", examples="plain", likelihood=-10.0),
    ]
    return row(0, first + later, final, passed)


def named(name: str) -> Rule:
    return next(r for r in rules() if r.name == name)


def test_trials_split_into_answers_by_how_their_examples_were_found() -> None:
    trials = [trial("a"), trial("b", source="sample"), trial("c", examples="larger")]
    trials.append(trial("d", examples="plain"))
    groups = split_answers(trials)
    assert [name for name, _ in groups] == ["shipped", "larger", "plain"]
    assert [len(group) for _, group in groups] == [2, 1, 1]


def test_the_first_answers_choice_is_the_trial_the_review_scored() -> None:
    first = [
        trial("cat x", "failed"),
        trial("ls -l", source="sample", likelihood=-20.0),
        trial("ls -l", source="sample"),
    ]
    item = view(three_answers(first))
    assert item.first.command == "ls -l"
    assert item.first.likelihood == -20.0
    assert item.first.doubtful
    assert item.first.chosen == item.first.reconstructed == 1
    assert [a.examples for a in item.answers] == ["shipped", "larger", "plain"]


def test_the_rebuilt_choice_takes_the_best_class_then_the_vote_then_the_earliest() -> None:
    trials = [
        trial("a", "failed"),
        trial("b", "empty", source="sample"),
        trial("c", "ok", source="sample"),
        trial("c", "ok", source="sample"),
    ]
    assert reconstruct_choice(trials) == (2, True)
    # Silent non-scratch runs all print nothing: one vote group, so the earliest wins.
    silent = [trial("x", "empty"), trial("y", "empty", source="sample")]
    silent.append(trial("y", "empty", source="sample"))
    assert reconstruct_choice(silent) == (0, True)
    # Scratch runs vote with the command: two identical ones beat an earlier one.
    scratch = [trial("rm a", scratch=True), trial("rm b", scratch=True, source="sample")]
    scratch.append(trial("rm b", scratch=True, source="sample"))
    assert reconstruct_choice(scratch) == (1, True)
    # Different printing commands: their outputs decide the vote, and the report lacks them.
    printing = [trial("ls", "empty"), trial("ls -1", source="sample"), trial("ls -a", "ok")]
    assert reconstruct_choice(printing) == (1, False)


def test_a_rejected_candidate_is_never_chosen_over_an_allowed_one() -> None:
    trials = [trial("rm -rf /", "untried", decision="reject"), trial("ls", "failed")]
    assert reconstruct_choice(trials) == (1, True)


def test_the_review_prefers_outcome_then_likelihood_then_the_earliest() -> None:
    first = [trial("ls -x", "empty", likelihood=-5.0)]
    first += [trial("ls -y", "empty", source="sample") for _ in range(3)]
    item = view(three_answers(first))
    assert review_choice(item.answers) == 2  # ok beats empty; -10 beats -12
    tie = row(
        1,
        [trial("ls", likelihood=-8.0), trial("ls -a", examples="larger", likelihood=-8.0)],
        "ls",
        True,
    )
    assert review_choice(view(tie).answers) == 0


def test_stopping_rules_on_the_first_answer() -> None:
    ok_greedy = view(row(0, [trial("ls", likelihood=-30.0)], "ls", True, nl="list the files"))
    ok_sampled = view(
        row(
            1,
            [trial("lx", "failed"), trial("ls", source="sample", likelihood=-5.0)],
            "ls",
            True,
        )
    )
    empty = view(row(2, [trial("true", "empty", likelihood=-1.0)], "true", False))
    scratch = view(row(3, [trial("touch a", scratch=True, likelihood=-9.0)], "touch a", True))
    tasks = [ok_greedy, ok_sampled, empty, scratch]

    def stops(name: str) -> list[bool]:
        return [named(name).stops(item) for item in tasks]

    assert stops("R0") == [False] * 4
    assert stops("R1") == [True, True, False, True]
    assert stops("R1-printed") == [True, True, False, False]
    assert stops("R2 T=-20") == [False, True, False, True]
    assert stops("R3") == [True] * 4
    assert stops("R4") == [True, False, False, True]
    # -30 over the request's 3 words + 1 is -7.5 a word.
    assert ok_greedy.per_word == -7.5
    assert stops("R2/w t=-4") == [False, True, False, True]
    assert named("R2 T=-20").scores_first and not named("R1").scores_first


def test_a_rule_scores_the_first_answer_where_it_stops_and_the_review_elsewhere() -> None:
    stops_right = view(row(0, [trial("ls", likelihood=-3.0)], "ls -a", False))
    stops_wrong = view(row(1, [trial("ls", likelihood=-3.0)], "ls -l", True))
    goes_on = view(row(2, [trial("cat", "failed", likelihood=-3.0)], "ls", True))
    tasks = [stops_right, stops_wrong, goes_on]
    first = {0: True, 1: False, 2: False}
    full = {0: False, 1: True, 2: True}
    result = evaluate(named("R1"), tasks, first, full)
    assert (result.n, result.passed, result.stops) == (3, 2, 2)
    assert (result.won, result.lost) == ([0], [1])
    assert result.p == 1.0
    never = evaluate(named("R0"), tasks, first, full)
    assert (never.passed, never.stops, never.won, never.lost) == (2, 0, [], [])


def test_costs_count_answers_calls_scores_and_dry_runs() -> None:
    first = [
        trial("lx", "failed"),
        trial("ly", "failed", source="sample", likelihood=-4.0),
        trial("ly", "failed", source="sample"),
    ]  # every candidate failed: a repair was asked for, and came back with nothing new
    item = view(three_answers(first))
    assert item.first.repair_asked
    assert item.first.generations == 4
    whole = cost(item.answers, scored=True)
    assert (whole.answers, whole.generations, whole.scores, whole.dry_runs) == (3, 6, 3, 4)
    alone = cost(item.answers[:1], scored=False)
    assert (alone.answers, alone.generations, alone.scores, alone.dry_runs) == (1, 4, 0, 2)
    result = evaluate(named("R3"), [item], {0: False}, {0: True})
    saved = result.to_json()["saved"]
    assert saved == {"answers": 2, "generations": 2, "scores": 3, "model_calls": 5, "dry_runs": 2}


def test_verdicts_reuse_the_recorded_one_when_the_first_answer_is_final() -> None:
    same = view(row(0, [trial("ls", likelihood=-1.0)], "ls", True))
    other = view(row(1, [trial("ls", likelihood=-1.0)], "ls -a", False))
    asked: list[tuple[int, str]] = []

    def judge(task: int, command: str) -> bool:
        asked.append((task, command))
        return command == "ls"

    found = verdicts([same, other], judge)
    assert found.first == {0: True, 1: True}
    assert found.first_source == {0: "recorded", 1: "judged now"}
    assert found.final_now == {0: True, 1: False}
    assert asked == [(0, "ls"), (1, "ls -a"), (1, "ls")]
    assert verdicts([same], judge, rejudge_final=False).final_now == {}


def test_the_picks_and_the_held_out_check() -> None:
    tasks: list[TaskView] = []
    first: dict[int, bool] = {}
    full: dict[int, bool] = {}
    for i in range(40):
        likelihood = -10.0 if i % 2 else -70.0
        tasks.append(view(row(i, [trial("ls", likelihood=likelihood)], "ls -a", True)))
        first[i] = bool(i % 2)  # likely first answers pass, unlikely ones fail
        full[i] = True
    outcomes = [evaluate(r, tasks, first, full) for r in rules()]
    picks = recommend(outcomes)
    assert picks.no_net_loss is not None and picks.no_net_loss.rule.name == "R2 T=-60"
    assert picks.no_net_loss.stops == 20
    checked = held_out(tasks, first, full, families=("R2",), splits=20)
    assert checked[0]["mean_change_in_passes"] == 0.0
    assert checked[0]["mean_share_stopping_early"] == pytest.approx(0.5, abs=0.2)
    assert held_out(tasks, first, full, families=("R2",), splits=20) == checked


def test_a_report_without_trials_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"rows": [row(0, [], "ls", True)]}))
    with pytest.raises(SystemExit) as exit_info:
        main([str(report), "--out", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    assert "not a readable conch report with trials" in capsys.readouterr().err
