"""Census of the programs and options conch's model writes, and how the policy reads them.

    python -m benchmarks.policy.census [--json] [--examples N]

The commands are the accuracy benchmark's reference commands (``benchmarks/data/nl2sh-alfa``,
both references of every task) and the shipped few-shot examples
(``src/conch/command/data/*.tsv``, column 2), deduplicated. For each program the census
lists how often it is used and with which options, and which of its uses fall out of
read-only: the program's name is read-only (``conch.policy.classify.READ_ONLY``) but the
policy, reading every argument, judges that use otherwise. It also counts the commands whose
verdict in safe mode is read-only.

Pure: every command only reaches the policy, which runs nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from conch.policy import Risk, assess
from conch.policy.classify import READ_ONLY, classify
from conch.policy.commands import analyse

ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "benchmarks" / "data" / "nl2sh-alfa" / "test.jsonl"
EXAMPLES = sorted((ROOT / "src" / "conch" / "command" / "data").glob("*examples*.tsv"))


def load_commands() -> dict[str, str]:
    """Every census command, mapped to where it was first found."""
    found: dict[str, str] = {}
    for line in TASKS.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        for key in ("bash", "bash2"):
            text = str(row.get(key) or "").strip()
            if text:
                found.setdefault(text, f"nl2sh-alfa #{row['index']}")
    for path in EXAMPLES:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.startswith("#") or "\t" not in line:
                continue
            text = line.split("\t")[1].strip()
            if text:
                found.setdefault(text, f"{path.name}:{number}")
    return found


@dataclass(slots=True)
class Program:
    """What the census saw of one program."""

    uses: int = 0
    options: Counter[str] = field(default_factory=Counter)
    risks: Counter[str] = field(default_factory=Counter)
    fallen: list[str] = field(default_factory=list)  # read-only by name, not by arguments


def _options(texts: list[str | None]) -> list[str]:
    found = []
    for text in texts:
        if text is None or text == "--":
            break
        if text.startswith("-") and text != "-":
            found.append(text.split("=", 1)[0] + ("=" if "=" in text else ""))
    return found


def census() -> dict[str, Any]:
    """The figures: read-only verdicts, and per program its uses, options and fallen uses."""
    commands = load_commands()
    programs: dict[str, Program] = defaultdict(Program)
    read_only = 0
    for command in commands:
        if assess(command).risk is Risk.READ_ONLY:
            read_only += 1
        for inv in analyse(command).invocations:
            if inv.name is None:
                continue
            seen = programs[inv.name]
            seen.uses += 1
            seen.options.update(_options(inv.texts()))
            risk = classify(inv)
            seen.risks[str(risk)] += 1
            if inv.name in READ_ONLY and risk is not Risk.READ_ONLY:
                seen.fallen.append(command)
    return {
        "command": "python -m benchmarks.policy.census",
        "commands": len(commands),
        "read_only_verdicts": read_only,
        "fallen_uses": sum(len(p.fallen) for p in programs.values()),
        "programs": {
            name: {
                "uses": p.uses,
                "read_only_name": name in READ_ONLY,
                "risks": dict(p.risks),
                "options": dict(p.options.most_common()),
                "fallen": list(dict.fromkeys(p.fallen)),
            }
            for name, p in sorted(programs.items(), key=lambda kv: -kv[1].uses)
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the whole census as JSON")
    parser.add_argument("--examples", type=int, default=3, help="fallen commands shown per program")
    args = parser.parse_args(argv)
    found = census()
    if args.json:
        print(json.dumps(found, indent=2))
        return 0
    print(f"{found['commands']} commands, {found['read_only_verdicts']} with a read-only verdict")
    print(f"{found['fallen_uses']} uses of read-only programs judged otherwise by their arguments")
    for name, p in found["programs"].items():
        options = " ".join(list(p["options"])[:12])
        mark = "" if p["read_only_name"] else "  (not read-only by name)"
        print(f"{name}: {p['uses']} uses {p['risks']}{mark}  {options}")
        for command in p["fallen"][: args.examples]:
            print(f"    fallen: {command}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
