"""How well conch finds worked examples: leave each shipped example out, retrieve for its
request, and count how often the nearest remaining example (and any of the four nearest) uses
a program the held-out example's command uses.

    python benchmarks/retrieval.py

No model is involved; the number is a proxy for how relevant the few-shot examples are.
"""

from __future__ import annotations

from functools import cache

from conch.command.examples import corpus, nearest
from conch.policy import PolicyContext, assess


@cache
def programs(command: str) -> frozenset[str]:
    """Every base command the line would run, as the safety policy's parser finds them."""
    return frozenset(assess(command, PolicyContext(unsafe=True)).commands)


def main() -> int:
    examples = corpus()
    first = any_of_four = counted = 0
    for example in examples:
        wanted = programs(example.command)
        if not wanted:
            continue
        others = [e for e in nearest(example.request, 5) if e.request != example.request][-4:]
        counted += 1
        first += bool(others and programs(others[-1].command) & wanted)
        any_of_four += any(programs(e.command) & wanted for e in others)
    print(f"{counted} examples left out one at a time")
    print(f"nearest other example uses the same program: {first / counted:.1%}")
    print(f"one of the four nearest uses it: {any_of_four / counted:.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
