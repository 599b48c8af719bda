"""The safety policy against attacks by class, and everyday commands.

    python -m benchmarks.policy [--out benchmarks/results/policy] [--check]

Every command only reaches ``conch.policy.assess`` (pure: nothing runs). Prints the headline
(each goal met or missed) and writes the Markdown report and the JSON beside it. ``--check``
exits 1 when a goal is missed. The held-out part of the corpus is not to be tuned on.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.policy.corpus import RESULTS
from benchmarks.policy.measure import measure
from benchmarks.policy.report import headline, markdown


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.policy", description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "policy")
    parser.add_argument("--check", action="store_true", help="exit 1 when a goal is missed")
    args = parser.parse_args(argv)
    result = measure()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n", "utf-8")
    args.out.with_suffix(".md").write_text(markdown(result), "utf-8")
    print(headline(result), end="")
    print(f"report: {args.out.with_suffix('.md')}")
    met = all(goal["met"] for goal in result["goals"])
    return 1 if args.check and not met else 0


if __name__ == "__main__":
    sys.exit(main())
