"""Every figure of the README's "Measured" table, one command away.

python -m benchmarks                 # the names, what each measures, how long it takes
python -m benchmarks NAME [OPTIONS]  # measure one row; NAME --help lists its options
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a file: the repository is what holds `benchmarks`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.measured import ROWS, find


def listing() -> str:
    """The rows: name, how long a full run takes, what it measures."""
    width = max(len(row.name) for row in ROWS)
    lines = [
        "usage: python -m benchmarks NAME [OPTIONS]   (python -m benchmarks NAME --help)",
        "",
        'One name per row of the README\'s "Measured" table; each writes',
        "benchmarks/results/<report>.md and .json and prints the row's figures.",
        "",
    ]
    for row in ROWS:
        lines.append(f"  {row.name:<{width}}  {row.summary}")
        lines.append(f"  {'':<{width}}  takes {row.duration}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help", "list"):
        print(listing())
        return 0
    row = find(args[0])
    if row is None:
        print(f"python -m benchmarks: no benchmark called {args[0]!r}\n", file=sys.stderr)
        print(listing(), file=sys.stderr)
        return 2
    module = importlib.import_module(row.module)
    code: int = module.main(args[1:])
    return code


if __name__ == "__main__":
    sys.exit(main())
