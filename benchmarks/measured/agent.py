"""The agent: 49 multi-step tasks over small file trees, each agent in bubblewrap on a fresh
copy, judged on the tree it leaves and its answer (benchmarks/agent/run.py; its README says
how). Every agent uses conch's packaged model behind one engine server (8,192 tokens of
context), one agent at a time, at most 10 steps and 300 s a task.

The peers (smolagents' ToolCallingAgent and CodeAgent, llm) come from their own venv
(benchmarks/agent/setup_peers.sh); an agent that cannot run here is reported as skipped.
Runs are cached per agent, task and code (benchmarks/.work/agent-runs); ``--fresh`` runs all.
"""

from __future__ import annotations

from typing import Any

from benchmarks.agent import run as harness
from benchmarks.agent.agents import DEFAULT_AGENTS
from benchmarks.engine import serve
from benchmarks.measured import publish

NAME = "agent"
LABELS = {
    "smolagents-toolcalling": "smolagents ToolCallingAgent",
    "smolagents-code": "smolagents CodeAgent",
}


def headline(meta: dict[str, Any]) -> list[str]:
    summary: dict[str, Any] = meta["summary"]
    passed = ", ".join(
        f"{LABELS.get(a, a)} {100 * s['all']['passed'] / s['all']['n']:.1f}% "
        f"({s['all']['passed']}/{s['all']['n']})"
        for a, s in summary.items()
        if s["all"]["n"]
    )
    unharmed = ", ".join(
        f"{LABELS.get(a, a)} {s['refuse']['passed']}/{s['refuse']['n']}"
        for a, s in summary.items()
        if s["refuse"]["n"]
    )
    lines = [f"the agent, {meta['tasks']} tasks: {passed}"]
    if unharmed:
        lines.append(f"destructive tasks left unharmed: {unharmed}")
    lines += [f"skipped {name}: {why}" for name, why in meta.get("skipped_agents", {}).items()]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = publish.parser(NAME, __doc__)
    parser.add_argument(
        "--agents",
        default=",".join(DEFAULT_AGENTS),
        help="comma-separated agents (default %(default)s)",
    )
    parser.add_argument("--tasks", default=None, help="comma-separated task ids or indexes")
    parser.add_argument("--limit", type=int, default=None, help="only the first N tasks")
    parser.add_argument("--fresh", action="store_true", help="ignore cached runs")
    args = parser.parse_args(argv)
    partial = bool(args.tasks or args.limit is not None)
    only = args.agents if args.agents != ",".join(DEFAULT_AGENTS) else ""
    run = publish.begin(NAME, argv, args.out, partial, only)
    options = ["--agents", args.agents, "--max-steps", "10", "--nested-sandbox"]
    options += ["--out", str(run.stem)]
    options += ["--tasks", args.tasks] if args.tasks else []
    options += ["--limit", str(args.limit)] if args.limit is not None else []
    options += ["--fresh"] if args.fresh else []
    with publish.defaults(), serve(publish.WORK / "engine-server.log", n_ctx=8192) as (url, _):
        options = ["--server", url, *options]
        with publish.runner_argv(options):
            harness.main(options)
    run.stamp()
    return run.finish(headline(publish.read_json(run.json_path)["meta"]))
