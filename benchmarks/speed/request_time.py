"""What a user waits for on a warm request at the default settings, each request among its
task's own files: the pipeline's time per task plus what the command line adds.

    python -m benchmarks.accuracy.run --server URL --tools conch-safe,conch-k2-safe \\
        --tasks "$(python benchmarks/speed/request_time.py --print-tasks)" --fresh --no-judge \\
        --out benchmarks/results/speed-request-pipeline
    python benchmarks/speed/cli_overhead.py --out benchmarks/results/speed-cli-overhead.json
    python benchmarks/speed/request_time.py benchmarks/results/speed-request-pipeline.json \\
        benchmarks/results/speed-cli-overhead.json [--out benchmarks/results/speed-request-time]

Why two measurements: the subset's requests name absolute paths of the benchmark's file trees
(``/testbed/...``). The accuracy harness runs conch's pipeline with its dry runs in the task's
tree mounted as ``/``, so every request meets the files it names, as a user's would; a
``conch`` process on this machine cannot see them, and its dry runs would fail and send every
request down the slowest path. So the pipeline is timed by the harness, in safe mode as
``conch --print`` runs (``conch-safe``: the defaults; ``conch-k2-safe``: two worked examples),
on the model server, one request at a time; and what the command line adds around it
(process start, imports, settings, platform facts, the model service's socket) is measured
by ``cli_overhead.py`` on requests that work anywhere. The estimate of a request's time is
its pipeline time plus the median overhead.

The subset is fixed: every fifth clean NL2SH-ALFA task, the first 50 (``latency.py``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

GOAL_S = 3.0


def subset_indexes() -> list[int]:
    from benchmarks.speed.latency import subset_tasks

    return [t.index for t in subset_tasks(50)]


def summary(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    return {
        "median_s": round(statistics.median(ordered), 2),
        "p25_s": round(ordered[len(ordered) // 4], 2),
        "p75_s": round(ordered[(3 * len(ordered)) // 4], 2),
        "min_s": round(ordered[0], 2),
        "max_s": round(ordered[-1], 2),
    }


def build(pipeline: dict[str, Any], overhead: dict[str, Any]) -> dict[str, Any]:
    wanted = set(subset_indexes())
    cli = float(overhead["median_overhead_s"])
    tools: dict[str, Any] = {}
    for row in pipeline["rows"]:
        if row["task"] not in wanted:
            continue
        entry = tools.setdefault(row["tool"], {"seconds": [], "one_answer": 0, "passed": 0})
        entry["seconds"].append(float(row["seconds"]))
        entry["one_answer"] += len(row.get("trials") or []) <= 1
        entry["passed"] += bool(row.get("normalised"))
    report: dict[str, Any] = {"cli_overhead_s": cli, "goal_s": GOAL_S, "tools": {}}
    for tool, entry in tools.items():
        pipe = entry["seconds"]
        total = [s + cli for s in pipe]
        report["tools"][tool] = {
            "tasks": len(pipe),
            "pipeline": summary(pipe),
            "request": summary(total),
            "under_goal": sum(1 for s in total if s < GOAL_S),
            "one_answer": entry["one_answer"],
            "passed_normalised": entry["passed"],
        }
    return report


def markdown(report: dict[str, Any], sources: list[str]) -> str:
    lines = [
        "# A warm request at the default settings, among its task's files",
        "",
        f"Pipeline: {sources[0]}; command line: {sources[1]} (median overhead "
        f"{report['cli_overhead_s']} s). Request = pipeline + overhead. Goal: under "
        f"{report['goal_s']:g} s at the median.",
        "",
        "| tool | tasks | request median (p25-p75) | pipeline median | under 3 s | "
        "one answer | passed |",
        "|---|---|---|---|---|---|---|",
    ]
    for tool, row in report["tools"].items():
        req, pipe = row["request"], row["pipeline"]
        lines.append(
            f"| {tool} | {row['tasks']} | {req['median_s']} s ({req['p25_s']}-{req['p75_s']}) "
            f"| {pipe['median_s']} s | {row['under_goal']} | {row['one_answer']} "
            f"| {row['passed_normalised']} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pipeline", nargs="?", type=Path, help="the accuracy run's report JSON")
    parser.add_argument("overhead", nargs="?", type=Path, help="cli_overhead.py's JSON")
    parser.add_argument("--out", type=Path, help="write OUT.json and OUT.md")
    parser.add_argument("--print-tasks", action="store_true", help="the subset's task indexes")
    args = parser.parse_args(argv)
    if args.print_tasks:
        print(",".join(str(i) for i in subset_indexes()))
        return 0
    if args.pipeline is None or args.overhead is None:
        parser.error("give the pipeline report and the overhead report")
    pipeline = json.loads(args.pipeline.read_text(encoding="utf-8"))
    overhead = json.loads(args.overhead.read_text(encoding="utf-8"))
    report = build(pipeline, overhead)
    report["command"] = "python benchmarks/speed/request_time.py " + " ".join(argv or sys.argv[1:])
    sources = [str(args.pipeline), str(args.overhead)]
    text = markdown(report, sources)
    if args.out is not None:
        args.out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
        args.out.with_suffix(".md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
