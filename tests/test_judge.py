"""What a dry run printed, held to what the request asked for (``conch.command.judge``), and
the pipeline's repair of a command that ran but does not fit."""

from __future__ import annotations

from pathlib import Path

import pytest

from cliutil import DEBIAN
from conch.command.examples import nearest
from conch.command.generate import select_examples
from conch.command.intent import Intent, classify
from conch.command.judge import mismatch
from conch.command.propose import Pipeline
from conch.command.request import RequestContext
from conch.command.shorten import MAX_SHORTENED, shortened
from conch.config.settings import AllowedProgram, PromptConfig, Settings
from conch.execute.dryrun import DryRun
from conch.messages import Message
from conch.policy import PolicyContext
from conch.providers.scripted import ScriptedProvider

LS_LONG = (
    b"total 1144\n"
    b"-rw-r--r-- 1 u u 700000 Nov 27 22:15 backup.tar\n"
    b"-rw-r--r-- 1 u u 180000 Nov 27 22:15 report.pdf\n"
    b"drwxr-xr-x 3 u u   4096 Nov 27 22:15 logs\n"
)
FILES_ONLY = (
    b"-rw-r--r-- 1 u u 700000 Nov 27 22:15 backup.tar\n"
    b"-rw-r--r-- 1 u u 180000 Nov 27 22:15 report.pdf\n"
)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "logs").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "backup.tar").write_bytes(b"x" * 100)
    (tmp_path / "notes.txt").write_text("n", encoding="utf-8")
    return tmp_path


def test_largest_files_may_not_print_the_total_line_or_directories(tree: Path) -> None:
    request = "list the five largest files in this directory"
    assert mismatch(request, LS_LONG, tree) is not None
    assert mismatch(request, b"total 8\n" + FILES_ONLY, tree) is not None
    assert mismatch(request, b"backup.tar\nlogs\nnotes.txt\n", tree) is not None
    assert mismatch(request, FILES_ONLY, tree) is None
    assert mismatch(request, b"backup.tar\nnotes.txt\n", tree) is None


def test_a_plain_list_of_files_or_files_and_folders_is_not_held_to_files_only(tree: Path) -> None:
    assert mismatch("list files in the current directory", LS_LONG, tree) is None
    assert mismatch("show the largest files and folders here", LS_LONG, tree) is None
    assert mismatch("how many files are in this folder", b"3\n", tree) is None


def test_each_directory_may_not_list_files(tree: Path) -> None:
    request = "show disk usage of each directory here"
    every_file = b"4.0K\t./logs\n4.0K\t./notes.txt\n8.0K\t./backup.tar\n16K\t.\n"
    assert mismatch(request, every_file, tree) is not None
    assert mismatch(request, b"4.0K\tlogs/\n4.0K\tsrc/\n", tree) is None
    assert mismatch(request, b"4.0K\t./logs\n4.0K\t./src\n16K\t.\n", tree) is None
    assert mismatch("show disk usage of each file and directory", every_file, tree) is None


def test_a_count_must_show_its_numbers(tree: Path) -> None:
    request = "count unique IPs in access.log by frequency"
    assert mismatch(request, b"203.0.113.7\n198.51.100.23\n", tree) is not None
    assert mismatch(request, b"      9 203.0.113.7\n      5 198.51.100.23\n", tree) is None
    assert mismatch(request, b"5\n", tree) is None  # one line: a total is a count


def test_without_a_directory_only_the_output_is_read() -> None:
    assert mismatch("list the largest files", b"backup.tar\nlogs\n", None) is None
    assert mismatch("list the largest files", LS_LONG, None) is not None


def _dry(command: str) -> DryRun:
    outputs = {"ls -lS | head -n 5": LS_LONG, "ls -lS | grep '^-' | head -n 5": FILES_ONLY}
    return DryRun(command, 0, outputs[command], "")


def test_a_command_that_runs_but_does_not_fit_is_repaired_with_the_reason(tree: Path) -> None:
    seen: list[list[Message]] = []

    def model(messages: list[Message], options: object) -> str:
        seen.append(list(messages))
        return "ls -lS | head -n 5" if len(seen) == 1 else "ls -lS | grep '^-' | head -n 5"

    settings = Settings.model_validate(
        {"generation": {"review": 1}, "validation": {"enabled": False}}
    )
    pipeline = Pipeline(
        ScriptedProvider.from_function(model),
        settings,
        DEBIAN,
        PolicyContext(),
        dry_runner=_dry,
        cwd=tree,
    )
    proposal = pipeline.propose(RequestContext("list the five largest files in this directory"))
    assert proposal.command == "ls -lS | grep '^-' | head -n 5"
    assert [t.outcome for t in proposal.trials] == ["mismatch", "ok"]
    assert [t.source for t in proposal.trials] == ["greedy", "repair"]
    assert "not files" in seen[1][-1].content and "total" in seen[1][-1].content
    assert proposal.trials_json()[0]["mismatch"] == proposal.trials[0].mismatch


COUNTS = "awk '{print $1}' access.log | sort | uniq -c | sort -rn"
NO_COUNTS = COUNTS + " | awk '{print $2}'"


def test_a_pipeline_is_shortened_by_its_last_stages_longest_first() -> None:
    assert shortened(NO_COUNTS + " | head -n 3") == [NO_COUNTS, COUNTS, COUNTS.rsplit(" | ", 1)[0]]
    assert len(shortened("a | b | c | d | e | f")) == MAX_SHORTENED
    assert shortened("ls -l") == []
    assert shortened("ls | wc -l && echo done") == []  # a list, not one pipeline
    assert shortened("for f in *; do echo $f; done | sort") == []  # a loop is no plain stage
    assert shortened("ls |") == []  # does not parse


def test_a_repair_that_still_drops_what_was_asked_is_shortened(tree: Path) -> None:
    # The model adds a stage that throws the counts away, and keeps it when told.
    replies = [NO_COUNTS, NO_COUNTS + " | head -n 10"]
    outputs = {
        NO_COUNTS: b"203.0.113.7\n198.51.100.23\n",
        NO_COUNTS + " | head -n 10": b"203.0.113.7\n198.51.100.23\n",
        COUNTS: b"      9 203.0.113.7\n      5 198.51.100.23\n",
    }
    ran: list[str] = []

    def dry(command: str) -> DryRun:
        ran.append(command)
        return DryRun(command, 0, outputs[command], "")

    settings = Settings.model_validate(
        {"generation": {"review": 1}, "validation": {"enabled": False}}
    )
    pipeline = Pipeline(
        ScriptedProvider.of(*replies), settings, DEBIAN, PolicyContext(), dry_runner=dry, cwd=tree
    )
    proposal = pipeline.propose(RequestContext("count unique IPs in access.log by frequency"))
    assert proposal.command == COUNTS
    assert [(t.source, t.outcome) for t in proposal.trials] == [
        ("greedy", "mismatch"),
        ("repair", "mismatch"),
        ("shortened", "ok"),
    ]
    assert ran == [NO_COUNTS, NO_COUNTS + " | head -n 10", COUNTS]


def test_a_whitelist_finds_the_examples_of_its_programs() -> None:
    prompt = PromptConfig(tools=[AllowedProgram(name="jq")])
    request = "names of users older than 30"
    assert not any(e.command.startswith("jq") for e in nearest(request, 4))
    examples = select_examples(prompt, request, 4)
    assert len(examples) == 4 and all(e.command.startswith("jq ") for e in examples)
    # A request sharing no word with any of them still gets examples of the program.
    assert len(select_examples(prompt, "zzz qqq", 4)) == 4


def test_number_words_and_biggest_find_the_same_examples() -> None:
    assert nearest("show the five biggest files here", 1) == nearest(
        "show the 5 largest files here", 1
    )


def test_a_question_about_files_shown_to_the_model_is_a_question() -> None:
    assert classify("which of these is the build script", shown=True) is Intent.QUESTION
    assert classify("is this valid JSON", shown=True) is Intent.QUESTION
    assert classify("which of these is the build script") is Intent.TASK
    # Something to measure stays a command, shown or not.
    assert classify("which of these is the largest", shown=True) is Intent.TASK
    assert classify("list the files here", shown=True) is Intent.TASK
