"""Pass rates with intervals, paired comparisons, and the Markdown report."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

LEVELS = ("strict", "normalised", "judged")
Z95 = 1.959963984540054


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for ``successes`` out of ``n`` (95% by default)."""
    if n <= 0:
        return (0.0, 1.0)
    if not 0 <= successes <= n:
        raise ValueError(f"successes {successes} not within 0..{n}")
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def sign_test(only_a: int, only_b: int) -> float:
    """Two-sided exact sign (McNemar) test p-value on the discordant pairs."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    k = min(only_a, only_b)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / float(2**n)
    return min(1.0, 2 * tail)


@dataclass(frozen=True, slots=True)
class Rate:
    """Passes out of n, with the 95% Wilson interval."""

    passed: int
    n: int

    @property
    def value(self) -> float:
        return self.passed / self.n if self.n else 0.0

    def cell(self) -> str:
        if self.n == 0:
            return "n/a"
        low, high = wilson(self.passed, self.n)
        return (
            f"{100 * self.value:.1f}% [{100 * low:.1f}–{100 * high:.1f}] ({self.passed}/{self.n})"
        )


def rate(rows: Sequence[dict[str, Any]], level: str) -> Rate | None:
    """The pass rate of ``rows`` at ``level`` (None when the level was not judged)."""
    if level == "judged" and any(r["judged"] is None for r in rows):
        return None
    return Rate(sum(1 for r in rows if r[level]), len(rows))


def is_extraction_failure(row: dict[str, Any]) -> bool:
    return row["command"] is None and not row["refused"]


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per-tool numbers for the JSON output and the report."""
    seconds = [float(r["seconds"]) for r in rows]
    out: dict[str, Any] = {"n": len(rows)}
    for level in LEVELS:
        found = rate(rows, level)
        if found is not None:
            low, high = wilson(found.passed, found.n)
            out[level] = {"passed": found.passed, "rate": found.value, "ci95": [low, high]}
    out["extraction_failures"] = sum(1 for r in rows if is_extraction_failure(r))
    out["refusals"] = sum(1 for r in rows if r["refused"])
    out["policy_rejections"] = sum(1 for r in rows if r["policy"] == "reject")
    out["median_seconds"] = statistics.median(seconds) if seconds else None
    return out


def _by_tool(
    rows: Sequence[dict[str, Any]], tools: Sequence[str]
) -> dict[str, list[dict[str, Any]]]:
    return {tool: [r for r in rows if r["tool"] == tool] for tool in tools}


def _levels(rows: Sequence[dict[str, Any]]) -> list[str]:
    return [lv for lv in LEVELS if rate(rows, lv) is not None]


def _rates_table(groups: dict[str, list[dict[str, Any]]]) -> list[str]:
    some = next((rows for rows in groups.values() if rows), [])
    levels = _levels(some)
    head = ["tool", *levels, "extraction failures", "refusals", "policy rejects", "median s/task"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for tool, rows in groups.items():
        if not rows:
            continue
        info = summary(rows)
        cells = [tool]
        for level in levels:
            found = rate(rows, level)
            cells.append(found.cell() if found else "n/a")
        median = info["median_seconds"]
        cells += [
            str(info["extraction_failures"]),
            str(info["refusals"]),
            str(info["policy_rejections"]),
            f"{median:.2f}" if median is not None else "n/a",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _difficulty_table(groups: dict[str, list[dict[str, Any]]]) -> list[str]:
    lines = [
        "| tool | level | difficulty 0 | difficulty 1 | difficulty 2 |",
        "|---|---|---|---|---|",
    ]
    for tool, rows in groups.items():
        for level in _levels(rows):
            cells = [tool, level]
            for difficulty in (0, 1, 2):
                part = [r for r in rows if r["difficulty"] == difficulty]
                found = rate(part, level)
                cells.append(found.cell() if found and part else "n/a")
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def pipeline_counts(rows: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """conch's rows grouped by what its pipeline did: tried alternatives, tried a repair,
    proposed something other than its first (greedy) answer."""
    traced = [r for r in rows if r.get("trials")]
    return {
        "traced": traced,
        "sampled": [r for r in traced if any(t["source"] == "sample" for t in r["trials"])],
        "repaired": [r for r in traced if any(t["source"] == "repair" for t in r["trials"])],
        "changed": [r for r in traced if r["command"] != r["trials"][0]["command"]],
        "greedy failed": [r for r in traced if r["trials"][0].get("outcome") == "failed"],
    }


def _pipeline_table(groups: dict[str, list[dict[str, Any]]]) -> list[str]:
    lines: list[str] = []
    for tool, rows in groups.items():
        counts = pipeline_counts(rows)
        if not counts["traced"]:
            continue
        if not lines:
            lines = [
                "| tool | tasks | first answer's dry run failed | alternatives sampled | "
                "repair tried | other than first answer proposed |",
                "|---|---|---|---|---|---|",
            ]
        cells = [tool, str(len(counts["traced"]))]
        for key in ("greedy failed", "sampled", "repaired", "changed"):
            part = counts[key]
            found = rate(part, "normalised")
            passed = f", {found.passed} pass normalised" if found and part else ""
            cells.append(f"{len(part)}{passed}")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def paired(rows: Sequence[dict[str, Any]], tool_a: str, tool_b: str, level: str) -> dict[str, Any]:
    """Both/only-a/only-b/neither counts on the tasks both tools were run on."""
    a = {r["task"]: bool(r[level]) for r in rows if r["tool"] == tool_a}
    b = {r["task"]: bool(r[level]) for r in rows if r["tool"] == tool_b}
    common = sorted(set(a) & set(b))
    only_a = [t for t in common if a[t] and not b[t]]
    only_b = [t for t in common if b[t] and not a[t]]
    return {
        "n": len(common),
        "both": sum(1 for t in common if a[t] and b[t]),
        "only_a": len(only_a),
        "only_b": len(only_b),
        "neither": sum(1 for t in common if not a[t] and not b[t]),
        "p": sign_test(len(only_a), len(only_b)),
        "only_a_tasks": only_a,
        "only_b_tasks": only_b,
    }


def _paired_table(rows: Sequence[dict[str, Any]], tools: Sequence[str]) -> list[str]:
    if "conch" not in tools or len(tools) < 2:
        return ["(needs conch and at least one other tool)"]
    lines = [
        "| other tool | level | tasks | both pass | only conch | only other | neither | sign test p |",
        "|---|---|---|---|---|---|---|---|",
    ]
    conch_rows = [r for r in rows if r["tool"] == "conch"]
    for other in tools:
        if other == "conch":
            continue
        for level in _levels(conch_rows):
            info = paired(rows, "conch", other, level)
            lines.append(
                f"| {other} | {level} | {info['n']} | {info['both']} | {info['only_a']} | "
                f"{info['only_b']} | {info['neither']} | {info['p']:.3g} |"
            )
    best = _levels(conch_rows)[-1] if conch_rows else "strict"
    lines += ["", f"Task indexes at the {best} level:", ""]
    for other in tools:
        if other == "conch":
            continue
        info = paired(rows, "conch", other, best)
        only_conch = ", ".join(f"#{t}" for t in info["only_a_tasks"]) or "none"
        only_other = ", ".join(f"#{t}" for t in info["only_b_tasks"]) or "none"
        lines.append(f"- conch but not {other}: {only_conch}")
        lines.append(f"- {other} but not conch: {only_other}")
    return lines


def render(meta: dict[str, Any], rows: Sequence[dict[str, Any]], tools: Sequence[str]) -> str:
    """The Markdown report of one run."""
    clean = [r for r in rows if r["clean"]]
    out = [
        "# conch accuracy on NL2SH-ALFA",
        "",
        f"Command: `{meta['command']}`",
        "",
        f"- Model: {meta['model']} (server {meta['server']})",
        f"- Date: {meta['date']}",
        f"- Tasks: {meta['tasks']} ({meta['clean_tasks']} clean); tools: {', '.join(tools)}",
        f"- Judge: {meta['judge']}",
        "",
        "Levels: **strict** = same tree state and byte-identical stdout; **normalised** = same",
        "state, stdout equal after removing colour codes and blank lines, collapsing spaces and",
        "sorting lines; **judged** = same state and the judge model says the candidate's output",
        "holds the same information as the reference's. A candidate passes a level when it",
        "matches either reference command.",
        "Intervals are 95% Wilson intervals.",
        "",
        "## Pass rates on the clean tasks (headline)",
        "",
        *_rates_table(_by_tool(clean, tools)),
        "",
    ]
    if meta.get("all_tasks"):
        out += [
            "## All tasks, clean or not",
            "",
            *_rates_table(_by_tool(rows, tools)),
            "",
            "Not clean only (the reference itself does not run cleanly and repeatably here):",
            "",
            *_rates_table(_by_tool([r for r in rows if not r["clean"]], tools)),
            "",
        ]
    out += [
        "## By difficulty (clean tasks)",
        "",
        *_difficulty_table(_by_tool(clean, tools)),
        "",
        "## Paired comparison on the same clean tasks",
        "",
        *_paired_table(clean, tools),
        "",
    ]
    pipeline = _pipeline_table(_by_tool(clean, tools))
    if pipeline:
        out += [
            "## What conch's pipeline did (clean tasks)",
            "",
            "Each request's first answer is dry-run in the task's tree (read-only); when that",
            "gives reason for doubt, alternatives are sampled and dry-run, one is chosen by",
            "outcome and vote, and a failing choice gets one repair. Rows count tasks where each",
            "step happened, and how many of those passed.",
            "",
            *pipeline,
            "",
        ]
    pairs = meta.get("reference_pairs")
    if pairs:
        wrong = pairs.get("wrong", {})
        out += [
            "## Sanity check of the comparator, on reference commands only",
            "",
            "Right pairs: each task's second reference judged against its first (both right, so",
            "nearly all should pass). Wrong pairs: another task's reference on the same fixture",
            "judged as if it answered this task, for every fourth task (nearly none should pass).",
            "",
            "| level | right pairs passed | wrong pairs passed |",
            "|---|---|---|",
        ]
        for level in LEVELS:
            if pairs.get(level) is None:
                continue
            right_cell = Rate(int(pairs[level]), int(pairs["n"])).cell()
            wrong_cell = Rate(int(wrong.get(level) or 0), int(wrong.get("n", 0))).cell()
            out.append(f"| {level} | {right_cell} | {wrong_cell} |")
        out.append("")
    return "\n".join(out)
