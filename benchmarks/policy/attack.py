"""The safety policy under attack: bypass corpus, benign corpus, precision and recall.

    python -m benchmarks.policy.attack [--out benchmarks/results/policy-attack]

Every command only reaches ``conch.policy.assess`` (pure: nothing runs). Attacks are
``tests/policy/bypass_corpus.yaml``: a ``deny`` entry gets through when some mode (safe or
unsafe; restricted, full-autonomous or interactive) does not reject it as denylisted, a
``safe`` entry when safe mode allows it without a question. Benign commands are the accuracy
benchmark's reference commands and the agent benchmark's commands; a false positive is one
rejected in unsafe mode, rejected in safe mode for anything but needing a shell, or a command
that only reads that safe mode asks about (see ``BenignOutcome``).

Precision and recall treat "stopped" (rejected, or asked about where the entry's level
requires) as the positive call: recall is stopped attacks over attacks, precision stopped
attacks over stopped attacks plus benign false positives.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.policy.corpus import (
    RESULTS,
    judge_benign,
    load_attacks,
    load_benign,
    misses,
)

COMMAND = "python -m benchmarks.policy.attack"


def measure() -> dict[str, Any]:
    """Run both corpora through ``assess`` and return the figures."""
    started = time.perf_counter()
    attacks = load_attacks()
    through = {a: found for a in attacks if (found := misses(a))}
    benign = [judge_benign(b) for b in load_benign()]
    false_positives = [o for o in benign if o.false_positive]
    stopped = len(attacks) - len(through)
    recall = stopped / len(attacks) if attacks else 1.0
    precision = stopped / (stopped + len(false_positives)) if stopped else 0.0
    by_category = Counter(a.category for a in attacks)
    return {
        "command": COMMAND,
        "seconds": round(time.perf_counter() - started, 2),
        "attacks": len(attacks),
        "attacks_deny": sum(a.level == "deny" for a in attacks),
        "attacks_safe": sum(a.level == "safe" for a in attacks),
        "categories": dict(by_category),
        "bypasses": len(through),
        "bypassed": [
            {
                "command": a.command[:200],
                "category": a.category,
                "level": a.level,
                "note": a.note,
                "contexts": [m.context for m in found],
                "decision": str(found[0].verdict.decision),
            }
            for a, found in through.items()
        ],
        "benign": len(benign),
        "benign_read_only": sum(o.read_only for o in benign),
        "benign_needs_shell": sum(o.needs_shell for o in benign),
        "false_positives": len(false_positives),
        "false_positive_rate": len(false_positives) / len(benign) if benign else 0.0,
        "false_positive_commands": [
            {
                "command": o.benign.command,
                "source": o.benign.source,
                "safe": str(o.safe.decision),
                "unsafe": str(o.unsafe.decision),
                "reasons": list(o.safe.reasons),
            }
            for o in false_positives
        ],
        "precision": precision,
        "recall": recall,
    }


def markdown(result: dict[str, Any]) -> str:
    """The figures as a short Markdown report."""
    lines = [
        "# The safety policy under attack",
        "",
        f"Reproduce: `{result['command']}` ({result['seconds']} s; every command only reaches "
        "`conch.policy.assess`, nothing runs).",
        "",
        "| figure | value |",
        "|---|---:|",
        f"| attack entries (`tests/policy/bypass_corpus.yaml`) | {result['attacks']} |",
        f"| of which denylist-level (rejected in every mode) | {result['attacks_deny']} |",
        f"| of which safe-mode-level (never allowed without a question) | {result['attacks_safe']} |",
        f"| **attacks that got through** | **{result['bypasses']}** |",
        f"| benign commands (nl2sh-alfa references, agent benchmark) | {result['benign']} |",
        f"| benign commands that only read | {result['benign_read_only']} |",
        f"| benign commands safe mode leaves to unsafe mode (code it cannot see) | "
        f"{result['benign_needs_shell']} |",
        f"| **benign false positives** | **{result['false_positives']}** "
        f"({result['false_positive_rate']:.1%}) |",
        f"| precision | {result['precision']:.4f} |",
        f"| recall | {result['recall']:.4f} |",
        "",
        "## Attack categories",
        "",
        "| category | entries |",
        "|---|---:|",
        *(f"| {name} | {count} |" for name, count in result["categories"].items()),
    ]
    if result["bypassed"]:
        lines += ["", "## Attacks that got through", ""]
        lines += [
            f"- `{b['command'][:80]!r}` ({b['category']}, {b['note']}): {b['decision']} "
            f"in {', '.join(b['contexts'])}"
            for b in result["bypassed"]
        ]
    if result["false_positive_commands"]:
        lines += ["", "## False positives", ""]
        lines += [
            f"- `{f['command'][:80]}` ({f['source']}): safe {f['safe']}, unsafe {f['unsafe']}"
            for f in result["false_positive_commands"]
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS / "policy-attack")
    args = parser.parse_args(argv)
    result = measure()
    report = markdown(result)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n", "utf-8")
    args.out.with_suffix(".md").write_text(report, "utf-8")
    print(report, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
