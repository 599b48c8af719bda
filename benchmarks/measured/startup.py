"""Start-up: the commands typed most, each a fresh process, beside `python3 -c pass` and the
peers' `--help` (benchmarks/speed/startup.py: round-robin, one warm-up round, median of N).

The peers come from their own venv (benchmarks/accuracy/setup_peers.sh); without it they are
left out with a note.
"""

from __future__ import annotations

from typing import Any

from benchmarks.measured import publish
from benchmarks.speed import startup

NAME = "startup"
RUNS = 20


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# Start-up",
        "",
        f"Every command a fresh process, round-robin, median of {report['runs']} after one "
        f"warm-up round; Python {report['python']}, {report['machine']}.",
        "",
        "| command | median | min | max |",
        "|---|---|---|---|",
    ]
    for name, r in report["results"].items():
        lines.append(f"| `{name}` | {r['median_ms']} ms | {r['min_ms']} ms | {r['max_ms']} ms |")
    lines += ["", "| ratio of medians | |", "|---|---|"]
    lines += [f"| {name} | {ratio} |" for name, ratio in report["ratios"].items()]
    lines += ["", "The slowest imports of `conch --help` (`python -X importtime`, one run):", ""]
    lines += [
        f"- `{m['module']}`: {m['cumulative_us'] / 1000:.1f} ms"
        for m in report["slowest_imports_of_conch_help"]
    ]
    lines += [f"\nNote: {note}" for note in report["notes"]]
    return "\n".join(lines)


def headline(report: dict[str, Any]) -> list[str]:
    results = report["results"]

    def ms(name: str) -> str:
        return f"{results[name]['median_ms']:.0f} ms" if name in results else "not measured"

    peers = ", ".join(f"{p} {ms(p)}" for p in ("sgpt --help", "llm --help"))
    return [
        f"conch --help / conch check -- ls: {ms('conch --help')} / {ms('conch check -- ls')} "
        f"median ({peers})"
    ]


def main(argv: list[str] | None = None) -> int:
    parser = publish.parser(NAME, __doc__)
    parser.add_argument("--runs", type=int, default=RUNS, help="rounds (default %(default)s)")
    args = parser.parse_args(argv)
    run = publish.begin(NAME, argv, args.out, partial=args.runs < RUNS)
    with publish.defaults():
        report = startup.run(args.runs)
    run.write(markdown(report), report)
    return run.finish(headline(report))
