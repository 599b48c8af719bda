"""The accuracy harness's report, and reports made from several runs: ``--merge`` (other
tools on the same tasks) and ``--join`` (the same tools on other tasks)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.accuracy import report
from benchmarks.common import read_shards, write_report_files


def write_report(
    meta: dict[str, Any], rows: list[dict[str, Any]], names: list[str], out: Path
) -> None:
    """Summaries and paired comparisons added to ``meta``; ``out``.json and ``out``.md."""
    clean_rows = [r for r in rows if r["clean"]]
    meta["paired_clean"] = {
        other: {level: report.paired(clean_rows, "conch", other, level) for level in report.LEVELS}
        for other in names
        if other != "conch" and "conch" in names
    }
    meta["summary"] = {
        name: {
            "clean": report.summary([r for r in rows if r["tool"] == name and r["clean"]]),
            "all": report.summary([r for r in rows if r["tool"] == name]),
        }
        for name in names
    }
    write_report_files(meta, rows, out, report.render(meta, rows, names))


def _combined_meta(reports: list[dict[str, Any]], separator: str) -> dict[str, Any]:
    """What a report made from several says of them all: their commands joined with
    ``separator``, their dates and judges, and the first sanity check among them."""
    return {
        "command": separator.join(rep["meta"]["command"] for rep in reports),
        "date": ", ".join(sorted({rep["meta"]["date"] for rep in reports})),
        "judge": "; ".join(sorted({rep["meta"]["judge"].split(" (")[0] for rep in reports})),
        "reference_pairs": next(
            (rep["meta"]["reference_pairs"] for rep in reports if rep["meta"]["reference_pairs"]),
            None,
        ),
    }


def merge(paths: list[Path], out: Path, only: set[int] | None = None) -> int:
    """One report from runs of different tools on the same tasks (same model and judge);
    with ``only`` (``--tasks``), those tasks of each report.

    Each tool's rows are taken from the first report that has them; the commands of all the
    runs are listed, so the merged report says exactly how each part was produced.
    """
    reports = [_relabelled(p) for p in paths]
    if only is not None:
        for rep in reports:
            rep["rows"] = [r for r in rep["rows"] if r["task"] in only]
            rep["meta"]["command"] += f" (only the {len(only)} tasks of --tasks)"
    tasks = {tuple(sorted({r["task"] for r in rep["rows"]})) for rep in reports}
    if len(tasks) != 1:
        raise SystemExit("--merge: the reports do not cover the same tasks")
    models = {rep["meta"]["model"] for rep in reports}
    if len(models) != 1:
        raise SystemExit(f"--merge: the reports use different models: {sorted(models)}")
    names: list[str] = []
    rows: list[dict[str, Any]] = []
    for rep in reports:
        for name in rep["meta"]["tools"]:
            if name not in names:
                names.append(name)
                rows += [r for r in rep["rows"] if r["tool"] == name]
    first = reports[0]["meta"]
    meta = {
        **{k: first[k] for k in ("model", "server", "tasks", "clean_tasks", "all_tasks")},
        **_combined_meta(reports, " && "),
        "runs": [
            {k: rep["meta"][k] for k in ("command", "tools", "date", "seconds", "judge")}
            for rep in reports
        ],
        "tools": names,
        "seconds": round(sum(rep["meta"]["seconds"] for rep in reports), 1),
        "merged_from": [str(p) for p in paths],
    }
    if only is not None:
        meta["tasks"] = len({r["task"] for r in rows})
        meta["clean_tasks"] = len({r["task"] for r in rows if r["clean"]})
    write_report(meta, rows, names, out)
    return 0


def _relabelled(path: Path) -> dict[str, Any]:
    """The report at ``path``; ``REPORT.json@NAME``: its one tool shown as ``NAME``."""
    file, _, label = str(path).partition("@")
    try:
        rep: dict[str, Any] = json.loads(Path(file).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"--merge: {file}: not a readable report ({exc})") from None
    if not label:
        return rep
    tools = rep["meta"]["tools"]
    if len(tools) != 1:
        raise SystemExit(f"--merge: {file} has {len(tools)} tools; @NAME needs a one-tool report")
    rep["meta"]["tools"] = [label]
    rep["meta"]["command"] += f"  (shown as {label})"
    for row in rep["rows"]:
        row["tool"] = label
    return rep


def join(paths: list[Path], out: Path) -> int:
    """One report from runs of the same tools on different tasks (shards of one run, run
    side by side against the same server), rows in task order; every run's command is kept."""
    shards = read_shards(paths, "tool", order="task", mismatch="; use --merge for that")
    reports, names = shards.reports, shards.names
    first = reports[0]["meta"]
    meta = {
        "model": first["model"],
        "server": first["server"],
        **_combined_meta(reports, " & "),
        "tasks": shards.tasks,
        "clean_tasks": sum(rep["meta"]["clean_tasks"] for rep in reports),
        "all_tasks": any(rep["meta"]["all_tasks"] for rep in reports),
        "tools": names,
        "seconds": round(max(rep["meta"]["seconds"] for rep in reports), 1),
        "joined_from": [str(p) for p in paths],
    }
    write_report(meta, shards.rows, names, out)
    return 0
