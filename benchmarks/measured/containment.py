"""Containment: the same commands run by ``run_checked`` contained (nobody asked: bubblewrap
shaped by the verdict) and as a person's yes runs them (no sandbox), alternately, in a scratch
directory (benchmarks/speed/containment.py). The difference is the sandbox's price.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict

from benchmarks.measured import publish
from benchmarks.speed import containment

NAME = "containment"
ROUNDS = 30


def main(argv: list[str] | None = None) -> int:
    parser = publish.parser(NAME, __doc__)
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="default %(default)s")
    args = parser.parse_args(argv)
    run = publish.begin(NAME, argv, args.out, partial=args.rounds < ROUNDS)
    with publish.defaults():
        timings, source = containment.measure(args.rounds)
    command = run.reproduce["command"]
    added = containment.added_ms(timings)
    data = {
        "rounds": args.rounds,
        "bubblewrap": source,
        "added_ms": {"median": statistics.median(added), "min": min(added), "max": max(added)},
        "rows": [asdict(t) for t in timings],
    }
    run.write(containment.markdown(timings, args.rounds, source, command), data)
    return run.finish(
        [
            f"containment: about {statistics.median(added):.0f} ms per command "
            f"(median; {min(added):.1f} to {max(added):.1f} ms)"
        ]
    )
