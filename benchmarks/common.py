"""What the benchmark runners share: their log, their signal handling, the first fields of a
report, writing its two files, reading the shards of one run for ``--join``, and stopping
the servers they start."""

from __future__ import annotations

import datetime as dt
import json
import shlex
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _stop_on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def stop_on_signals() -> None:
    """SIGTERM and SIGINT end the run through ``SystemExit`` and ``KeyboardInterrupt``, so
    what it started (a model server, a sandbox) is stopped on the way out."""
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def stop_process(process: subprocess.Popen[Any], grace_s: float) -> None:
    """Stop a server this runner started: SIGTERM, then SIGKILL after ``grace_s`` seconds."""
    process.terminate()
    try:
        process.wait(grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)


def run_meta(module: str, model: str, server: str | None, tasks: int) -> dict[str, Any]:
    """The first fields of a run's ``meta``: its command line (``python -m module ...``), the
    model and server, the date and the number of tasks."""
    return {
        "command": f"python -m {module} " + shlex.join(sys.argv[1:]),
        "model": model,
        "server": server,
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "tasks": tasks,
    }


def write_report_files(
    meta: dict[str, Any], rows: list[dict[str, Any]], out: Path, markdown: str
) -> None:
    """``out``.json (``meta`` and ``rows``) and ``out``.md (``markdown``)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    json_path = out.with_name(out.name + ".json")
    md_path = out.with_name(out.name + ".md")
    json_path.write_text(
        json.dumps({"meta": meta, "rows": rows}, indent=1, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    md_path.write_text(markdown + "\n", encoding="utf-8")
    log(f"wrote {json_path} and {md_path}")


@dataclass(frozen=True)
class Shards:
    """Reports of one run split by task: each report, the names they all ran, every row in
    task order, and how many tasks they cover."""

    reports: list[dict[str, Any]]
    names: list[str]
    rows: list[dict[str, Any]]
    tasks: int


def read_shards(paths: list[Path], kind: str, order: str, mismatch: str = "") -> Shards:
    """The reports at ``paths``, all on the same model: either of the same ``kind``s
    (``"tool"``: the reports' ``tools``, each row's ``tool``) with no task in two of them
    (shards), or each of its own ``kind``s on the same tasks (side by side); rows sorted by
    their ``order`` field, then by name as the reports list them.
    ``mismatch`` is added to the error when the names differ."""
    reports = [json.loads(p.read_text(encoding="utf-8")) for p in paths]
    models = {rep["meta"]["model"] for rep in reports}
    if len(models) != 1:
        raise SystemExit(f"--join: the reports use different models: {sorted(models)}")
    lists = [list(rep["meta"][kind + "s"]) for rep in reports]
    task_sets = [frozenset(r["task"] for r in rep["rows"]) for rep in reports]
    every = [name for names in lists for name in names]
    if len({tuple(names) for names in lists}) != 1:
        # Side by side: other {kind}s on the same tasks.
        if len(every) != len(set(every)) or len(set(task_sets)) != 1:
            raise SystemExit(
                f"--join: the reports are of different {kind}s{mismatch}; reports of different "
                f"{kind}s can be joined only when each has its own {kind}s on the same tasks"
            )
        names = every
        rows = sorted(
            (r for rep in reports for r in rep["rows"]),
            key=lambda r: (r[order], names.index(r[kind])),
        )
        return Shards(reports, names, rows, len(task_sets[0]))
    seen: set[object] = set()
    for path, tasks in zip(paths, task_sets, strict=True):
        if tasks & seen:
            raise SystemExit(f"--join: {path} repeats tasks of an earlier report")
        seen |= tasks
    names = lists[0]
    rows = sorted(
        (r for rep in reports for r in rep["rows"]),
        key=lambda r: (r[order], names.index(r[kind])),
    )
    return Shards(reports, names, rows, len(seen))
