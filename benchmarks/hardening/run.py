"""The hardening figures: the provider fault matrix, the model service's faults, nothing lost
(concurrent history, kill -9 mid-write, a full disk), and the sandbox keeping dry runs and
``evaluate`` to their scratch space.

It runs the hardening test suites with ``CONCH_HARDENING_REPORT`` set, so each test case
leaves its figures, and writes them to ``benchmarks/results/hardening.json`` and ``.md``::

    python -m benchmarks.hardening.run            # the default iterations (about 3 minutes)
    python -m benchmarks.hardening.run --long     # CONCH_HARDENING_LONG=1: 400 kill -9 runs
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks.common import log, stop_on_signals, write_report_files

ROOT = Path(__file__).resolve().parents[2]
SUITES = [
    "tests/hardening/test_faults_matrix.py",
    "tests/hardening/test_faults_units.py",
    "tests/hardening/test_faults_service.py",
    "tests/hardening/test_durability.py",
    "tests/hardening/test_durability_sandbox.py",
    "tests/hardening/test_sandbox_missing.py",
]
E2E = "tests/hardening/test_faults_e2e.py"
OUT = ROOT / "benchmarks" / "results" / "hardening"
FAULT_ORDER = [
    "refused", "401", "429", "500", "slow_headers", "stall", "truncated", "malformed",
    "empty", "prose", "huge", "bad_tool_args",
]  # fmt: skip
SURFACE_ORDER = ["oneshot", "run", "chat", "serve", "mcp"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--long", action="store_true", help="the long variants")
    parser.add_argument(
        "--e2e", action="store_true", help="also faults against a real llama.cpp server"
    )
    parser.add_argument("--out", type=Path, default=OUT, help="report path without suffix")
    args = parser.parse_args(argv)
    stop_on_signals()
    with tempfile.TemporaryDirectory(prefix="conch-hardening-") as directory:
        env = {**os.environ, "CONCH_HARDENING_REPORT": directory}
        if args.long:
            env["CONCH_HARDENING_LONG"] = "1"
        suites = [*SUITES, E2E] if args.e2e else SUITES
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *suites]
        log("running " + shlex.join(command))
        started = time.monotonic()
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        seconds = time.monotonic() - started
        summary = (done.stdout.strip().splitlines() or [""])[-1]
        if done.returncode != 0:
            log(done.stdout[-4000:])
        cases = _gather(Path(directory))
    meta = {
        "command": "python -m benchmarks.hardening.run"
        + (" --long" if args.long else "")
        + (" --e2e" if args.e2e else ""),
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "tests": summary,
        "tests_passed": done.returncode == 0,
        "seconds": round(seconds, 1),
        "cpus": os.cpu_count(),
    }
    rows = [{"suite": suite, **case} for suite, items in sorted(cases.items()) for case in items]
    write_report_files(meta, rows, args.out, _markdown(meta, cases))
    return done.returncode


def _gather(directory: Path) -> dict[str, list[dict[str, Any]]]:
    cases: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for path in sorted(directory.glob("*/*.json")):
        text = _scrub(path.read_text(encoding="utf-8"))
        cases[path.parent.name].append(json.loads(text))
    return cases


def _scrub(text: str) -> str:
    """Without what changes from run to run: ports, temp paths and pids."""
    text = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", text)
    text = re.sub(r"/tmp/pytest-of-[^/\s\"]+/pytest-\d+/[^/\s\"]+", "TMP", text)
    return re.sub(r"\(pid \d+\)", "(pid N)", text)


def _markdown(meta: dict[str, Any], cases: dict[str, list[dict[str, Any]]]) -> str:
    faults = cases.get("faults", [])
    kinds = [k for k in FAULT_ORDER if any(c["fault"] == k for c in faults)]
    surfaces = [s for s in SURFACE_ORDER if any(c["surface"] == s for c in faults)]
    by = {(c["fault"], c["surface"]): c for c in faults}
    lines = [
        "# Hardening",
        "",
        f"{meta['date']}; {meta['cpus']} cores; tests: {meta['tests']}. Reproduce with:",
        "",
        f"    {meta['command']}",
        "",
        "## Provider fault matrix",
        "",
        f"{len(kinds)} faults x {len(surfaces)} surfaces = {len(faults)} cases against a fake "
        "OpenAI-compatible server on 127.0.0.1 (tests/hardening/fault_server.py); tracebacks: "
        f"{sum(bool(c['traceback']) for c in faults)}. A cell is the exit status (CLI), the "
        "HTTP status (serve) or `error` / `ok` (the MCP tool result); `+h` where the surface "
        "wrote its history entry. Errors are one line, exit 5 on the CLI and 502 "
        "(`model_error`) from serve.",
        "",
        "| fault | " + " | ".join(surfaces) + " | message (one-shot CLI) |",
        "|---|" + "---|" * (len(surfaces) + 1),
    ]
    for kind in kinds:
        cells = []
        for surface in surfaces:
            case = by.get((kind, surface))
            if case is None:
                cells.append("-")
                continue
            code = case["code"]
            cell = ("error" if code else "ok") if surface == "mcp" else str(code)
            cells.append(cell + (" +h" if case["history"] else ""))
        message = by.get((kind, "oneshot"), {}).get("message", "") or "(answered)"
        message = message.replace("|", "\\|")
        lines.append(f"| {kind} | " + " | ".join(cells) + f" | {message[:150]} |")
    service = {c["case"]: c for c in cases.get("service", [])}
    durability = {c["case"]: c for c in cases.get("durability", [])}
    sandbox = {c["case"]: c for c in cases.get("sandbox", [])}
    real = cases.get("faults-e2e", [])
    if real:
        lines += ["", "Against a real llama.cpp server (the embedded model, `--e2e`):", ""]
        lines += [f"- {c['case']}: exit {c['code']}, `{c['message']}`" for c in real]
    lines += ["", "## The model service", ""]
    for name, case in service.items():
        detail = ", ".join(f"{k}: {v}" for k, v in case.items() if k != "case")
        lines.append(f"- {name}: {detail}")
    lines += ["", "## Nothing lost", ""]
    one = durability.get("history-one-rotation")
    many = durability.get("history-many-rotations")
    kill = durability.get("kill-9")
    if one:
        lines.append(
            f"- history, {one['writers']} processes x {one['entries'] // one['writers']} "
            f"entries, one rotation mid-run: entries lost {one['lost']}, duplicated "
            f"{one['duplicated']}, bad lines {one['bad_lines']}"
        )
    if many:
        lines.append(
            f"- history, the same with dozens of rotations (only the backup is kept, by "
            f"design): {many['kept']} latest entries kept, writers with a gap "
            f"{many['writers_with_gaps']}, duplicated {many['duplicated']}, bad lines "
            f"{many['bad_lines']}"
        )
    if kill:
        lines.append(
            f"- kill -9 during session, memory, audit and config writes: {kill['iterations']} "
            f"iterations, torn files {kill['torn_files']} ({kill['torn_by_kind']}); temp files "
            f"the kills left {kill['temp_files_left_by_kills']}, stale ones after the next "
            f"write {kill['stale_temp_files_after_next_write']}"
        )
    for name in ("full-disk-tmpfs", "full-disk-enospc-fake"):
        if name in durability:
            case = durability[name]
            lines.append(
                f"- {name}: {case['surfaces']} surfaces, tracebacks {case['tracebacks']}; "
                f"what the user sees: `{case['messages'][0]}`"
            )
    lines += ["", "## Dry runs and evaluate stay in their scratch space", ""]
    if "dry-run" in sandbox:
        case = sandbox["dry-run"]
        lines.append(
            f"- dry runs: {case['commands']} commands that write, delete, move or chmod; "
            f"files changed outside the scratch copy {case['changed']}, copies left "
            f"{case['copies_left']}"
        )
    if "evaluate" in sandbox:
        case = sandbox["evaluate"]
        lines.append(
            f"- evaluate: {case['programs']} programs that write, delete or chmod; files "
            f"changed {case['changed']}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
