"""Cold and warm: one request, from a fresh `conch --print --quiet --unsafe` process to the
printed command, with the model loaded by the process (`--no-daemon`) and through the warm
model service (benchmarks/speed/latency.py).

One answer per request, validation and dry runs off, so the model is what is measured; the
fixed subset is every fifth clean NL2SH-ALFA task, the first 50.
"""

from __future__ import annotations

from typing import Any

from benchmarks.measured import publish
from benchmarks.speed import latency

NAME = "latency"
TASKS = 50


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# A request, cold and warm",
        "",
        f"{len(report['tasks'])} requests ({report['settings']}; {report.get('where', 'an empty directory')}); "
        f"{report['machine']}. Each is one fresh process, timed from spawn to exit.",
        "",
        "| path | median | min | max |",
        "|---|---|---|---|",
    ]
    for path, label in (
        ("cold", "cold: `--no-daemon`, the process loads the model and reads the whole prompt"),
        ("warm", "warm: the model service, model loaded, system prompt cached"),
    ):
        if report[path] is not None:
            s = report[path]
            lines.append(f"| {label} | {s['median_s']} s | {s['min_s']} s | {s['max_s']} s |")
    if report["warm_over_cold_median"] is not None:
        lines += ["", f"Warm over cold, medians: {report['warm_over_cold_median']}."]
    service = report.get("service") or {}
    if service.get("rss_bytes"):
        gib = service["rss_bytes"] / 2**30
        lines.append(f"The service's resident memory after them: {gib:.2f} GiB.")
    lines += ["", "| task | request | cold s | warm s | warm command |", "|---|---|---|---|---|"]
    for r in report["rows"]:
        command = " ".join(str(r.get("warm_command", "")).split()).replace("|", "\\|")
        lines.append(
            f"| {r['task']} | {r['request']} | {r.get('cold_s', '')} | {r.get('warm_s', '')} "
            f"| `{command}` |"
        )
    return "\n".join(lines)


def headline(report: dict[str, Any]) -> list[str]:
    cold, warm = report["cold"], report["warm"]
    shown = f"{cold['median_s']:.1f} s / " if cold else "cold not measured / "
    return [
        f"a request, cold / warm: {shown}{warm['median_s']:.1f} s median "
        f"(one answer, no dry runs; {len(report['tasks'])} requests)"
    ]


def main(argv: list[str] | None = None) -> int:
    parser = publish.parser(NAME, __doc__)
    parser.add_argument("--tasks", type=int, default=TASKS, help="requests (default %(default)s)")
    parser.add_argument("--warm-only", action="store_true", help="skip the cold requests")
    args = parser.parse_args(argv)
    run = publish.begin(NAME, argv, args.out, partial=args.tasks < TASKS or args.warm_only)
    work = publish.WORK / NAME
    work.mkdir(parents=True, exist_ok=True)
    raw = work / "latency.json"
    options = ["--tasks", str(args.tasks), "--out", str(raw)]
    with publish.defaults():
        latency.main(options + (["--warm-only"] if args.warm_only else []))
    report = publish.read_json(raw)
    run.write(markdown(report), report)
    return run.finish(headline(report))
