"""How much several conch runs on the same tasks agree, and what voting among them would score:
per run, the tasks passed at the normalised level; the tasks some run passed (an upper bound
for any way of choosing among the runs' answers); the tasks every run passed; and the score of
a majority vote among the runs' answers, grouped as conch's own candidates vote (what they
printed, whitespace- and order-insensitive; a command that printed nothing by its text), a
tie going to the first report.

    python -m benchmarks.experiments.accuracy.agreement \\
        benchmarks/experiments/accuracy/results/accuracy-clean258-conch.json \\
        benchmarks/experiments/accuracy/results/accuracy-clean258-conch-earlier-run.json ...

No model and no sandbox: the reports' recorded outputs and verdicts are compared. Only the
clean tasks every report holds count.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def vote_key(row: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    """What an answer did, for voting: its output lines normalised and sorted, or the command."""
    lines = sorted(" ".join(line.split()) for line in (row.get("stdout") or "").splitlines())
    lines = [line for line in lines if line]
    return ("printed", tuple(lines)) if lines else ("command", (row["command"],))


def agreement(runs: list[dict[int, dict[str, Any]]]) -> dict[str, Any]:
    """Pass counts per run, of the union, of every run, and of a majority vote."""
    tasks = sorted(set.intersection(*(set(run) for run in runs)))
    voted = 0
    for task in tasks:
        answers = [run[task] for run in runs]
        groups: dict[tuple[str, tuple[str, ...]], list[int]] = {}
        for position, answer in enumerate(answers):
            groups.setdefault(vote_key(answer), []).append(position)
        winner = max(groups.values(), key=lambda group: (len(group), -group[0]))
        voted += bool(answers[winner[0]]["normalised"])
    return {
        "tasks": len(tasks),
        "runs": [sum(bool(run[t]["normalised"]) for t in tasks) for run in runs],
        "some_run": sum(any(run[t]["normalised"] for run in runs) for t in tasks),
        "every_run": sum(all(run[t]["normalised"] for run in runs) for t in tasks),
        "majority_vote": voted,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", type=Path, nargs="+", help="conch reports on the same tasks")
    args = parser.parse_args(argv)
    if len(args.reports) < 2:
        parser.error("give at least two reports to compare")
    runs = []
    for path in args.reports:
        try:
            rows = json.loads(path.read_text())["rows"]
            runs.append(
                {r["task"]: r for r in rows if r["clean"] and r["tool"].startswith("conch")}
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            parser.error(f"{path}: not a readable accuracy report ({exc})")
    result = agreement(runs)
    total = result["tasks"]
    if not total:
        parser.error("the reports share no clean task")

    def share(count: int) -> str:
        return f"{count}/{total} ({count / total:.1%})"

    for path, passed in zip(args.reports, result["runs"], strict=True):
        print(f"{path.name}: {share(passed)}")
    print(f"passed by some run: {share(result['some_run'])}")
    print(f"passed by every run: {share(result['every_run'])}")
    print(f"majority vote among the runs' answers: {share(result['majority_vote'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
