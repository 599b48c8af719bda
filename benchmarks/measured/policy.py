"""The safety policy under attack: attacks by class and everyday commands, each only reaching
``conch.policy.assess`` (nothing runs), a quarter of each held out (benchmarks/policy).
``--check`` exits 1 when a goal is missed.
"""

from __future__ import annotations

from benchmarks.measured import publish
from benchmarks.policy.__main__ import main as measure

NAME = "policy"


def main(argv: list[str] | None = None) -> int:
    parser = publish.parser(NAME, __doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 when a goal is missed")
    args = parser.parse_args(argv)
    run = publish.begin(NAME, argv, args.out, partial=False)
    # The runner prints the headline (each goal met or missed) itself.
    code = measure(["--out", str(run.stem), *(["--check"] if args.check else [])])
    run.stamp()
    run.finish([])
    return code
