"""The agent benchmark's failure causes for ``do`` steps (the agent says a step in plain
language, conch's pipeline writes the command, tries it on a copy and runs it): small
hand-made rows for each rule, then the recorded run that acted through ``do`` first, whose
every failed task was read by hand."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.agent.causes import CAUSES, cause, steps
from test_agent_failure_causes import call
from test_agent_failure_causes import row as failed_row

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "experiments" / "agent" / "results"
ACT_FIRST = RESULTS / "agent-conch-act-first.json"
WORKED = "worked in a throwaway copy of this directory"


def do(
    step: str, command: str, trial: str, output: str = "(no output)\n[exit code 0]"
) -> list[str]:
    """A ``do`` call whose command ran: its command, its trial run and the real output."""
    return call("do", f"command: {command}\ntrial run on a copy: {trial}\n{output}", step=step)


def row(kind: str, *calls: list[str], **fields: Any) -> dict[str, Any]:
    """A failed row of the act-first agent (``test_agent_failure_causes.row``)."""
    return failed_row(kind, *calls, **{"agent": "conch-act-first", **fields})


# -- reading a do step ---------------------------------------------------------------------


def test_a_do_step_gives_its_command_trial_run_and_files_made() -> None:
    [step] = steps(do("count the lines", "wc -l a.txt > n.txt", f"{WORKED}: created n.txt"))
    assert step.command() == "wc -l a.txt > n.txt"
    assert step.trial() == f"{WORKED}: created n.txt"
    assert step.clean and step.changed and not step.failed
    assert step.made() == ["n.txt"]


def test_a_do_that_only_printed_changed_nothing() -> None:
    [step] = steps(do("list the csv files", "ls *.csv", "worked, printed 2 lines", "a.csv\nb.csv"))
    assert step.clean and not step.changed and step.made() == []


def test_a_do_whose_trial_run_failed_failed_though_its_output_was_cut() -> None:
    [step] = steps(
        do("rename", "mv a b/c", "failed (exit 1): mv: cannot move 'a' to 'b/c': No suc", "")
    )
    assert step.failed and not step.clean


def test_a_do_with_no_command_is_refused_not_failed() -> None:
    no = "Error: ValueError: no command came for this step; say it another way"
    [step] = steps(call("do", no, False, step="do it"))
    assert step.refused and not step.failed


# -- each rule -----------------------------------------------------------------------------


def test_a_do_whose_command_failed_is_a_wrong_command_showing_why() -> None:
    failed = do(
        "rename the files with spaces",
        "find docs -exec rename 's/ /_/g' {} \\;",
        "worked, with a warning: find: 'rename': No such file or directory",
    )
    name, why = cause(row("rename", failed, failures=["docs/a b.txt is still there"]))
    assert name == "wrong command"
    assert "command: find docs" in why and "No such file or directory" in why


def test_a_do_refused_with_nothing_after_is_a_refusal() -> None:
    refused = call(
        "do",
        "Error: CommandRefused: conch wrote `rm x`, which did not run: the safety policy refused it",
        False,
        step="remove x",
    )
    assert cause(row("edit", refused))[0] == "refusal"
    no = call("do", "Error: ValueError: no command came for this step", False, step="x")
    assert cause(row("edit", no))[0] == "refusal"


def test_a_do_repeated_with_nothing_after_is_a_loop() -> None:
    again = call("do", "Error: Not run: you already called do with exactly these arguments", False)
    assert cause(row("edit", do("x", "ls", "worked, printed 1 line", "a"), again))[0] == "loop"


def test_a_do_that_wrote_the_wrong_result_is_a_wrong_command() -> None:
    wc = do("write the line count to n.txt", "wc -l p.txt > n.txt", f"{WORKED}: created n.txt")
    found = row("compute-write", wc, failures=["n.txt: number check failed; got '7 p.txt'"])
    name, why = cause({**found, "changes": ["+ n.txt"]})
    assert (name, why.split(":")[0]) == ("wrong command", "computed the wrong thing")


def test_a_do_edit_that_changed_nothing_is_a_wrong_command() -> None:
    sed = do(
        "set the port to 9", "sed -i 's/port = 8$/port = 9/' c.ini", f"{WORKED}: changed c.ini"
    )
    found = row("edit", sed, failures=["c.ini: normalised check failed; got 'port = 80'"])
    assert cause(found)[1].startswith("changed nothing in c.ini: do")


def test_a_do_whose_trial_changed_no_file_and_the_agent_ended_is_never_verified() -> None:
    sed = do("set the port to 9", "sed -i 's/x/y/' c.ini", f"{WORKED}: changed no file")
    found = row("edit", sed, failures=["c.ini: normalised check failed; got 'port = 80'"])
    assert cause(found)[0] == "never verified"
    mv = do("rename the files", "for f in *.TXT; do :; done", f"{WORKED}: changed no file")
    name, why = cause(row("rename", mv, failures=["a.txt does not exist"]))
    assert name == "never verified" and why.endswith("ended with nothing changed")


def test_a_file_the_step_named_but_its_command_never_wrote_is_the_commands_fault() -> None:
    printed = do(
        "write the word counts to counts.txt", "wc -w t/*", "worked, printed 2 lines", "2 t/a"
    )
    wrote = call("fs_write", "created 'counts.txt'", path="counts.txt", content="a 12")
    found = row(
        "compute-write",
        printed,
        wrote,
        failures=["counts.txt: normalised check failed; got 'a 12'"],
        changes=["+ counts.txt"],
    )
    name, why = cause(found)
    assert name == "wrong command" and why.startswith("the step named counts.txt")


def test_a_step_that_does_not_name_the_script_it_runs_is_wrong_arguments() -> None:
    wrote = call("fs_write", "created 's.py'", path="s.py", content="print(1)")
    guessed = do(
        "Run it and save the output to o.txt.",
        "./it > o.txt",
        f"{WORKED}: created o.txt",
        "[stderr]\nconch: command not found: ./it\n[exit code 0]",
    )
    found = row(
        "script-run",
        wrote,
        guessed,
        failures=["o.txt: number check failed; got ''", "`python3 s.py` exited with 1"],
        changes=["+ s.py", "+ o.txt"],
    )
    name, why = cause(found)
    assert name == "wrong arguments"
    assert why.startswith("the step after making s.py does not name it: do")


def test_a_step_that_names_the_script_is_not_blamed_for_it() -> None:
    wrote = call("fs_write", "created 's.py'", path="s.py", content="print(2)")
    ran = do(
        "Run s.py and save the output to o.txt.", "python3 s.py > o.txt", f"{WORKED}: created o.txt"
    )
    found = row(
        "script-run",
        wrote,
        ran,
        failures=["`python3 s.py` output: number check failed; got '2'"],
        changes=["+ s.py", "+ o.txt"],
    )
    assert cause(found)[0] == "wrong arguments"
    assert "does not name" not in cause(found)[1]  # the script printed the wrong thing


def test_a_script_copied_from_the_command_conch_wrote_is_a_wrong_command() -> None:
    code = "for i in range(1, 16): print('Fizz' if i % 3 == 0 else i)"
    printed = do("write fizz.py", f'python3 -c "{code}"', "worked, printed 15 lines", "1\n2\nFizz")
    wrote = call("fs_write", "created 'fizz.py'", path="fizz.py", content=code)
    found = row(
        "script-run",
        printed,
        wrote,
        failures=["`python3 fizz.py` output: normalised check failed; got '1\\n2\\nFizz'"],
        changes=["+ fizz.py"],
    )
    name, why = cause(found)
    assert name == "wrong command" and "its code became fizz.py" in why


def test_a_script_the_agent_wrote_that_fails_is_wrong_arguments() -> None:
    wrote = call("fs_write", "created 'r.sh'", path="r.sh", content='echo "x\ntac $1')
    ran = do(
        "Run bash r.sh l.txt and save the output to out.txt",
        "bash r.sh l.txt > out.txt 2>&1",
        "exited 2 in a throwaway copy of this directory: created out.txt",
        "(no output)\n[exit code 2]",
    )
    got = "'r.sh: line 2: unexpected EOF while looking for matching `\"\\''"
    found = row(
        "script-run",
        wrote,
        ran,
        failures=[f"out.txt: normalised check failed; got {got}"],
        changes=["+ r.sh", "+ out.txt"],
    )
    name, why = cause(found)
    assert name == "wrong arguments" and "it fails: out.txt got" in why


def test_a_do_that_left_the_files_wrong_is_a_wrong_command() -> None:
    mv = do(
        "rename the files to lower case",
        'for f in r/*; do mv -- "$f" "$f.txt"; done',
        f"{WORKED}: deleted r/A.CSV; created r/A.CSV.txt",
    )
    found = row(
        "rename",
        mv,
        failures=["r/a.csv does not exist"],
        changes=["- r/A.CSV", "+ r/A.CSV.txt"],
        answer="Renamed them to lower case.",
    )
    name, why = cause(found)
    assert name == "wrong command" and why.startswith("its command left the files wrong")
    assert "trial run on a copy: worked" in why


def test_a_do_that_renamed_one_file_of_two_is_partial_work() -> None:
    mv = do("rename a.txt to a.md", "mv a.txt a.md", f"{WORKED}: deleted a.txt; created a.md")
    found = row(
        "rename",
        mv,
        failures=["b.txt is still there", "b.md does not exist"],
        changes=["+ a.md", "- a.txt"],
    )
    assert cause(found)[0] == "partial work"


def test_an_answer_that_repeats_a_do_output_line_is_a_wrong_command() -> None:
    awk = do(
        "who changed most?",
        "awk -F, '{s += $2} END {print \"most:\" s}' c.csv",
        "worked, printed 1 line",
        "most:355\n[exit code 0]",
    )
    found = row("answer", awk, answer="most:355", failures=["answer lacks 'maria'"])
    assert cause(found)[0] == "wrong command"


# -- the recorded run that acted through do first, read by hand -----------------------------

# What a reader of each failed trace of that run says went wrong first.
READ_BY_HAND = {
    "edit-ini-port": "wrong command",  # sed pattern ^server...8080$ matched nothing
    "edit-env-two-values": "wrong command",  # appended the two lines instead of setting them
    "edit-yaml-image-replicas": "wrong command",  # sed 's/image: 1.4.2/' missed the image line
    "edit-toml-version-only": "wrong command",  # sed for 0.3.0, the file says 0.3.1
    "create-greeting-from-name": "wrong command",  # xargs echo "Hello, ": two spaces, no "!"
    "create-csv-from-json": "wrong command",  # jq '.[]' | awk: JSON lines, not CSV
    "create-json-from-env": "wrong command",  # jq -n on .key/.value: nulls
    "create-markdown-index": "wrong command",  # sed with \2 that is not there: empty index
    "rename-prefix-in-subdir": "wrong command",  # mv to photos/holiday_photos/...: failed
    "rename-lowercase": "wrong command",  # mv "$f" "${f%.txt}.txt": added .txt, no lower case
    "rename-spaces-to-underscores": "wrong command",  # find -exec rename: rename not installed
    "find-duplicates": "wrong command",  # grep -q -f: shared lines, not equal content
    "count-lines": "wrong command",  # wc -l poem.txt > count.txt: "7 poem.txt"
    "word-count-per-file": "wrong command",  # printed the counts, never wrote counts.txt
    "average-score": "wrong command",  # awk print "%.2f\n", ...: print, not printf
    "script-count-words": "wrong arguments",  # "Run it ...": conch ran ulimit -u
    "script-list-csv": "wrong arguments",  # "Make it executable, run it": chmod +x make
    "script-sum-numbers": "wrong arguments",  # "Run it ...": conch ran ./it
    "script-json-emails": "wrong arguments",  # "Run it ...": conch ran ./build.sh
    "script-fizzbuzz": "wrong command",  # the pipeline's one-liner (no FizzBuzz) became the script
    "script-reverse-lines": "wrong arguments",  # its reverse.sh has an unclosed quote
    "answer-db-port": "wrong command",  # grep for every port: 8080 and 5432, answered 8080
    "answer-count-errors": "wrong command",  # grep -c ERROR counts ERRORS too
    "answer-top-author": "wrong command",  # awk summed every line, no author
}


def test_the_recorded_act_first_run_gets_the_causes_a_reader_gives() -> None:
    rows = json.loads(ACT_FIRST.read_text(encoding="utf-8"))["rows"]
    found = {r["task"]: cause(r) for r in rows if not r["passed"]}
    assert {task: name for task, (name, _) in found.items()} == READ_BY_HAND
    assert Counter(name for name, _ in found.values()) == Counter(
        {"wrong command": 19, "wrong arguments": 5}
    )
    for task, (name, evidence) in found.items():
        assert name in CAUSES and ('do {"step"' in evidence or "fs_write {" in evidence), task
