"""Choose the worked examples every request shares (``generation.shared_examples``).

Run: python -m benchmarks.accuracy.shared_examples [--count 100] [--per-program 2]

The shared examples go before each request's own nearest examples, the same for every
request, so the engine's prompt cache keeps them. Which ones: the shipped examples
(``data/examples.tsv``) that are most often among the four nearest to the 2,359 other
requests of ``data/examples-more.tsv`` (other wordings of everyday jobs, none taken from the
benchmark), at most ``--per-program`` per program so that one program does not fill the
list; most often first. Writes ``src/conch/command/data/shared-examples.tsv``.
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

from conch.command.examples import Example, larger_corpus, retrieval

OUT = Path(__file__).resolve().parents[2] / "src" / "conch" / "command" / "data"

HEADER = (
    "# Worked examples every request shares, most often useful first: request<TAB>command.\n"
    "# Made by benchmarks/accuracy/shared_examples.py from data/examples.tsv.\n"
)


def choose(count: int, per_program: int) -> list[Example]:
    """The ``count`` shared examples."""
    shipped = retrieval("shipped")
    others = larger_corpus()[len(shipped.examples) :]
    seen: collections.Counter[Example] = collections.Counter()
    for other in others:
        seen.update(shipped.nearest(other.request, 4))
    chosen: list[Example] = []
    programs: collections.Counter[str] = collections.Counter()
    for example, _ in sorted(seen.items(), key=lambda item: (-item[1], item[0].request)):
        program = example.command.split()[0]
        if programs[program] >= per_program:
            continue
        programs[program] += 1
        chosen.append(example)
        if len(chosen) == count:
            break
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--per-program", type=int, default=2)
    args = parser.parse_args()
    rows = [f"{e.request}\t{e.command}\n" for e in choose(args.count, args.per_program)]
    (OUT / "shared-examples.tsv").write_text(HEADER + "".join(rows), encoding="utf-8")
    print(f"wrote {len(rows)} examples to {OUT / 'shared-examples.tsv'}")


if __name__ == "__main__":
    main()
