"""Start-up time of the commands typed most, next to the floor and the peers.

Run: python benchmarks/speed/startup.py [--runs N] [--out benchmarks/results/speed-startup.json]

Every command runs N times as a fresh process, round-robin (so a burst of load on the machine
hits every command alike), after one warm-up run each. Reported: median, min and max wall
time; the ratios of `conch --help` to `python3 -c pass`, `sgpt --help` and `llm --help`
measured in the same run; and the ten slowest imports of `conch --help` from
`python -X importtime`. The peers come from their own venv (benchmarks/accuracy/setup_peers.sh)
and are left out with a note when it is missing.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PEERS_BIN = ROOT / "benchmarks" / ".work" / "peers-venv" / "bin"


def cases() -> tuple[dict[str, list[str]], list[str]]:
    """The commands to time, and notes on the ones that are missing."""
    conch = shutil.which("conch") or str(Path(sys.executable).parent / "conch")
    found = {
        "python3 -c pass": [sys.executable, "-c", "pass"],
        "conch --help": [conch, "--help"],
        "conch help safety": [conch, "help", "safety"],
        "conch check -- ls": [conch, "check", "--", "ls"],
        "conch check --json -- rm -rf /": [conch, "check", "--json", "--", "rm -rf /"],
    }
    notes = []
    for peer in ("sgpt", "llm"):
        path = PEERS_BIN / peer
        if path.exists():
            found[f"{peer} --help"] = [str(path), "--help"]
        else:
            notes.append(f"{peer} not measured: {path} missing (run setup_peers.sh)")
    return found, notes


def run_once(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return (time.perf_counter() - start) * 1000


def measure(commands: dict[str, list[str]], runs: int) -> dict[str, dict[str, float]]:
    """Round-robin timing: every command once per round, N rounds after one warm-up round."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    for round_ in range(runs + 1):
        for name, argv in commands.items():
            elapsed = run_once(argv)
            if round_:
                times[name].append(elapsed)
    return {
        name: {
            "median_ms": round(statistics.median(values), 1),
            "min_ms": round(min(values), 1),
            "max_ms": round(max(values), 1),
        }
        for name, values in times.items()
    }


_IMPORTTIME = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|\s*(\S.*)$")


def slowest_imports(conch_argv: list[str], top: int = 10) -> list[dict[str, object]]:
    """The imports of `conch --help` with the largest cumulative time (one run)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "conch", *conch_argv[1:]],
        capture_output=True,
        text=True,
        check=False,
    )
    rows = []
    for line in done.stderr.splitlines():
        match = _IMPORTTIME.match(line)
        if match:
            rows.append((int(match.group(2)), int(match.group(1)), match.group(3).rstrip()))
    rows.sort(reverse=True)
    return [{"module": m, "cumulative_us": c, "self_us": s} for c, s, m in rows[:top]]


def run(runs: int) -> dict[str, Any]:
    """Time every command ``runs`` times; the report (also what ``--out`` holds)."""
    commands, notes = cases()
    results = measure(commands, runs)
    help_ms = results["conch --help"]["median_ms"]
    ratios = {
        f"conch --help / {name}": round(help_ms / results[name]["median_ms"], 3)
        for name in ("python3 -c pass", "sgpt --help", "llm --help")
        if name in results
    }
    return {
        "benchmark": "startup",
        "command": f"python benchmarks/speed/startup.py --runs {runs}",
        "runs": runs,
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {platform.system()} {platform.release()}",
        "results": results,
        "ratios": ratios,
        "slowest_imports_of_conch_help": slowest_imports(commands["conch --help"]),
        "notes": notes,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "results" / "speed-startup.json"
    )
    args = parser.parse_args(argv)
    report = run(args.runs)
    results, ratios = report["results"], report["ratios"]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    width = max(len(n) for n in results)
    for name, r in results.items():
        print(
            f"{name:<{width}}  median {r['median_ms']:7.1f} ms  (min {r['min_ms']}, max {r['max_ms']})"
        )
    for name, ratio in ratios.items():
        print(f"{name}: {ratio}")
    for note in report["notes"]:
        print(note)


if __name__ == "__main__":
    main()
