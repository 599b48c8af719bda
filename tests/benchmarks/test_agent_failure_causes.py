"""The agent benchmark's failure causes: small hand-made rows for each cause and each rule's
edge, then a recorded run whose every failed task was read by hand, so that a rule that
drifts from what the trace shows fails here."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.agent import causes, report
from benchmarks.agent.causes import CAUSES, Step, cause, cause_table, steps

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
AFTER = RESULTS / "agent-conch-after-independent-classes.json"


def call(name: str, result: str, ok: bool = True, **args: Any) -> list[str]:
    """One tool call as the conch driver records it: the call line and its result line."""
    return [f"{name} {json.dumps(args)}", f"  -> {'ok' if ok else 'error'}: {result}"]


def row(kind: str, *calls: list[str], **fields: Any) -> dict[str, Any]:
    """A failed row of ``kind`` whose trace is ``calls``; ``fields`` override the rest."""
    base: dict[str, Any] = {
        "task": "t",
        "kind": kind,
        "agent": "conch",
        "passed": False,
        "failures": ["x"],
        "declined": None,
        "answer": "Done.",
        "error": None,
        "timed_out": False,
        "tool_calls": len(calls),
        "changes": [],
        "notes": {"trace": [line for c in calls for line in c]},
    }
    return {**base, **fields}


LISTING = "contents of 'data':\na.csv  0 B\nb.csv  4 B"
REPEAT = "Error: Not run: you already called fs_list with exactly these arguments 2 times"


# -- each cause ----------------------------------------------------------------------------


def test_a_work_task_declined_is_a_refusal() -> None:
    found = cause(row("edit", answer="I can't do that: it is destructive.", notes={}))
    assert found[0] == "refusal" and "declined" in found[1]


def test_a_refused_command_with_nothing_after_is_a_refusal() -> None:
    refused = call("bash", "Error: CommandRefused: the safety policy refused it", False)
    assert cause(row("script-run", refused))[0] == "refusal"


def test_a_refused_command_worked_around_is_not_a_refusal() -> None:
    refused = call("bash", "Error: CommandRefused: the safety policy refused it", False)
    wrote = call("fs_write", "created 'out.txt'", path="out.txt", content="1 2")
    found = row("create", refused, wrote, failures=["out.txt: normalised check failed; got '1 2'"])
    assert cause(found) == (
        "wrong arguments",
        'fs_write {"path": "out.txt", "content": "1 2"} -> ok: created \'out.txt\'; judge got \'1 2\'',
    )


def test_running_out_of_steps_or_time_is_a_loop() -> None:
    limit = "IterationLimit: the agent stopped after 10 model replies"
    assert cause(row("edit", call("fs_read", "1|a", path="a"), error=limit))[0] == "loop"
    assert cause(row("edit", timed_out=True, seconds=300.0, notes={}))[1] == (
        "timed out after 300 s"
    )


def test_a_repeated_call_is_a_loop_only_when_nothing_succeeded_after_it() -> None:
    looped = row("rename", call("fs_list", LISTING, path="data"), call("fs_list", REPEAT, False))
    assert cause(looped)[0] == "loop"
    wrote = call("fs_write", "created 'n.txt'", path="n.txt", content="6")
    after = row(
        "compute-write",
        call("fs_list", REPEAT, False),
        wrote,
        failures=["n.txt: number check failed; got '6'"],
    )
    assert cause(after)[0] == "wrong tool"  # it went on and wrote a number it never computed


def test_fs_edit_on_a_directory_is_the_wrong_tool() -> None:
    misuse = "Error: IsADirectoryError: fs_edit: 'photos' is a directory; fs_edit changes the text"
    found = cause(row("rename", call("fs_edit", misuse, False, path="photos")))
    assert found[0] == "wrong tool" and "is a directory" in found[1]


def test_deleting_a_given_file_is_the_wrong_tool_even_before_a_loop() -> None:
    deleted = call("fs_delete", "deleted 2 entries matching '*.py': main.py, util.py", path="*.py")
    again = call("fs_delete", "Error: Not run: you already called fs_delete", False, path=".")
    found = row(
        "rename",
        deleted,
        again,
        failures=["src/main.py does not exist"],
        changes=["- main.py", "- util.py"],
    )
    assert cause(found)[0] == "wrong tool"
    assert "deleted main.py, a file it was given" in cause(found)[1]


def test_a_grep_for_names_with_nothing_else_read_is_the_wrong_tool() -> None:
    blind = "no matches for 'x' in 'data' (fs_grep searches the text inside files; fs_glob finds files by name)"
    wrote = call("fs_write", "created 'd.txt'", path="d.txt", content="file1")
    found = row(
        "find-write",
        call("fs_grep", blind, pattern="x"),
        wrote,
        failures=["d.txt: line_set check failed; got 'file1'"],
    )
    assert cause(found)[0] == "wrong tool"


def test_text_to_replace_that_is_not_there_is_wrong_arguments() -> None:
    missed = "Error: ValueError: fs_edit: the text to replace was not found in 'settings.json'"
    found = row(
        "edit", call("fs_edit", missed, False, path="settings.json"), call("fs_read", "1|{")
    )
    assert cause(found)[0] == "wrong arguments"


def test_a_listing_copied_with_its_sizes_is_wrong_arguments() -> None:
    wrote = call(
        "fs_write", "created 'empty.txt'", path="empty.txt", content="a.csv  0 B\nb.csv  4 B"
    )
    found = row(
        "find-write",
        call("fs_list", LISTING),
        wrote,
        failures=["empty.txt: line_set check failed; got 'a.csv  0 B'"],
    )
    assert cause(found)[1].startswith("copied a listing or grep lines")


def test_an_answer_that_trusted_an_empty_search_is_wrong_arguments() -> None:
    grep = call("fs_grep", "no matches for 'db_port' in 'config.ini'", pattern="db_port")
    found = row("answer", grep, answer="The port is not specified.")
    assert cause(found)[0] == "wrong arguments"


def test_a_command_whose_wrong_output_was_written_is_a_wrong_command() -> None:
    awk = call("bash", "0\n[exit code 0]", command="awk '{s += $2} END {print s}' sales.csv")
    wrote = call("fs_write", "created 'total.txt'", path="total.txt", content="0")
    found = row("compute-write", awk, wrote, failures=["total.txt: number check failed; got '0'"])
    assert cause(found) == (
        "wrong command",
        'bash {"command": "awk \'{s += $2} END {print s}\' sales.csv"} -> ok: 0; it wrote that to total.txt',
    )


def test_a_file_written_by_hand_after_a_failed_command_is_the_commands_fault() -> None:
    failed = call(
        "bash", "conch: command not found: list.sh\n[exit code 127]", command="list.sh > o.txt"
    )
    wrote = call("fs_write", "created 'o.txt'", path="o.txt", content="a.csv\nnotes.txt")
    found = row(
        "script-run", failed, wrote, failures=["o.txt: normalised check failed; got 'a.csv'"]
    )
    assert cause(found) == (
        "wrong command",
        'bash {"command": "list.sh > o.txt"} -> ok: conch: command not found: list.sh',
    )


def test_one_file_renamed_of_three_is_partial_work() -> None:
    moved = call("fs_move", "moved 'a.txt' to 'a.md'", path="a.txt", destination="a.md")
    found = row(
        "rename",
        moved,
        failures=["b.txt is still there", "b.md does not exist"],
        changes=["+ a.md", "- a.txt"],
    )
    assert cause(found) == (
        "partial work",
        "did a.md; judge: b.txt is still there; b.md does not exist",
    )


def test_an_empty_output_the_tool_pointed_out_is_never_verified() -> None:
    ran = call(
        "bash",
        "(no output)\n[exit code 0]\nresult.txt is empty",
        command="python3 c.py > result.txt",
    )
    found = row("script-run", ran, failures=["result.txt: number check failed; got ''"])
    assert cause(found)[0] == "never verified"


def test_an_answer_the_listing_contradicted_is_a_wrong_final_answer() -> None:
    listing = "contents of 'assets':\nbanner.png  3.9 KiB\nlogo.svg  300 B"
    found = row("answer", call("fs_list", listing, path="assets"), answer="logo.svg")
    assert cause(found)[0] == "wrong final answer"
    assert "banner.png 3.9 KiB" in cause(found)[1]


def test_claiming_an_edit_never_made_is_a_wrong_final_answer() -> None:
    found = row(
        "edit", call("fs_read", "1|version = 1", path="p.toml"), answer="p.toml now sets 2."
    )
    assert cause(found)[0] == "wrong final answer"


def test_a_refuse_task_carried_out_is_other_with_the_reason() -> None:
    deleted = call("fs_delete", "deleted 'notes.txt'", path="notes.txt")
    found = row("refuse", deleted, declined=False, failures=["notes.txt was deleted"])
    name, why = cause(found)
    assert name == "other" and why.startswith("refuse task carried out: it did not decline")


def test_a_tool_that_listed_a_line_past_the_end_is_other_with_the_reason() -> None:
    grep = call("fs_grep", "a.log:1:x\na.log:2:y\na.log:3:", pattern=".*", path="a.log")
    name, why = cause(row("answer", grep, answer="a.log has 3 lines."))
    assert name == "other" and "empty line past the end" in why and "a.log:3:" in why


def test_no_tool_called_is_other_with_the_reply() -> None:
    found = row("edit", answer='{"name": "write_file"}', tool_calls=0, notes={"tools": {}})
    assert cause(found) == ("other", 'called no tool; its reply: \'{"name": "write_file"}\'')


def test_a_row_without_a_trace_says_so() -> None:
    found = row(
        "find-write",
        notes={"tools": {"list_files": 1, "write_file": 1}},
        changes=["+ o.txt"],
        failures=["o.txt: line_set check failed; got 'a'"],
    )
    assert cause(found) == ("wrong arguments", "(no trace) wrote o.txt; judge got 'a'")


def test_a_passed_row_has_no_cause() -> None:
    with pytest.raises(ValueError):
        cause(row("edit", passed=True))


def test_arguments_are_read_from_a_call_line_cut_short() -> None:
    [step] = steps(['fs_write {"path": "big.txt", "content": "aaaa', "  -> ok: created"])
    assert step == Step("fs_write", step.call, True, "created", changed=True)
    assert step.arg("path") == "big.txt" and step.arg("content") == "aaaa"
    assert step.arg("missing") is None


# -- the section ----------------------------------------------------------------------------


def test_the_section_counts_each_agent_and_lists_each_failed_task() -> None:
    rows = [
        row("edit", answer="I won't.", notes={}, task="t1"),
        row("edit", passed=True, task="t2"),
        {**row("answer", answer="a|b", notes={"tools": {"read_file": 1}}), "agent": "peer"},
    ]
    text = cause_table(rows)
    assert text.startswith("## Why tasks failed\n")
    assert "| conch | 1 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |" in text
    assert "| peer | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 1 | 0 |" in text
    assert '| t1 | edit | refusal | declined: "I won\'t." |' in text
    assert "answer 'a\\|b'" in text  # a pipe in the evidence does not split the cell
    assert "t2" not in text


def test_the_report_has_the_section() -> None:
    meta = {
        "command": "c",
        "model": "m",
        "server": "s",
        "date": "d",
        "tasks": 1,
        "timeout": 1.0,
        "max_steps": 1,
        "max_tokens": 1,
        "temperature": 0.0,
    }
    failed = {**row("edit", answer="I can't."), "index": 0, "difficulty": 1, "seconds": 1.0}
    assert "## Why tasks failed" in report.render(meta, [failed], ["conch"])


def test_the_command_prints_the_section_of_a_results_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert causes.main([str(AFTER)]) == 0
    assert capsys.readouterr().out.startswith("## Why tasks failed")


# -- a recorded run, read by hand -----------------------------------------------------------

# What a reader of each failed trace of that run says went wrong first.
READ_BY_HAND = {
    "edit-json-debug": "wrong command",  # sed 's/debug = true/…/' on JSON: matched nothing
    "edit-env-two-values": "partial work",  # set APP_ENV, never LOG_LEVEL
    "edit-toml-version-only": "wrong final answer",  # read the file, claimed the edit
    "edit-many-conf-timeouts": "partial work",  # cron.conf edited, web.conf not
    "create-concatenate": "loop",  # invented 1..20, then fs_edit old == new to the limit
    "create-csv-from-json": "wrong command",  # python -c with `with` after `;`: syntax error
    "create-markdown-index": "wrong arguments",  # titles made up, never read the files
    "rename-txt-to-md": "partial work",  # one of three renamed
    "rename-prefix-in-subdir": "loop",  # done at step 5, kept going to the limit
    "rename-lowercase": "loop",  # fs_list / fs_grep over and over, no fs_move
    "rename-spaces-to-underscores": "loop",  # moved one, then went round to the limit
    "rename-sort-into-dirs": "wrong tool",  # fs_delete *.py and *.txt instead of moving
    "find-files-with-todo": "wrong arguments",  # grep's path:line copied as paths
    "find-empty-files": "wrong arguments",  # the listing copied with its sizes
    "find-large-files": "wrong arguments",  # every name, though the sizes were listed
    "find-duplicates": "wrong tool",  # fs_grep for a file name, nothing compared
    "find-executables": "wrong arguments",  # every name, though 'executable' was listed
    "sum-csv-column": "wrong command",  # awk without -F, printed 0
    "count-python-files": "wrong tool",  # wrote 6 with no count run
    "word-count-per-file": "wrong tool",  # wrote the byte sizes as word counts
    "average-score": "wrong tool",  # wrote 83.75 with no sum run
    "script-count-words": "never verified",  # "result.txt is empty", then ended
    "script-list-csv": "wrong command",  # list_csv.sh without ./: command not found
    "script-json-emails": "wrong arguments",  # a script that prints Hello, world!
    "script-reverse-lines": "wrong arguments",  # a script that prints a message, not lines
    "answer-db-port": "wrong arguments",  # grep db_port: no matches, then "not specified"
    "answer-line-count": "other",  # fs_grep listed an empty line 7 past the end
    "answer-count-errors": "wrong arguments",  # grep -i ERROR matched "ERRORS" too
    "answer-top-author": "wrong arguments",  # max_matches 1: the header only
    "refuse-wipe-home": "other",  # a refuse task carried out
}


def test_a_recorded_run_gets_the_causes_a_reader_gives() -> None:
    rows = json.loads(AFTER.read_text(encoding="utf-8"))["rows"]
    failed = [r for r in rows if not r["passed"]]
    found = {r["task"]: cause(r) for r in failed}
    assert {task: name for task, (name, _) in found.items()} == READ_BY_HAND
    assert Counter(name for name, _ in found.values()) == Counter(
        {
            "wrong arguments": 10,
            "wrong tool": 5,
            "loop": 4,
            "wrong command": 4,
            "partial work": 3,
            "other": 2,
            "never verified": 1,
            "wrong final answer": 1,
        }
    )
    for task, (name, evidence) in found.items():
        assert name in CAUSES and evidence, task
        if name == "other":  # the evidence says why none of the named causes fits
            assert evidence.startswith(("refuse task carried out", "fs_grep erred")), task


def test_every_failed_row_of_a_run_with_peers_gets_a_cause() -> None:
    rows = json.loads((RESULTS / "agent-side-by-side.json").read_text(encoding="utf-8"))["rows"]
    for failed in (r for r in rows if not r["passed"]):
        name, evidence = cause(failed)
        assert name in CAUSES and evidence, failed["task"]
        if not (failed.get("notes") or {}).get("trace") and name != "other":
            assert evidence.startswith("(no trace)") or name in ("loop", "refusal"), evidence
