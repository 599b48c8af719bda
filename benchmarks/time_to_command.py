"""Time from request to printed command on the embedded model.

    python benchmarks/time_to_command.py [--runs 1] [--out benchmarks/results/time_to_command.json]

Two views of the same requests:
- cold process: `conch --print --quiet REQUEST` as a fresh process each time with the model
  in-process (CONCH_DAEMON=0), which pays Python start-up, model load and generation;
- in-process: one loaded model, the library's generate() per request (the generation share).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REQUESTS = [
    "list all files in this directory, including hidden ones",
    "show the ten largest files under the current directory",
    "find all python files modified in the last 2 days",
    "count the lines in every .md file here",
    "show free disk space in human readable units",
    "print the current date in ISO 8601 format",
    "search for the word TODO in all files recursively",
    "create a directory called build",
]


def cold(requests: list[str], runs: int, workdir: Path) -> list[dict[str, object]]:
    conch = shutil.which("conch") or str(Path(sys.executable).parent / "conch")
    rows = []
    for request in requests:
        times = []
        command = ""
        for _ in range(runs):
            start = time.perf_counter()
            out = subprocess.run(
                [conch, "--print", "--quiet", "--no-history", request],
                cwd=workdir,
                capture_output=True,
                text=True,
                check=False,
                env={**os.environ, "CONCH_DAEMON": "0"},
            )
            times.append(time.perf_counter() - start)
            command = out.stdout.strip() or out.stderr.strip()
        rows.append(
            {"request": request, "seconds": round(statistics.median(times), 3), "command": command}
        )
    return rows


def in_process(requests: list[str]) -> dict[str, object]:
    from conch.context import RequestContext
    from conch.generate import generate
    from conch.paths import Paths
    from conch.platform import detect_platform
    from conch.providers.local import LocalProvider
    from conch.settings import LocalSettings, PromptConfig

    provider = LocalProvider(LocalSettings(), Paths.default().cache_dir)
    started = time.perf_counter()
    provider.load()
    load = time.perf_counter() - started
    description = detect_platform(Paths.default().cache_dir).describe()
    rows = []
    for request in requests:
        generated = generate(provider, PromptConfig(), description, RequestContext(request))
        rows.append(
            {
                "request": request,
                "seconds": round(generated.seconds, 3),
                "completion_tokens": generated.usage.completion_tokens,
                "command": generated.command,
            }
        )
    provider.close()
    return {"load_seconds": round(load, 3), "requests": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "results" / "time_to_command.json"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cold_rows = cold(REQUESTS, args.runs, Path(tmp))
    warm = in_process(REQUESTS)
    summary = {
        "cold_process_median_s": round(statistics.median(r["seconds"] for r in cold_rows), 3),  # type: ignore[misc]
        "model_load_s": warm["load_seconds"],
        "generation_median_s": round(statistics.median(r["seconds"] for r in warm["requests"]), 3),  # type: ignore[attr-defined, index]
    }
    report = {
        "benchmark": "time_to_command",
        "command": f"python benchmarks/time_to_command.py --runs {args.runs}",
        "model": "Qwen2.5-Coder-1.5B-Instruct Q4_K_M (embedded)",
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}",
        "summary": summary,
        "cold_process": cold_rows,
        "in_process": warm,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(summary, indent=2))
    for row in cold_rows:
        print(f"{row['seconds']:6.2f} s  {row['request']!r:60} -> {row['command']}")


if __name__ == "__main__":
    main()
