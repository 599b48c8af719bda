"""Why a failed run of the agent benchmark failed: one cause per failed task, from a fixed
list, read from what the row recorded (the judge's messages, the final answer, the changed
files, the tool trace), and the report's "Why tasks failed" section that counts them.

The causes, tried in this order (the first that fits wins): refusal (a work task declined,
or a needed command refused with nothing done after); loop (out of steps or time, or a
repeated call with nothing done after); wrong tool (a tool used for what it cannot do);
wrong arguments (the right tool with the wrong path, pattern or content); wrong command (a
bash, evaluate or do command that failed, or whose wrong output became the result); partial work
(some items done, others not); never verified (the tool said the result was empty or
invalid and the agent ended anyway); wrong final answer (an answer the tool output already
contradicted, or a claim of work never done); other (with the reason in the evidence).

The rules were fitted to the failing traces of real runs; where a careful reader names an
earlier mistake they refine the plain order: deleting a file the agent was given fails the
run even when a loop followed, and a file written by hand after the command meant to make
it failed is the command's fault. Rows without a trace are judged from the answer, the
judge's messages and the changed files alone; their evidence says "(no trace)".

A ``do`` step (the agent says a step in plain language, conch's command pipeline writes the
command, tries it on a copy and runs it) is a command whose words are the agent's and whose
command line is conch's: a ``do`` whose command failed, computed the wrong thing, never wrote
the file its step named, or left the files wrong is a wrong command; a ``do`` refused by the
policy, or for which no command came, is refused; one whose trial run changed no file, with
the agent ending on it, was never verified; a step after the agent made a script that names
neither the script nor how to run it (conch has to guess) is wrong arguments.

The reading of a trace is in ``causes_trace``, the rules in ``causes_rules``.

``python -m benchmarks.agent.causes FILE.json`` prints the section for a results file.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from benchmarks.agent.causes_rules import RULES
from benchmarks.agent.causes_trace import Row, Run, Step, short, steps

__all__ = ["CAUSES", "RULES", "Step", "cause", "cause_table", "main", "steps"]

CAUSES: tuple[str, ...] = ("refusal", "loop", "wrong tool", "wrong arguments", "wrong command")
CAUSES += ("partial work", "never verified", "wrong final answer", "other")


def cause(row: Row) -> tuple[str, str]:
    """The cause of a failed row (one of ``CAUSES``) and the evidence, quoting the trace."""
    if row.get("passed"):
        raise ValueError(f"{row.get('task')} passed; only a failed run has a cause")
    run = Run(row)
    for rule in RULES:
        if found := rule(run):
            return found
    return "other", f"no rule fits the trace; judge: {short('; '.join(run.failures[:2]), 100)}"


def cause_table(rows: Sequence[Row]) -> str:
    """The Markdown section "Why tasks failed": per agent the count of each cause, then one
    line per failed task with its kind, cause and evidence."""
    agents = list(dict.fromkeys(str(r["agent"]) for r in rows))
    judged = {id(r): cause(r) for r in rows if not r["passed"]}
    out = [
        "## Why tasks failed",
        "",
        "One cause per failed task, read from the judge's messages, the final answer and the",
        "tool trace by `benchmarks/agent/causes.py`: the causes are tried in the order of the",
        "columns and the first that fits wins. *(no trace)* marks a row judged without a trace.",
        "",
        "| agent | failed | " + " | ".join(CAUSES) + " |",
        "|---|---|" + "---|" * len(CAUSES),
    ]
    for agent in agents:
        found = Counter(judged[id(r)][0] for r in rows if r["agent"] == agent and id(r) in judged)
        cells = [agent, str(sum(found.values()))] + [str(found[c]) for c in CAUSES]
        out.append("| " + " | ".join(cells) + " |")
    for agent in agents:
        failed = [r for r in rows if r["agent"] == agent and id(r) in judged]
        if failed:
            out += ["", f"### {agent}", "", "| task | kind | cause | evidence |", "|---" * 4 + "|"]
        for row in failed:
            name, evidence = judged[id(row)]
            cell = " ".join(evidence.split()).replace("|", "\\|")
            out.append(f"| {row['task']} | {row['kind']} | {name} | {cell} |")
    return "\n".join([*out, ""])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Print the 'Why tasks failed' section.")
    parser.add_argument("file", type=Path, help="a benchmarks/results/agent-*.json file")
    rows = json.loads(parser.parse_args(argv).file.read_text(encoding="utf-8"))["rows"]
    print(cause_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
