"""How much choosing among conch's candidates could still gain: for every task where conch
tried more than one command, run each distinct candidate as the benchmark runs the final
answer and count the tasks where some candidate matches a reference at the normalised level
but the chosen command does not.

    python -m benchmarks.experiments.accuracy.headroom \\
        benchmarks/experiments/accuracy/results/accuracy-clean258-conch.json

No model is involved (the judged level is not computed). A small number says the candidates
conch samples rarely hold a better answer than the one it picks, so better selection cannot
raise the pass rate much; better first answers can.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.accuracy.compare import compare
from benchmarks.accuracy.fixtures import load_tasks
from benchmarks.accuracy.run import Runner


def headroom(rows: list[dict[str, Any]], runner: Runner) -> dict[str, Any]:
    """Tasks with several candidates, and those where an unchosen candidate would pass."""
    tasks = {task.index: task for task in load_tasks()}
    several = 0
    missed: list[dict[str, Any]] = []
    for row in rows:
        commands = list(dict.fromkeys(t["command"] for t in row.get("trials") or []))
        if len(commands) < 2:
            continue
        several += 1
        if row["normalised"]:
            continue
        task = tasks[row["task"]]
        references = runner.refs(task)
        for command in commands:
            levels = compare(task, references, runner.run(task, command), None, command)
            if levels.normalised:
                missed.append({"task": task.index, "chosen": row["command"], "passing": command})
                break
    return {"tasks": len(rows), "several_candidates": several, "missed": missed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path, help="a conch report JSON from benchmarks.accuracy")
    args = parser.parse_args(argv)
    try:
        rows = [r for r in json.loads(args.report.read_text())["rows"] if r["tool"] == "conch"]
    except (OSError, ValueError, KeyError) as exc:
        parser.error(f"{args.report}: not a readable accuracy report ({exc})")
    with tempfile.TemporaryDirectory(prefix="conch-headroom-") as scratch:
        result = headroom(rows, Runner(Path(scratch)))
    print(f"{result['tasks']} tasks; {result['several_candidates']} with several candidates")
    print(f"an unchosen candidate passes where the chosen one fails: {len(result['missed'])}")
    for miss in result["missed"]:
        print(f"  #{miss['task']}: chose {miss['chosen']!r}, {miss['passing']!r} passes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
