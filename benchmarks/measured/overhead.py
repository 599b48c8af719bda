"""conch's own overhead: five requests built as conch builds them, each answered several times
with the prompt cached, by llama.cpp (xllamacpp) called directly and by conch's local path
through the model service (benchmarks/speed/overhead.py). Overhead = conch's median time over
the direct median, less one.
"""

from __future__ import annotations

from typing import Any

from benchmarks.measured import publish
from benchmarks.speed import overhead

NAME = "overhead"
ROUNDS = 5


def markdown(report: dict[str, Any]) -> str:
    d, c = report["direct"], report["conch"]
    same = "the same" if report["same_token_counts"] else "different"
    return "\n".join(
        [
            "# conch's overhead over calling llama.cpp directly",
            "",
            f"{report['machine']}; {d['requests']} requests each way, prompt cached.",
            "",
            "| path | median time | median tokens/s |",
            "|---|---|---|",
            f"| llama.cpp (xllamacpp) in-process | {d['median_s']} s | {d['median_tokens_per_s']} |",
            f"| conch, the model service | {c['median_s']} s | {c['median_tokens_per_s']} |",
            "",
            f"Overhead: {100 * report['overhead_time']:.1f}% of the time, "
            f"{100 * report['overhead_tokens_per_s']:.1f}% of the token rate; {same} numbers "
            "of tokens generated both ways.",
        ]
    )


def headline(report: dict[str, Any]) -> list[str]:
    d, c = report["direct"], report["conch"]
    return [
        f"conch's overhead over llama.cpp directly: {100 * report['overhead_time']:+.1f}% of the "
        f"time (direct {d['median_s']:.3f} s, conch {c['median_s']:.3f} s median)"
    ]


def main(argv: list[str] | None = None) -> int:
    parser = publish.parser(NAME, __doc__)
    parser.add_argument(
        "--rounds", type=int, default=ROUNDS, help="answers per request (default %(default)s)"
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N requests")
    args = parser.parse_args(argv)
    partial = args.rounds < ROUNDS or args.limit is not None
    run = publish.begin(NAME, argv, args.out, partial)
    work = publish.WORK / NAME
    work.mkdir(parents=True, exist_ok=True)
    raw = work / "overhead.json"
    with publish.defaults():
        limit = ["--limit", str(args.limit)] if args.limit is not None else []
        overhead.main(["--rounds", str(args.rounds), "--out", str(raw), *limit])
    report = publish.read_json(raw)
    run.write(markdown(report), report)
    return run.finish(headline(report))
