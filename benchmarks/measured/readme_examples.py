"""The README's examples, by what they do: every line of its quick start and "Using it" block
run as typed on the embedded model, in a fresh copy of a directory like a user's, each judged
by a check of its effect (tests/e2e/test_readme_examples.py, run with pytest, several times
in a row); then ten everyday requests written beside them and never tuned on, judged the same
way (benchmarks/everyday/run.py).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from benchmarks.everyday import run as everyday
from benchmarks.measured import publish

NAME = "readme-examples"
RUNS = 3
TEST_FILE = "tests/e2e/test_readme_examples.py"
TEST = "test_every_readme_example_does_what_it_says"


def readme_cases() -> list[str]:
    """The pytest ids of the README lines' cases, in the README's order."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            TEST_FILE,
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        cwd=publish.ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    cases = [line for line in done.stdout.splitlines() if f"::{TEST}[" in line]
    if not cases:
        raise SystemExit(f"no cases of {TEST} collected:\n{done.stdout[-2000:]}{done.stderr}")
    return cases


def run_readme(cases: list[str], junit: Path) -> list[dict[str, Any]]:
    """One pytest run of ``cases``: per case, its line, whether it passed, its seconds."""
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    subprocess.run(
        [*pytest, f"--junitxml={junit}", *cases],
        cwd=publish.ROOT,
        check=False,
    )
    if not junit.exists():
        raise SystemExit(f"pytest wrote no report ({junit}): see its output above")
    rows = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        failed = any(child.tag in ("failure", "error", "skipped") for child in case)
        line = case.get("name", "").removeprefix(TEST).strip("[]")
        rows.append({"line": line, "passed": not failed, "seconds": float(case.get("time", 0))})
    return rows


def markdown(runs: list[list[dict[str, Any]]], held_out: list[dict[str, Any]]) -> str:
    lines = ["# The README's examples, by what they do", ""]
    for i, rows in enumerate(runs, 1):
        passed = sum(r["passed"] for r in rows)
        minutes = sum(r["seconds"] for r in rows) / 60
        lines.append(f"- run {i}: {passed}/{len(rows)} passed in {minutes:.1f} min")
    lines += [
        "",
        "| README line | " + " | ".join(f"run {i}" for i in range(1, len(runs) + 1)) + " |",
    ]
    lines.append("|---|" + "---|" * len(runs))
    for j, row in enumerate(runs[0] if runs else []):
        cells = [
            ("pass" if rows[j]["passed"] else "**fail**") + f" ({rows[j]['seconds']:.0f} s)"
            for rows in runs
            if j < len(rows)
        ]
        lines.append(f"| `{row['line'].replace('|', chr(92) + '|')}` | " + " | ".join(cells) + " |")
    passed = sum(bool(r["passed"]) for r in held_out)
    seconds = [float(r["seconds"]) for r in held_out]
    median = f"median {statistics.median(seconds):.1f} s per request" if seconds else ""
    lines += [
        "",
        "## Held out: everyday requests never tuned on",
        "",
        f"**{passed}/{len(held_out)} pass**; {median} (the warm model service).",
        "",
        "| request | command conch ran | result | seconds |",
        "|---|---|---|---|",
    ]
    for r in held_out:
        command = str(r["command"] or "").replace("|", "\\|")
        result = "pass" if r["passed"] else f"fail (exit {r['exit_code']})"
        lines.append(f"| {r['request']} | `{command}` | {result} | {r['seconds']} |")
    return "\n".join(lines)


def headline(runs: list[list[dict[str, Any]]], held_out: list[dict[str, Any]]) -> list[str]:
    each = ", ".join(f"{sum(r['passed'] for r in rows)}/{len(rows)}" for rows in runs)
    passed = sum(bool(r["passed"]) for r in held_out)
    return [
        f"the README's examples, by effect: {each} ({len(runs)} run(s) in a row) / "
        f"held-out everyday requests: {passed}/{len(held_out)}"
    ]


def main(argv: list[str] | None = None) -> int:
    parser = publish.parser(NAME, __doc__)
    parser.add_argument("--runs", type=int, default=RUNS, help="README runs (default %(default)s)")
    parser.add_argument(
        "--limit", type=int, default=None, help="only the first N README lines and requests"
    )
    args = parser.parse_args(argv)
    run = publish.begin(NAME, argv, args.out, args.limit is not None or args.runs < RUNS)
    work = publish.WORK / NAME
    work.mkdir(parents=True, exist_ok=True)
    limit = ["--limit", str(args.limit)] if args.limit is not None else []
    with publish.defaults():
        cases = readme_cases()[: args.limit]
        runs = [run_readme(cases, work / f"run-{i}.xml") for i in range(1, args.runs + 1)]
        everyday.main(["--out", str(work / "everyday"), *limit])
    held_out = publish.read_json(work / "everyday.json")
    run.write(markdown(runs, held_out), {"readme_runs": runs, "held_out": held_out})
    return run.finish(headline(runs, held_out))
