"""Questions vs tasks: the classifier measured on labelled requests."""

from __future__ import annotations

import csv
import time
from pathlib import Path

import pytest

from conch.command.intent import Intent, classify

DATA = Path(__file__).parent / "data"
EXAMPLES = Path(__file__).parents[1] / "src" / "conch" / "command" / "data"


def _table(name: str) -> list[tuple[str, bool, Intent]]:
    with open(DATA / name, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    return [(r["request"], r["piped"] == "1", Intent(r["label"])) for r in rows]


def _accuracy(name: str, what: str) -> tuple[float, list[str]]:
    table = _table(name)
    wrong = [
        f"{'piped ' if piped else ''}{request!r}: want {label.value}"
        for request, piped, label in table
        if classify(request, piped) is not label
    ]
    n, n_ok = len(table), len(table) - len(wrong)
    acc = n_ok / n
    print(f"question classifier, {what}: {n_ok}/{n} = {acc:.1%}")
    return acc, wrong


def test_the_labelled_table_is_large_varied_and_mostly_tasks() -> None:
    table = _table("intent.tsv")
    labels = [label for _, _, label in table]
    assert len(table) >= 150
    assert labels.count(Intent.TASK) > labels.count(Intent.QUESTION) >= 50
    assert sum(piped for _, piped, _ in table) >= 30
    starts = {request.split()[0].lower() for request, _, _ in table}
    assert {"what", "which", "how", "where", "when", "who", "is", "does"} <= starts
    assert len({request for request, _, _ in table}) == len(table)


def test_the_classifier_is_at_least_95_percent_right_on_the_labelled_table() -> None:
    acc, wrong = _accuracy("intent.tsv", "labelled table")
    assert acc >= 0.95, wrong


def test_the_classifier_is_at_least_90_percent_right_on_requests_written_after_the_rules() -> None:
    table = _table("intent-heldout.tsv")
    assert len(table) >= 40
    assert not {r for r, _, _ in table} & {r for r, _, _ in _table("intent.tsv")}
    acc, wrong = _accuracy("intent-heldout.tsv", "held out")
    assert acc >= 0.90, wrong


def test_the_shipped_worked_examples_all_tasks_stay_tasks() -> None:
    requests = [
        line.split("\t", 1)[0]
        for name in ("examples.tsv", "examples-more.tsv")
        for line in (EXAMPLES / name).read_text(encoding="utf-8").splitlines()
        if "\t" in line and not line.startswith("#")
    ]
    questions = [r for r in requests if classify(r) is Intent.QUESTION]
    n_ok = len(requests) - len(questions)
    print(f"question classifier, worked examples: {n_ok}/{len(requests)} tasks")
    assert len(requests) > 4000
    assert n_ok / len(requests) >= 0.995, questions


@pytest.mark.parametrize(
    ("request_", "piped", "intent"),
    [
        ("what does this error mean", True, Intent.QUESTION),
        ("what is using port 8080", False, Intent.TASK),
        ("what is my IP address", False, Intent.TASK),
        ("which process uses the most memory", False, Intent.TASK),
        ("how much disk space is free", False, Intent.TASK),
        ("how many lines are in foo.txt", False, Intent.TASK),
        ("show me the open ports", False, Intent.TASK),
        ("what is the difference between rm and unlink", False, Intent.QUESTION),
        ("is it safe to delete ~/.cache", False, Intent.QUESTION),
        ("explain this output", True, Intent.QUESTION),
    ],
)
def test_the_requests_of_the_brief_land_on_their_side(
    request_: str, piped: bool, intent: Intent
) -> None:
    assert classify(request_, piped) is intent


def test_text_pasted_after_a_colon_counts_as_piped_input() -> None:
    assert classify("what went wrong: make: *** [all] Error 2") is Intent.QUESTION
    assert classify("what is this: No such file or directory") is Intent.QUESTION
    assert classify("what is this") is Intent.QUESTION


def test_fix_it_is_a_task_and_how_do_i_fix_this_a_question() -> None:
    assert classify("fix it", piped=True) is Intent.TASK
    assert classify("how do I fix this", piped=True) is Intent.QUESTION
    assert classify("how do i fix the permissions on deploy.sh") is Intent.TASK


def test_an_instruction_after_the_question_makes_it_a_task() -> None:
    assert classify("what went wrong at boot? show this boot's errors") is Intent.TASK


def test_empty_and_odd_requests_are_tasks() -> None:
    assert classify("") is Intent.TASK
    assert classify("   ?  ") is Intent.TASK
    assert classify("ls -la") is Intent.TASK


def test_classifying_takes_well_under_a_millisecond() -> None:
    requests = [request for request, _, _ in _table("intent.tsv")]
    started = time.perf_counter()
    for request in requests:
        classify(request)
    assert (time.perf_counter() - started) / len(requests) < 0.001
