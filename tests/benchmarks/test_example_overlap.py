"""The shipped worked examples stay clear of the benchmark's requests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.accuracy.fixtures import load_tasks
from benchmarks.accuracy.overlap import THRESHOLD, closest, jaccard, main, words

from conch.command.examples import Example, corpus


def test_no_shipped_example_is_a_near_copy_of_a_benchmark_request() -> None:
    requests = {task.index: task.nl for task in load_tasks()}
    found = closest(corpus(), requests)
    assert len(found) == len(corpus())
    too_close = [(c.example.request, c.request) for c in found if c.overlap >= THRESHOLD]
    assert too_close == []


def test_a_copied_request_is_caught() -> None:
    task = load_tasks()[42]
    copied = (Example(task.nl.upper() + "!", "true"), Example("unrelated words here", "true"))
    found = closest(copied, {task.index: task.nl, 0: "something else entirely"})
    assert found[0].overlap == 1.0 and found[0].task == task.index
    assert found[1].overlap < THRESHOLD


def test_overlap_is_shared_words_over_all_words() -> None:
    assert jaccard(words("list the files"), words("List files here")) == 2 / 4
    assert jaccard(frozenset(), frozenset()) == 0.0


def test_command_line_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--top", "1"]) == 0
    assert main(["--threshold", "0.0", "--top", "0"]) == 1
    assert "rephrase or drop them" in capsys.readouterr().out
