"""What the benchmark runners share: their log, their signal handling, the first fields of a
report, writing its two files, and reading the shards of one run for ``--join``."""

from __future__ import annotations

import datetime as dt
import json
import shlex
import signal
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
    """The reports at ``paths``, which must be of the same ``kind`` (``"tool"``: the
    reports' ``tools``, each row's ``tool``) on the same model, no task in two of them; rows
    sorted by their ``order`` field, then by name as the first report lists them.
    ``mismatch`` is added to the error when the names differ."""
    reports = [json.loads(p.read_text(encoding="utf-8")) for p in paths]
    if len({tuple(rep["meta"][kind + "s"]) for rep in reports}) != 1:
        raise SystemExit(f"--join: the reports are of different {kind}s{mismatch}")
    models = {rep["meta"]["model"] for rep in reports}
    if len(models) != 1:
        raise SystemExit(f"--join: the reports use different models: {sorted(models)}")
    seen: set[object] = set()
    for path, rep in zip(paths, reports, strict=True):
        tasks = {r["task"] for r in rep["rows"]}
        if tasks & seen:
            raise SystemExit(f"--join: {path} repeats tasks of an earlier report")
        seen |= tasks
    names = list(reports[0]["meta"][kind + "s"])
    rows = sorted(
        (r for rep in reports for r in rep["rows"]),
        key=lambda r: (r[order], names.index(r[kind])),
    )
    return Shards(reports, names, rows, len(seen))
