"""How close conch's shipped worked examples come to the benchmark's tasks.

conch's few-shot examples (``src/conch/command/data/examples.tsv``) were written for conch, not taken
from NL2SH-ALFA. This check keeps it that way: for every example it finds the benchmark
request with the most words in common (Jaccard overlap of word sets) and lists the examples
at or above a threshold, so a near-copy of a test item cannot slip into the corpus unnoticed.

    python -m benchmarks.accuracy.overlap [--threshold 0.7] [--top 10]

Exit status 1 when any example reaches the threshold.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass

from benchmarks.accuracy.fixtures import load_tasks
from conch.command.examples import Example, corpus

THRESHOLD = 0.7
_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> frozenset[str]:
    """The set of lower-case words and numbers in ``text``."""
    return frozenset(_WORD.findall(text.lower()))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Shared words over all words; 0 for two empty sets."""
    union = a | b
    return len(a & b) / len(union) if union else 0.0


@dataclass(frozen=True, slots=True)
class Closest:
    """An example and the benchmark request nearest to it."""

    example: Example
    task: int
    request: str
    overlap: float


def closest(examples: tuple[Example, ...], requests: dict[int, str]) -> list[Closest]:
    """For every example, the nearest benchmark request; highest overlap first."""
    task_words = {index: words(text) for index, text in requests.items()}
    found = []
    for example in examples:
        mine = words(example.request)
        index, score = max(
            ((i, jaccard(mine, w)) for i, w in task_words.items()), key=lambda pair: pair[1]
        )
        found.append(Closest(example, index, requests[index], score))
    found.sort(key=lambda c: c.overlap, reverse=True)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threshold", type=float, default=THRESHOLD)
    parser.add_argument("--top", type=int, default=10, help="also list the N closest examples")
    args = parser.parse_args(argv)
    requests = {task.index: task.nl for task in load_tasks()}
    found = closest(corpus(), requests)
    too_close = [c for c in found if c.overlap >= args.threshold]
    print(f"{len(found)} examples, {len(requests)} benchmark requests")
    for c in found[: max(args.top, len(too_close))]:
        mark = "!!" if c.overlap >= args.threshold else "  "
        print(f"{mark} {c.overlap:.2f}  {c.example.request!r}  ~ task {c.task}: {c.request!r}")
    if too_close:
        print(f"{len(too_close)} examples at or above {args.threshold}: rephrase or drop them")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
