"""What checking adds to a request: help collection (cold, warm), static checks, the dry run
(for write commands, the second run in a throwaway copy of the directory), and the model's
verdict.

    python benchmarks/validation_overhead.py [--model-commands N] [--out FILE]

Cold = an empty help cache; warm = the same commands again. The commands run in a small project
directory made for the purpose (60 entries, the files they name). The model verdict is measured
on the embedded model (loaded once, as a warm service would hold it) with model_check: always,
and the added latency under the default model_check: on_issues is reported per command.
"""

from __future__ import annotations

import argparse
import json
import os
import platform as stdlib_platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from conch.config.paths import Paths
from conch.config.settings import ValidationSettings
from conch.host.platform import detect_platform
from conch.validate import collect_help, programs, static_check, validate

COMMANDS = [
    "ls -la",
    "ls -ljy",
    "find . -name '*.py' | xargs wc -l",
    "tar -czf logs.tar.gz logs",
    "du -sh * | sort -h",
    "grep -rn TODO src",
    "sed -i 's/a/b/g' notes.txt",
    "ps aux --sort=-%mem | head -n 5",
    "df -h --output=source,avail",
    "awk -F, '{print $2}' data.csv",
]


WORK = Path(__file__).resolve().parent / ".work"


def small_project(root: Path) -> Path:
    """The directory the commands run in: the files they name, in a project of 60 entries (a
    write command's dry run copies it)."""
    (root / "logs").mkdir(parents=True)
    (root / "src").mkdir()
    for i in range(20):
        (root / "logs" / f"app-{i}.log").write_text(f"line {i}\n" * 200)
        (root / "src" / f"module_{i}.py").write_text(f"# TODO: {i}\nVALUE = {i}\n")
    (root / "notes.txt").write_text("a note about a bug\n" * 50)
    (root / "data.csv").write_text("id,name\n" + "".join(f"{i},n{i}\n" for i in range(500)))
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "results" / "validation_overhead.json"
    )
    parser.add_argument(
        "--model-commands",
        type=int,
        default=len(COMMANDS),
        help="how many of the commands also get the model verdict (slow: a model call each)",
    )
    args = parser.parse_args()
    from conch.execute.dryrun import SandboxDryRunner

    rows: list[dict[str, Any]] = []
    # The project lives outside /tmp, as a user's directory would: a scratch run from under
    # /tmp also binds every entry of /tmp into its own empty one, which costs more.
    WORK.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory(dir=WORK) as project:
        cache = Path(tmp) / "help-cache"
        workdir = small_project(Path(project) / "project")
        dry_runner = SandboxDryRunner(workdir)
        for command in COMMANDS:
            names = programs(command)
            start = time.perf_counter()
            helps = collect_help(names, ValidationSettings(), cache)
            cold = time.perf_counter() - start
            start = time.perf_counter()
            helps = collect_help(names, ValidationSettings(), cache)
            warm = time.perf_counter() - start
            start = time.perf_counter()
            issues = static_check(command, helps)
            static = time.perf_counter() - start
            dry = dry_runner(command)
            rows.append(
                {
                    "command": command,
                    "programs": names,
                    "help_cold_ms": round(cold * 1000, 1),
                    "help_warm_ms": round(warm * 1000, 1),
                    "static_ms": round(static * 1000, 2),
                    "static_issues": issues,
                    "dry_run_ms": round(dry.seconds * 1000, 1) if dry else None,
                    "dry_run_scratch": dry.scratch if dry else None,
                    "dry_run_outcome": (
                        None
                        if dry is None
                        else "failed"
                        if dry.failed
                        else "wrote"
                        if dry.wrote
                        else "ok"
                    ),
                }
            )
        from conch.config.settings import LocalSettings
        from conch.providers.local.provider import LocalProvider

        provider = LocalProvider(LocalSettings(), Paths.default().cache_dir)
        provider.load()
        context = detect_platform(Paths.default().cache_dir)
        for row in rows[: args.model_commands]:
            command = str(row["command"])
            start = time.perf_counter()
            always = validate(
                command, provider, context, {"model_check": "always"}, cache, "benchmark"
            )
            row["model_call_s"] = round(time.perf_counter() - start, 2)
            row["model_valid"] = always.valid
            row["model_correction"] = always.corrected_command
            start = time.perf_counter()
            default = validate(command, provider, context, None, cache, "benchmark")
            row["default_added_s"] = round(time.perf_counter() - start, 3)
            row["default_model_called"] = default.model_called
        provider.close()
    summary = {
        "help_cold_median_ms": statistics.median(r["help_cold_ms"] for r in rows),
        "help_warm_median_ms": statistics.median(r["help_warm_ms"] for r in rows),
        "static_median_ms": statistics.median(r["static_ms"] for r in rows),
        "dry_run_median_ms": (
            statistics.median(r["dry_run_ms"] for r in rows if r["dry_run_ms"] is not None)
            if any(r["dry_run_ms"] is not None for r in rows)
            else None
        ),
        "scratch_dry_run_median_ms": (
            statistics.median(r["dry_run_ms"] for r in rows if r["dry_run_scratch"])
            if any(r["dry_run_scratch"] for r in rows)
            else None
        ),
        "model_call_median_s": statistics.median(
            r["model_call_s"] for r in rows if "model_call_s" in r
        ),
        "default_added_median_s": statistics.median(
            r["default_added_s"] for r in rows if "default_added_s" in r
        ),
        "default_model_calls": sum(1 for r in rows if r.get("default_model_called")),
        "model_commands": args.model_commands,
        "commands": len(rows),
    }
    report = {
        "benchmark": "validation_overhead",
        "command": "python benchmarks/validation_overhead.py",
        "machine": f"{stdlib_platform.machine()}, {os.cpu_count()} CPUs",
        "summary": summary,
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
