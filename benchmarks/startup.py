"""Start-up time of the commands typed most: `conch --help` and `conch check -- ls`.

Run: python benchmarks/startup.py [--runs N] [--out benchmarks/results/startup.json]
Each command is run N times as a fresh process; the report gives median, min and max wall
time, next to `python -c pass` as the floor any Python CLI pays.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def measure(argv: list[str], runs: int) -> dict[str, float]:
    times = []
    for _ in range(runs + 1):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append((time.perf_counter() - start) * 1000)
    times = times[1:]  # the first run warms the OS file cache
    return {
        "median_ms": round(statistics.median(times), 1),
        "min_ms": round(min(times), 1),
        "max_ms": round(max(times), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "results" / "startup.json"
    )
    args = parser.parse_args()
    conch = shutil.which("conch") or str(Path(sys.executable).parent / "conch")
    cases = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "conch --help": [conch, "--help"],
        "conch help safety": [conch, "help", "safety"],
        "conch check -- ls": [conch, "check", "--", "ls"],
        "conch check --json -- rm -rf /": [conch, "check", "--json", "--", "rm -rf /"],
    }
    results = {name: measure(argv, args.runs) for name, argv in cases.items()}
    report = {
        "benchmark": "startup",
        "command": f"python benchmarks/startup.py --runs {args.runs}",
        "runs": args.runs,
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {platform.system()} {platform.release()}",
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    width = max(len(n) for n in results)
    for name, r in results.items():
        print(
            f"{name:<{width}}  median {r['median_ms']:7.1f} ms  (min {r['min_ms']}, max {r['max_ms']})"
        )


if __name__ == "__main__":
    main()
