"""What the command line adds around conch's pipeline on a warm request.

Run: python benchmarks/speed/cli_overhead.py [--rounds 5] [--config FILE] [--out FILE.json]

The same requests, in the same scratch directory, answered two ways, alternately: by a fresh
``conch --print --quiet --no-history REQUEST`` process through the warm model service, and by
the pipeline that process builds, called in this process (``benchmarks/speed/profile.py``)
through the same service. The model's part is the same both ways (greedy answers, the
prompt cache warm), so the difference is what the command line costs: starting Python,
imports, reading the settings, the platform facts, connecting to the service, printing.
``request_time.py`` adds it to the pipeline's own times measured among each task's files.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.speed.profile import profile  # noqa: E402

# Requests that work in a scratch directory with a few files, so each is answered the same
# way every time (nothing they name is missing).
REQUESTS = (
    "print the name of this machine",
    "show the current date and time",
    "list the files in this directory",
    "print the working directory",
    "count the lines in notes.txt",
    "show the first line of notes.txt",
    "how much free memory is there",
    "show the kernel version",
)


def conch_binary() -> str:
    return str(Path(sys.executable).with_name("conch"))


def cli_seconds(request: str, work: Path) -> tuple[float, str]:
    argv = [conch_binary(), "--print", "--quiet", "--no-history", request]
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=work, capture_output=True, text=True, check=False)
    return time.perf_counter() - start, done.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--config", type=Path, help="a conch config file (default: yours)")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--limit", type=int, default=None, help="only the first N requests")
    args = parser.parse_args(argv)
    requests = REQUESTS[: args.limit]
    if args.config is not None:
        os.environ["CONCH_CONFIG"] = str(args.config.resolve())
    subprocess.run([conch_binary(), "daemon", "start"], check=True, capture_output=True)
    rows: dict[str, dict[str, list[float]]] = {r: {"cli": [], "pipeline": []} for r in requests}
    commands: dict[str, set[str]] = {r: set() for r in requests}
    with tempfile.TemporaryDirectory(prefix="conch-cli-overhead-") as tmp:
        work = Path(tmp)
        (work / "notes.txt").write_text("first\nsecond\nthird\n", encoding="utf-8")
        (work / "data.csv").write_text("a,b\n1,2\n", encoding="utf-8")
        for request in requests:  # one warm-up each: the prompt cache holds the same prefix
            cli_seconds(request, work)
        for round_ in range(args.rounds):
            for request in requests:
                seconds, printed = cli_seconds(request, work)
                rows[request]["cli"].append(seconds)
                commands[request].add(printed)
                [row] = profile([request], work)
                rows[request]["pipeline"].append(row["total_s"])
                commands[request].add(str(row["command"]))
            print(f"round {round_ + 1} of {args.rounds} done", file=sys.stderr)
    per_request = {
        r: {
            "cli_median_s": round(statistics.median(v["cli"]), 3),
            "pipeline_median_s": round(statistics.median(v["pipeline"]), 3),
            "overhead_s": round(statistics.median(v["cli"]) - statistics.median(v["pipeline"]), 3),
            "commands": sorted(commands[r]),
        }
        for r, v in rows.items()
    }
    overheads = [v["overhead_s"] for v in per_request.values()]
    report = {
        "command": "python benchmarks/speed/cli_overhead.py " + " ".join(argv or sys.argv[1:]),
        "rounds": args.rounds,
        "median_overhead_s": round(statistics.median(overheads), 3),
        "min_overhead_s": min(overheads),
        "max_overhead_s": max(overheads),
        "same_command_both_ways": sum(1 for v in per_request.values() if len(v["commands"]) == 1),
        "requests": per_request,
    }
    text = json.dumps(report, indent=2)
    if args.out is not None:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "requests"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
