"""Cold and warm one-shot latency on a fixed 50-task subset of the accuracy benchmark.

Run: python benchmarks/speed/latency.py [--tasks 50] [--review N] [--warm-only]
        [--defaults [--review-stop never|worked] [--set SECTION.KEY=VALUE ...]] [--task-files]
        [--out benchmarks/results/speed-latency.json]

Each request is one fresh `conch --print --quiet --unsafe REQUEST` process, timed from spawn
to exit (the printed command), with validation and dry runs off so the model is what is
measured, and one answer per request (`generation.review: 1`; `--review 3` measures conch's
default of three answers and their scores instead):

* cold: `--no-daemon`, so the process loads the model and reads the whole prompt itself;
* warm: through the warm model service, started (and its model loaded) before timing.

With ``--defaults`` each request is ``conch --print --quiet REQUEST`` with conch's default
settings, as a user runs it: safe mode, dry runs, validation, three reviewed answers with the
early stop (``--review-stop never`` turns the early stop off, as before it existed).

Requests run in an empty scratch directory, unless ``--task-files``: then each runs in its
task's own file tree (the accuracy benchmark's fixture), so dry runs see the files the request
is about, as a user's requests do.

The subset is fixed: every fifth clean NL2SH-ALFA task, the first N of them. Also reported:
the service's memory (resident set size) after the warm requests.
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
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.accuracy.fixtures import build_fixtures, load_tasks  # noqa: E402

CONFIG = "validation:\n  enabled: false\ngeneration:\n  dry_run: false\n  review: {review}\n"


def subset(count: int) -> list[tuple[int, str]]:
    """Every fifth clean task, the first ``count`` of them: (task index, request)."""
    return [(t.index, t.nl) for t in subset_tasks(count)]


def subset_tasks(count: int) -> list[Any]:
    """The tasks of ``subset`` themselves (with their fixture tree ids)."""
    clean = [t for t in load_tasks() if t.clean]
    return clean[::5][:count]


def changed_settings(review_stop: str | None, changes: list[str]) -> dict[str, Any]:
    """The config (as JSON, which YAML reads) for ``--defaults``: the defaults with
    ``--review-stop`` and each ``--set SECTION.KEY=VALUE`` (VALUE read as YAML)."""
    import yaml

    config: dict[str, Any] = {}
    if review_stop:
        config.setdefault("generation", {})["review_stop"] = review_stop
    for change in changes:
        path, sep, value = change.partition("=")
        section, dot, key = path.partition(".")
        if not sep or not dot or not section or not key:
            raise SystemExit(f"--set {change}: write SECTION.KEY=VALUE")
        config.setdefault(section, {})[key] = yaml.safe_load(value)
    return config


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    return time.perf_counter() - start, done.returncode, done.stdout.strip() or done.stderr[-200:]


def summary(values: list[float]) -> dict[str, float]:
    return {
        "median_s": round(statistics.median(values), 3),
        "min_s": round(min(values), 3),
        "max_s": round(max(values), 3),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=50)
    parser.add_argument("--review", type=int, default=1, choices=(1, 2, 3))
    parser.add_argument("--warm-only", action="store_true", help="skip the cold requests")
    parser.add_argument("--defaults", action="store_true", help="conch's default settings")
    parser.add_argument("--review-stop", choices=("never", "worked"), help="with --defaults")
    parser.add_argument(
        "--task-files", action="store_true", help="run each request in its task's file tree"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="with --defaults: one setting changed (a YAML value), e.g. "
        "generation.review_stop_forward=-1.5; repeatable",
    )
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "results" / "speed-latency.json"
    )
    args = parser.parse_args(argv)
    conch = shutil.which("conch") or str(Path(sys.executable).parent / "conch")
    tasks = subset_tasks(args.tasks)
    requests = [(t.index, t.nl) for t in tasks]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="conch-latency-") as tmp:
        work = Path(tmp)
        trees = build_fixtures(work / "trees") if args.task_files else {}
        where = {t.index: trees.get(t.fs, work) for t in tasks}
        config = work / "config.yaml"
        if args.defaults:
            config.write_text(json.dumps(changed_settings(args.review_stop, args.set)) + "\n")
        else:
            config.write_text(CONFIG.format(review=args.review), encoding="utf-8")
        env = {**os.environ, "CONCH_CONFIG": str(config), "NO_COLOR": "1"}
        env.pop("CONCH_DAEMON", None)
        base = [conch, "--print", "--quiet", "--no-history"]
        if not args.defaults:
            base.append("--unsafe")
        subprocess.run([conch, "daemon", "stop"], env=env, capture_output=True, check=False)
        for index, request in requests:
            if args.warm_only:
                rows.append({"task": index, "request": request})
                continue
            seconds, code, out = timed([*base, "--no-daemon", request], env, where[index])
            rows.append(
                {
                    "task": index,
                    "request": request,
                    "cold_s": round(seconds, 3),
                    "cold_exit": code,
                    "cold_command": out,
                }
            )
            print(f"cold #{index}: {seconds:.2f} s", flush=True)
        started = subprocess.run(
            [conch, "daemon", "start"], env=env, capture_output=True, text=True, check=False
        )
        if started.returncode != 0:
            raise SystemExit(f"conch daemon start failed: {started.stderr.strip()}")
        for row in rows:
            seconds, code, out = timed([*base, row["request"]], env, where[row["task"]])
            row.update(warm_s=round(seconds, 3), warm_exit=code, warm_command=out)
            print(f"warm #{row['task']}: {seconds:.2f} s", flush=True)
        status = subprocess.run(
            [conch, "daemon", "status", "--json"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        service = json.loads(status.stdout) if status.returncode == 0 else None
        subprocess.run([conch, "daemon", "stop"], env=env, capture_output=True, check=False)
    cold = None if args.warm_only else summary([r["cold_s"] for r in rows])
    warm = summary([r["warm_s"] for r in rows])
    command = f"python benchmarks/speed/latency.py --tasks {args.tasks}"
    command += f" --review {args.review}" if args.review != 1 else ""
    command += " --warm-only" if args.warm_only else ""
    command += " --defaults" if args.defaults else ""
    command += f" --review-stop {args.review_stop}" if args.review_stop else ""
    command += " --task-files" if args.task_files else ""
    command += "".join(f" --set {change}" for change in args.set)
    report = {
        "benchmark": "latency",
        "command": command,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.system()} "
        f"{platform.release()}",
        "settings": "conch's defaults"
        + (f", generation.review_stop {args.review_stop}" if args.review_stop else "")
        + "".join(f", {change}" for change in args.set)
        + ", --print --quiet"
        if args.defaults
        else f"validation off, dry runs off, generation.review {args.review}, "
        "--print --quiet --unsafe",
        "where": "each task's own file tree" if args.task_files else "an empty directory",
        "tasks": [r["task"] for r in rows],
        "cold": cold,
        "warm": warm,
        "warm_over_cold_median": round(warm["median_s"] / cold["median_s"], 3) if cold else None,
        "same_command_warm_and_cold": None
        if cold is None
        else sum(r["cold_command"] == r["warm_command"] for r in rows),
        "service": service,
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({k: report[k] for k in ("cold", "warm", "warm_over_cold_median")}, indent=2))
    if service:
        print(f"service memory: {service.get('rss_bytes')} bytes")


if __name__ == "__main__":
    main()
