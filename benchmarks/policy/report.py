"""The policy corpus's figures as Markdown: the goals, the classes, the everyday commands and
every miss."""

from __future__ import annotations

from typing import Any

from benchmarks.policy.suite import SPLITS

HELDOUT_WARNING = (
    "The held-out part (a stable quarter of the commands, by a hash of their text) is not to "
    "be tuned on: change the policy by looking at the training part only, then read the "
    "held-out part to see whether the change generalises."
)


def headline(result: dict[str, Any]) -> str:
    """A few lines: the corpus's size and each goal, met or missed."""
    counts = result["attacks"]
    lines = [
        f"policy corpus: {counts['new']} new attacks + {counts['existing']} from the existing "
        f"corpus ({counts['train']} train, {counts['heldout']} held out), "
        f"{result['everyday_count']['all']} everyday commands "
        f"({result['everyday_count']['train']} train, {result['everyday_count']['heldout']} "
        f"held out); {result['seconds']} s",
    ]
    for goal in result["goals"]:
        mark = "met" if goal["met"] else "MISSED"
        split = ", ".join(f"{s} {goal['by_split'][s]}" for s in SPLITS)
        lines.append(f"  [{mark}] {goal['name']}: {goal['value']} (goal {goal['target']}; {split})")
    return "\n".join(lines) + "\n"


def _pct(value: float) -> str:
    return f"{value:.1%}"


def markdown(result: dict[str, Any]) -> str:
    """The whole report."""
    contexts: list[str] = result["contexts"]
    lines = [
        "# The safety policy against attacks by class, and everyday commands",
        "",
        f"Reproduce: `{result['command']}` ({result['seconds']} s). Every command only reaches "
        "`conch.policy.assess`, which runs nothing. The default context is safe mode, "
        "restricted-autonomous: ALLOW there means the command runs without anyone asked.",
        "",
        f"**{HELDOUT_WARNING}**",
        "",
        "## Goals",
        "",
        "| goal | target | all | train | held out | |",
        "|---|---|---|---|---|---|",
    ]
    for goal in result["goals"]:
        lines.append(
            f"| {goal['name']} | {goal['target']} | {goal['value']} | "
            f"{goal['by_split']['train']} | {goal['by_split']['heldout']} | "
            f"{'met' if goal['met'] else '**missed**'} |"
        )
    lines += [
        "",
        "Catastrophic attacks must be rejected as denylisted in every context; harmful ones must "
        "never be allowed outright in the default context; leaks (a command that prints a "
        "credential and sends it nowhere) are counted apart and are in no goal. The existing "
        "corpus is `tests/policy/bypass_corpus.yaml`, imported whole as the class `existing`.",
        "",
        "## Attacks by class",
        "",
        "Allowed: allowed outright in the default context (leaks aside). Not denylisted: "
        "catastrophic attacks not rejected as denylisted, per context.",
        "",
        "| class | split | attacks | catastrophic | harmful | leak | allowed | allowed % | "
        + " | ".join(f"not denylisted {c}" for c in contexts)
        + " |",
        "|---|---|---:|---:|---:|---:|---:|---:|" + "---:|" * len(contexts),
    ]
    for row in result["classes"]:
        name = f"**{row['class']}**" if row["split"] == "all" else ""
        lines.append(
            f"| {name} | {row['split']} | {row['attacks']} | {row['catastrophic']} | "
            f"{row['harmful']} | {row['leak']} | {row['allowed']} | {_pct(row['allowed_pct'])} | "
            + " | ".join(str(row["not_denylisted"][c]) for c in contexts)
            + " |"
        )
    lines += _everyday(result)
    lines += _misses(result)
    return "\n".join(lines) + "\n"


def _everyday(result: dict[str, Any]) -> list[str]:
    everyday = result["everyday"]
    lines = [
        "",
        "## Everyday commands",
        "",
        "Refused: rejected in the default context (asking is fine, refusing is a false refusal). "
        "Needs a shell: safe mode leaves it to unsafe mode (substitution, loops, variables...).",
        "",
        "| commands | split | allow | confirm | refused | refused % | needs a shell | denylist | other |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    groups = [(s, everyday[s]) for s in ("all", *SPLITS)]
    groups += [(source, row) for source, row in everyday["by_source"].items()]
    for name, row in groups:
        label = "everyday" if name in ("all", *SPLITS) else name
        split = name if name in ("all", *SPLITS) else "all"
        kinds = row["refused_by_kind"]
        lines.append(
            f"| {label} ({row['commands']}) | {split} | {row['allow']} | {row['confirm']} | "
            f"{row['refused']} | {_pct(row['refused_pct'])} | {kinds['needs a shell']} | "
            f"{kinds['denylist']} | {kinds['other']} |"
        )
    return lines


def _misses(result: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for split in SPLITS:
        misses = [m for m in result["misses"] if m["split"] == split]
        if split == "heldout":
            count = result["heldout_misses"]
            lines += ["", f"## Misses (heldout: {count})", "", f"_{HELDOUT_WARNING}_", ""]
            lines += ["Not listed: the class table above counts them by class.", ""]
            continue
        lines += ["", f"## Misses ({split}: {len(misses)})", ""]
        lines += [
            f"- `{_code(m['cmd'])}` ({m['class']}, {m['severity']}; {m['note']}): "
            f"{m['default']} by default"
            + (
                f"; not denylisted in {', '.join(m['not_denylisted_in'])}"
                if m["not_denylisted_in"]
                else ""
            )
            for m in misses
        ]
    leaks = result["leaks"]
    lines += ["", f"## Leaks ({len(leaks)}, in no goal)", ""]
    lines += [f"- `{_code(x['cmd'])}` ({x['split']}; {x['note']}): {x['decision']}" for x in leaks]
    refused = [r for r in result["everyday_refused"] if r["kind"] != "needs a shell"]
    shell = len(result["everyday_refused"]) - len(refused)
    lines += [
        "",
        f"## Everyday commands refused for more than needing a shell ({len(refused)}; "
        f"{shell} more need a shell, listed in the JSON)",
        "",
    ]
    lines += [
        f"- `{_code(r['command'])}` ({r['source']}, {r['split']}; {r['kind']}): {r['reason']}"
        for r in refused
    ]
    return lines


def _code(text: str) -> str:
    """``text`` fit for one line of inline code."""
    flat = text.encode("utf-8", "backslashreplace").decode("utf-8")
    flat = flat.replace("\n", "\\n").replace("`", "'")
    return flat if len(flat) <= 120 else flat[:117] + "..."
