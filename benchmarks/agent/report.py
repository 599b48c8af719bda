"""Pass rates with 95% Wilson intervals, costs per task, and the Markdown report."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from benchmarks.accuracy.report import Rate, sign_test, wilson
from benchmarks.agent.causes import cause_table
from benchmarks.agent.tasks import KINDS

Row = dict[str, Any]


def rate(rows: Sequence[Row]) -> Rate:
    """Passes out of the rows given."""
    return Rate(sum(1 for r in rows if r["passed"]), len(rows))


def _median(values: Sequence[float | int | None]) -> float | None:
    known = [float(v) for v in values if v is not None]
    return statistics.median(known) if known else None


def tokens(row: Row) -> int | None:
    """Prompt plus completion tokens of a run, as the server counted them."""
    if row.get("prompt_tokens") is None:
        return None
    return int(row["prompt_tokens"]) + int(row.get("completion_tokens") or 0)


def summary(rows: Sequence[Row]) -> dict[str, Any]:
    """One agent's numbers, for the JSON output and the report."""
    work = [r for r in rows if r["kind"] != "refuse"]
    refuse = [r for r in rows if r["kind"] == "refuse"]
    out: dict[str, Any] = {"n": len(rows)}
    for key, part in (("all", rows), ("work", work), ("refuse", refuse)):
        found = rate(part)
        low, high = wilson(found.passed, found.n)
        out[key] = {"passed": found.passed, "n": found.n, "rate": found.value, "ci95": [low, high]}
    out["refuse_declined"] = sum(1 for r in refuse if r.get("declined"))
    out["refuse_declined_and_intact"] = sum(1 for r in refuse if r.get("declined") and r["passed"])
    out["median_model_calls"] = _median([r.get("model_calls") for r in rows])
    out["median_steps"] = _median([r.get("steps") for r in rows])
    out["median_tool_calls"] = _median([r.get("tool_calls") for r in rows])
    out["median_tokens"] = _median([tokens(r) for r in rows])
    counted = [t for t in (tokens(r) for r in rows) if t is not None]
    out["total_tokens"] = sum(counted) if counted else None
    out["median_seconds"] = _median([r.get("seconds") for r in rows])
    out["timeouts"] = sum(1 for r in rows if r.get("timed_out"))
    out["errors"] = sum(1 for r in rows if r.get("error"))
    out["harmed_outside"] = sum(1 for r in rows if r.get("home_intact") is False)
    return out


def paired(rows: Sequence[Row], agent_a: str, agent_b: str) -> dict[str, Any]:
    """Both/only-a/only-b/neither on the tasks both agents ran, with the exact sign test."""
    a = {r["task"]: bool(r["passed"]) for r in rows if r["agent"] == agent_a}
    b = {r["task"]: bool(r["passed"]) for r in rows if r["agent"] == agent_b}
    common = [t for t in a if t in b]
    only_a = [t for t in common if a[t] and not b[t]]
    only_b = [t for t in common if b[t] and not a[t]]
    return {
        "n": len(common),
        "both": sum(1 for t in common if a[t] and b[t]),
        "only_a": only_a,
        "only_b": only_b,
        "neither": sum(1 for t in common if not a[t] and not b[t]),
        "p": sign_test(len(only_a), len(only_b)),
    }


def _fmt(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "n/a"
    return f"{value:.{digits}f}"


def _by_agent(rows: Sequence[Row], agents: Sequence[str]) -> dict[str, list[Row]]:
    return {agent: [r for r in rows if r["agent"] == agent] for agent in agents}


def _headline(groups: dict[str, list[Row]]) -> list[str]:
    head = [
        "agent",
        "all tasks",
        "without the refuse tasks",
        "refuse tasks unharmed",
        "declined",
        "median model calls",
        "median tool calls",
        "median tokens",
        "median s/task",
        "timeouts",
        "errors",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for agent, rows in groups.items():
        if not rows:
            continue
        info = summary(rows)
        refuse = [r for r in rows if r["kind"] == "refuse"]
        cells = [
            agent,
            rate(rows).cell(),
            rate([r for r in rows if r["kind"] != "refuse"]).cell(),
            rate(refuse).cell(),
            f"{info['refuse_declined']}/{len(refuse)}",
            _fmt(info["median_model_calls"]),
            _fmt(info["median_tool_calls"]),
            _fmt(info["median_tokens"]),
            _fmt(info["median_seconds"], 1),
            str(info["timeouts"]),
            str(info["errors"]),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _breakdown(groups: dict[str, list[Row]], key: str, values: Sequence[Any]) -> list[str]:
    present = [v for v in values if any(r[key] == v for rows in groups.values() for r in rows)]
    lines = [
        "| agent | " + " | ".join(str(v) for v in present) + " |",
        "|---|" + "---|" * len(present),
    ]
    for agent, rows in groups.items():
        cells = [agent]
        for value in present:
            part = [r for r in rows if r[key] == value]
            cells.append(rate(part).cell() if part else "n/a")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _refusals(rows: Sequence[Row], agents: Sequence[str]) -> list[str]:
    tasks = list(dict.fromkeys(r["task"] for r in rows if r["kind"] == "refuse"))
    if not tasks:
        return ["(no refuse tasks in this run)"]
    lines = ["| task | " + " | ".join(agents) + " |", "|---|" + "---|" * len(agents)]
    for task in tasks:
        cells = [task]
        for agent in agents:
            row = next((r for r in rows if r["task"] == task and r["agent"] == agent), None)
            if row is None:
                cells.append("n/a")
                continue
            state = "unharmed" if row["passed"] else "HARMED"
            said = "declined" if row.get("declined") else "did not decline"
            cells.append(f"{state}, {said}")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _paired_table(rows: Sequence[Row], agents: Sequence[str]) -> list[str]:
    if "conch" not in agents or len(agents) < 2:
        return ["(needs conch and at least one other agent)"]
    lines = [
        "| other agent | tasks | both pass | only conch | only other | neither | sign test p |",
        "|---|---|---|---|---|---|---|",
    ]
    for other in agents:
        if other == "conch":
            continue
        info = paired(rows, "conch", other)
        lines.append(
            f"| {other} | {info['n']} | {info['both']} | {len(info['only_a'])} | "
            f"{len(info['only_b'])} | {info['neither']} | {info['p']:.3g} |"
        )
    return lines


def _per_task(rows: Sequence[Row], agents: Sequence[str]) -> list[str]:
    tasks = list(dict.fromkeys((r["index"], r["task"], r["kind"]) for r in rows))
    lines = [
        "| # | task | kind | " + " | ".join(agents) + " |",
        "|---|---|---|" + "---|" * len(agents),
    ]
    for index, task, kind in sorted(tasks):
        cells = [str(index), task, kind]
        for agent in agents:
            row = next((r for r in rows if r["task"] == task and r["agent"] == agent), None)
            if row is None:
                cells.append("")
                continue
            mark = "✓" if row["passed"] else "✗"
            calls = row.get("model_calls")
            extra = f" {calls} calls" if calls is not None else ""
            extra += " (timeout)" if row.get("timed_out") else ""
            cells.append(f"{mark}{extra}, {row['seconds']:.0f} s")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def render(meta: dict[str, Any], rows: Sequence[Row], agents: Sequence[str]) -> str:
    """The Markdown report of one run."""
    groups = _by_agent(rows, agents)
    out = [
        "# conch agent benchmark",
        "",
        f"Command: `{meta['command']}`",
        "",
        f"- Model: {meta['model']} (server {meta['server']})",
        f"- Date: {meta['date']}",
        f"- Tasks: {meta['tasks']}; agents: {', '.join(agents)}",
        f"- Limits per run: {meta['timeout']:g} s wall time, {meta['max_steps']} steps "
        f"(model calls) where the agent takes a limit, {meta['max_tokens']} tokens per reply, "
        f"temperature {meta['temperature']:g}",
        "",
        "Each run starts from a fresh copy of the task's files, with the agent's process in",
        "bubblewrap (the copy writable, the rest of the filesystem read-only). The judge checks",
        "the tree the agent left and its final answer; no model is asked. A refuse task passes",
        "when nothing was harmed; *declined* counts the answers that read as a refusal.",
        "Model calls and tokens are counted at the server (through a proxy), for every agent",
        "alike. Intervals are 95% Wilson intervals.",
        "",
        "## Pass rates",
        "",
        *_headline(groups),
        "",
        "## By task kind",
        "",
        *_breakdown(groups, "kind", KINDS),
        "",
        "## By difficulty",
        "",
        *_breakdown(groups, "difficulty", (1, 2, 3)),
        "",
        "## The refuse tasks",
        "",
        *_refusals(rows, agents),
        "",
        "## Paired comparison on the same tasks",
        "",
        *_paired_table(rows, agents),
        "",
        "## Every task",
        "",
        *_per_task(rows, agents),
        "",
        *cause_table(rows).splitlines(),
        "",
    ]
    failed = [r for r in rows if not r["passed"] and r.get("failures")]
    if failed:
        out += ["## Why runs failed", ""]
        for row in failed:
            why = "; ".join(row["failures"][:3])
            if row.get("error"):
                why = f"{row['error']}; {why}"
            out.append(f"- {row['agent']} / {row['task']}: {why}")
        out.append("")
    return "\n".join(out)
