"""Everyday requests judged by what they do: held-out requests, never tuned on.

The README's own requests are tested in ``tests/e2e/test_readme_examples.py``; the pipeline
was fixed against them, so they are a training set. These ten were written beside them, on
the same kind of directory (``benchmarks/everyday/fixture.py``), and are only measured:

    python -m benchmarks.everyday.run [--out benchmarks/results/everyday-heldout]

Each request runs as a user would type it (``conch --yes ...``, the warm model service, the
default settings) in a fresh copy of the directory, under a temporary HOME; a check reads the
output or the tree. The report lists each request, the command conch ran, pass or fail, and
the seconds it took.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks.everyday import fixture

Check = Callable[[str, dict[str, bytes | None], Path], bool]


def nonblank_lines(text: str) -> list[str]:
    """The lines of ``text`` that hold something, stripped."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def tree_state(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root``: a file's bytes, None for a directory."""
    return {
        p.relative_to(root).as_posix(): (None if p.is_dir() else p.read_bytes())
        for p in sorted(root.rglob("*"))
    }


def _three_biggest_in_data(out: str, before: dict[str, bytes | None], cwd: Path) -> bool:
    wanted = ["measurements.csv", "2025.bin", "readme.txt"]
    lines = nonblank_lines(out)
    return len(lines) == 3 and all(any(w in line for w in wanted) for line in lines)


def _app_log_lines(out: str, before: dict[str, bytes | None], cwd: Path) -> bool:
    return "40" in out.split()


def _status_counts(out: str, before: dict[str, bytes | None], cwd: Path) -> bool:
    statuses = Counter(line.split('" ')[1].split()[0] for line in fixture.access_log_lines())
    lines = nonblank_lines(out)
    for status, count in statuses.items():
        if not any(status in line.split() and str(count) in line.split() for line in lines):
            return False
    return True


def _core_emails(out: str, before: dict[str, bytes | None], cwd: Path) -> bool:
    emails = sorted(u["email"] for u in fixture.USERS if u["team"] == "core")
    return sorted(line.strip('"') for line in nonblank_lines(out)) == emails


def _last_three(out: str, before: dict[str, bytes | None], cwd: Path) -> bool:
    return nonblank_lines(out) == fixture.app_log_lines()[-3:]


def _over_a_megabyte(out: str, before: dict[str, bytes | None], cwd: Path) -> bool:
    found = {line.removeprefix("./") for line in nonblank_lines(out)}
    return found == {"data/measurements.csv", "data/archive/2025.bin"}


def _cache_tmp_gone(out: str, before: dict[str, bytes | None], cwd: Path) -> bool:
    after = tree_state(cwd)
    gone = {name for name in fixture.TMP_FILES if name.startswith("cache/")}
    kept = {name for name, data in before.items() if data is not None} - gone
    return not gone & after.keys() and kept <= after.keys()


def _src_archive(out: str, before: dict[str, bytes | None], cwd: Path) -> bool:
    path = cwd / "src.tar.gz"
    if not path.is_file() or not tarfile.is_tarfile(path):
        return False
    with tarfile.open(path) as archive:
        return any(name.endswith("src/main.c") for name in archive.getnames())


def _log_files(out: str, before: dict[str, bytes | None], cwd: Path) -> bool:
    found = {line.removeprefix("./") for line in nonblank_lines(out)}
    return found == {"logs/app.log", "logs/worker.log", "logs/old/2026-10.log"}


def _error_lines(out: str, before: dict[str, bytes | None], cwd: Path) -> bool:
    count = sum("ERROR" in line for line in fixture.app_log_lines())
    return nonblank_lines(out) == [str(count)] or re.fullmatch(rf"\s*{count}\s*", out) is not None


@dataclass(frozen=True, slots=True)
class Case:
    argv: tuple[str, ...]
    check: Check


HELD_OUT = (
    Case(("show the three biggest files under data",), _three_biggest_in_data),
    Case(("how many lines does logs/app.log have",), _app_log_lines),
    Case(("count the requests per status code in access.log",), _status_counts),
    Case(("jq.yaml", "emails of the users in the core team", "--peek", "users.json"), _core_emails),
    Case(("show the last 3 lines of logs/app.log",), _last_three),
    Case(("find files bigger than 1 MB",), _over_a_megabyte),
    Case(("delete the .tmp files in the cache folder",), _cache_tmp_gone),
    Case(("archive the src directory into src.tar.gz",), _src_archive),
    Case(("list the log files under logs, recursively",), _log_files),
    Case(("how many ERROR lines are in logs/app.log",), _error_lines),
)


def run_case(case: Case, work: Path, env: dict[str, str]) -> dict[str, object]:
    root = fixture.build(work / "project")
    before = tree_state(root)
    argv = [sys.executable, "-m", "conch", *case.argv, "--yes", "--no-history"]
    started = time.monotonic()
    done = subprocess.run(
        argv, cwd=root, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    seconds = time.monotonic() - started
    shown = [line.strip() for line in done.stderr.splitlines() if line.startswith("  ")]
    passed = done.returncode == 0 and case.check(done.stdout, before, root)
    return {
        "request": " ".join(case.argv),
        "command": shown[0] if shown else None,
        "passed": passed,
        "exit_code": done.returncode,
        "seconds": round(seconds, 1),
        "stdout": done.stdout[-2000:],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="benchmarks/results/everyday-heldout")
    parser.add_argument("--limit", type=int, default=None, help="only the first N requests")
    args = parser.parse_args(argv)
    cases = HELD_OUT[: args.limit]
    rows = []
    with tempfile.TemporaryDirectory(prefix="conch-everyday-") as temp:
        home = Path(temp) / "home"
        home.mkdir()
        env = {
            **os.environ,
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
        }
        env.setdefault("XDG_CACHE_HOME", str(Path.home() / ".cache"))  # the model, once
        for i, case in enumerate(cases):
            row = run_case(case, Path(temp) / f"case{i}", env)
            rows.append(row)
            mark = "pass" if row["passed"] else "FAIL"
            print(f"[{i + 1}/{len(cases)}] {mark} {row['request']} -> {row['command']}")
    passed = sum(bool(r["passed"]) for r in rows)
    seconds = sorted(float(str(r["seconds"])) for r in rows)
    median = seconds[len(seconds) // 2]
    lines = [
        "# Everyday requests, held out",
        "",
        "Command: `python -m benchmarks.everyday.run`",
        "",
        f"**{passed}/{len(rows)} pass**; median {median:.1f} s per request (the warm service).",
        "",
        "| request | command conch ran | result | seconds |",
        "|---|---|---|---|",
    ]
    for r in rows:
        command = str(r["command"] or "").replace("|", "\\|")
        result = "pass" if r["passed"] else f"fail (exit {r['exit_code']})"
        lines.append(f"| {r['request']} | `{command}` | {result} | {r['seconds']} |")
    Path(args.out + ".md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    Path(args.out + ".json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    print(f"{passed}/{len(rows)} pass; report in {args.out}.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
