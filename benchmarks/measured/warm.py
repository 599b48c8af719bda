"""A warm request at the default settings: what a user waits for on `conch --print REQUEST`
with the model warm, each request among its task's own files.

Two measurements (benchmarks/speed/request_time.py says why): conch's pipeline at its
defaults in safe mode (the accuracy harness's `conch-safe`, dry runs in the task's tree, one
request at a time on the engine server), and what the command line adds around it
(benchmarks/speed/cli_overhead.py: `conch --print` against the same pipeline in-process,
through the model service). A request's time is its pipeline time plus the median overhead.
The subset is the latency benchmark's: every fifth clean NL2SH-ALFA task, the first 50.
"""

from __future__ import annotations

import statistics
from typing import Any

from benchmarks.accuracy import run as accuracy
from benchmarks.measured import publish
from benchmarks.speed import cli_overhead, request_time

NAME = "warm"
TASKS = 50
ROUNDS = 5


def first_answer_seconds(pipeline: dict[str, Any]) -> list[float]:
    """The pipeline's times of the requests that stopped after their first answer."""
    return sorted(
        float(r["seconds"])
        for r in pipeline["rows"]
        if r["tool"] == "conch-safe" and len(r.get("trials") or []) <= 1
    )


def summary(pipeline: dict[str, Any], overhead: dict[str, Any]) -> dict[str, Any]:
    found = request_time.build(pipeline, overhead)
    first = first_answer_seconds(pipeline)
    found["first_answer_worked"] = {
        "requests": len(first),
        "min_s": first[0] if first else None,
        "median_s": round(statistics.median(first), 2) if first else None,
        "max_s": first[-1] if first else None,
    }
    return found


def markdown(found: dict[str, Any], sources: list[str]) -> str:
    text = request_time.markdown(found, sources)
    first = found["first_answer_worked"]
    cli = found["cli_overhead_s"]
    if first["requests"]:
        text += (
            f"\nThe {first['requests']} requests whose first answer worked (no review) took "
            f"{first['min_s']}-{first['max_s']} s in the pipeline (median {first['median_s']} s), "
            f"plus {cli} s of command line.\n"
        )
    return text


def headline(found: dict[str, Any]) -> list[str]:
    row = found["tools"].get("conch-safe")
    if row is None:
        return ["no conch-safe rows: nothing measured"]
    first = found["first_answer_worked"]
    pipe, request = row["pipeline"], row["request"]
    reached = "reached" if request["median_s"] < found["goal_s"] else "not reached"
    first_part = (
        f"{first['min_s']}-{first['max_s']} s when the first answer works (pipeline); "
        if first["requests"]
        else ""
    )
    return [
        f"a warm request, default settings: {first_part}{pipe['median_s']} s pipeline median "
        f"among each task's files on {row['tasks']} tasks, plus {found['cli_overhead_s']} s of "
        f"command line (goal {found['goal_s']:g} s: {reached})"
    ]


def main(argv: list[str] | None = None) -> int:
    parser = publish.parser(NAME, __doc__)
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        help="only the first N tasks (and N requests for the command line)",
    )
    parser.add_argument(
        "--rounds", type=int, default=ROUNDS, help="command-line rounds (default %(default)s)"
    )
    args = parser.parse_args(argv)
    partial = args.limit is not None or args.rounds < ROUNDS
    run = publish.begin(NAME, argv, args.out, partial)
    tasks = request_time.subset_indexes()[:TASKS][: args.limit]
    work = publish.WORK / NAME
    work.mkdir(parents=True, exist_ok=True)
    pipeline_stem, overhead_path = work / "pipeline", work / "cli-overhead.json"
    with publish.defaults() as defaults:
        subset = ",".join(map(str, tasks))
        harness = ["--tools", "conch-safe", "--tasks", subset, "--fresh", "--no-judge"]
        harness += ["--out", str(pipeline_stem)]
        with publish.runner_argv(harness):
            accuracy.main(harness)
        limit = ["--limit", str(args.limit)] if args.limit is not None else []
        cli = ["--rounds", str(args.rounds), "--config", str(defaults), *limit]
        cli_overhead.main([*cli, "--out", str(overhead_path)])
    pipeline = publish.read_json(pipeline_stem.with_name(pipeline_stem.name + ".json"))
    found = summary(pipeline, publish.read_json(overhead_path))
    sources = ["the accuracy harness's conch-safe on the subset", "cli_overhead.py"]
    run.write(markdown(found, sources), {**found, "pipeline_rows": pipeline["rows"]})
    return run.finish(headline(found))
