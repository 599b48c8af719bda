"""Agent benchmark: multi-step file tasks, each agent sandboxed, judged on the tree it leaves.

    python -m benchmarks.agent.run [--server URL] [--agents conch,smolagents-toolcalling,...]
        [--tasks ID,ID|INDEX,...] [--out benchmarks/results/agent] [--fresh]
    python -m benchmarks.agent.run --join A.json B.json --out STEM

Without ``--server`` it serves conch's embedded model itself (llama.cpp's OpenAI-compatible
server on a free 127.0.0.1 port). Writes ``<out>.json`` (every task x agent) and ``<out>.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.agent import report, sandbox
from benchmarks.agent.agents import (
    ALL_AGENTS,
    DEFAULT_AGENTS,
    ROOT,
    Agent,
    AgentUnavailable,
    make_agent,
)
from benchmarks.agent.checks import judge
from benchmarks.agent.meter import Meter
from benchmarks.agent.tasks import (
    PROJECT,
    Snapshot,
    Suite,
    Task,
    build_home,
    initial_snapshot,
    load_suite,
    select,
    snapshot,
    snapshot_from_json,
    snapshot_to_json,
)
from benchmarks.common import log, read_shards, run_meta, stop_on_signals, write_report_files

WORK = ROOT / "benchmarks" / ".work"
CACHE_DIR = WORK / "agent-runs"
EXCERPT = 2000


# -- the cache ----------------------------------------------------------------------------------


def _files_under(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(
            p for p in path.rglob("*") if p.is_file() and p.suffix in (".py", ".tsv", ".yaml")
        )
    return [path] if path.exists() else []


@functools.cache
def _fingerprint(sources: tuple[Path, ...]) -> str:
    digest = hashlib.sha256()
    for source in (*sources, Path(sandbox.__file__)):
        for path in _files_under(source):
            digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@functools.cache
def _peer_versions(python: str) -> str:
    """The installed versions in a peer's venv (so a reinstall starts afresh)."""
    site = sorted(Path(python).parent.parent.glob("lib/python*/site-packages/*.dist-info"))
    return ",".join(p.name for p in site)


class ResultCache:
    """One run per agent, task and model on disk: the agent's answer and the tree it left,
    judged again on every use, so a change to the checks needs no new runs."""

    def __init__(self, directory: Path, enabled: bool, settings: dict[str, Any]) -> None:
        self.directory = directory
        self.enabled = enabled
        self.settings = json.dumps(settings, sort_keys=True)

    def path(self, agent: Agent, task: Task) -> Path:
        digest = hashlib.sha256(self.settings.encode())
        digest.update(_fingerprint(agent.sources).encode())
        if not agent.command[0].startswith(sys.prefix):
            digest.update(_peer_versions(agent.command[0]).encode())
        key = digest.hexdigest()[:16]
        return self.directory / f"{agent.name}-{key}" / f"{task.id}-{task.digest()}.json"

    def get(self, agent: Agent, task: Task) -> dict[str, Any] | None:
        path = self.path(agent, task)
        if not self.enabled or not path.exists():
            return None
        try:
            record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            return None
        return record

    def put(self, agent: Agent, task: Task, record: dict[str, Any]) -> None:
        if record["meter"]["server_errors"]:
            return  # the server failed, not the agent: run it again next time
        path = self.path(agent, task)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")


# -- one run ------------------------------------------------------------------------------------


def result_line(stdout: str) -> dict[str, Any] | None:
    """The driver's JSON result: the last stdout line that is an object with an answer key."""
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and "answer" in data:
            return data
    return None


def agent_command(
    agent: Agent,
    home: Path,
    job: dict[str, Any],
    bwrap: str,
    host_proc: bool = False,
) -> list[str]:
    """The full bubblewrap command line that runs ``agent``'s driver on ``job``."""
    env = sandbox.base_env({**agent.env, "BENCH_SPEC": json.dumps(job, ensure_ascii=False)})
    return sandbox.bwrap_argv(
        bwrap,
        home,
        agent.command,
        env,
        network=True,
        ro_binds=agent.ro_binds,
        host_proc=host_proc,
    )


def run_agent(
    agent: Agent,
    task: Task,
    suite: Suite,
    server: str | None,
    model: str,
    options: argparse.Namespace,
    scratch: Path,
) -> dict[str, Any]:
    """Run ``agent`` on a fresh copy of ``task``'s tree; the record the cache keeps."""
    run_dir = Path(tempfile.mkdtemp(prefix=f"{agent.name}-{task.id}-", dir=scratch))
    home = run_dir / "home"
    build_home(home, suite, task)
    job: dict[str, Any] = {
        "model": model,
        "instruction": task.instruction,
        "max_steps": options.max_steps,
        "max_tokens": options.max_tokens,
        "temperature": options.temperature,
    }
    if agent.name == "oracle":
        job["solution"] = task.solution
    try:
        with contextlib.ExitStack() as stack:
            meter = None
            if server is not None:
                meter = stack.enter_context(Meter(server))
                job["base_url"] = meter.url
            argv = agent_command(agent, home, job, options.bwrap, options.nested_sandbox)
            finished = sandbox.run(argv, options.timeout)
            totals = meter.totals() if meter else _no_meter()
            calls = [c.to_json() for c in meter.calls] if meter else []
        snap = snapshot(home, skip=agent.skip)
    finally:
        from conch.execute.dryrun import remove_tree

        remove_tree(run_dir)
    line = result_line(finished.stdout) or {}
    error = line.get("error")
    if not line and not finished.timed_out:
        tail = finished.stderr.strip().splitlines()[-1:] or [""]
        error = f"no result line (exit {finished.exit_code}): {tail[0]}"[:500]
    return {
        "task": task.id,
        "digest": task.digest(),
        "agent": agent.name,
        "model": model,
        "answer": line.get("answer"),
        "steps": line.get("steps"),
        "tool_calls": line.get("tool_calls"),
        "agent_tokens": line.get("agent_tokens"),
        "error": error,
        "notes": line.get("notes") or {},
        "exit_code": finished.exit_code,
        "timed_out": finished.timed_out,
        "seconds": round(finished.seconds, 2),
        "meter": totals,
        "calls": calls,
        "stdout_tail": finished.stdout[-EXCERPT:],
        "stderr_tail": finished.stderr[-EXCERPT:],
        "snapshot": snapshot_to_json(snap),
    }


def _no_meter() -> dict[str, Any]:
    return {
        "model_calls": 0,
        "prompt_tokens": None,
        "completion_tokens": None,
        "calls_without_usage": 0,
        "server_errors": 0,
        "temperatures": [],
    }


def changes(before: Snapshot, after: Snapshot) -> list[str]:
    """What the agent changed in the project: ``+ new``, ``- deleted``, ``~ changed``."""
    lines: list[str] = []
    for path in sorted(set(before) | set(after)):
        if not (path == PROJECT or path.startswith(PROJECT + "/")):
            if path in before and path not in after:
                lines.append(f"- ~/{path}")
            continue
        shown = path.removeprefix(PROJECT + "/")
        if path not in after:
            lines.append(f"- {shown}")
        elif path not in before:
            lines.append(f"+ {shown}" + ("/" if after[path].kind == "dir" else ""))
        elif after[path].kind == "file" and (
            after[path].sha256 != before[path].sha256 or after[path].mode != before[path].mode
        ):
            lines.append(f"~ {shown}")
    return lines


def row_for(task: Task, suite: Suite, record: dict[str, Any], cached: bool) -> dict[str, Any]:
    """Judge a record: one row of the report."""
    snap = snapshot_from_json(record["snapshot"])
    verdict = judge(task, suite, snap, record["answer"])
    meter = record["meter"]
    return {
        "index": task.index,
        "task": task.id,
        "kind": task.kind,
        "difficulty": task.difficulty,
        "agent": record["agent"],
        "passed": verdict.passed,
        "failures": verdict.failures,
        "home_intact": verdict.home_intact,
        "tree_intact": verdict.tree_intact,
        "declined": verdict.declined,
        "answer": (record["answer"] or "")[:EXCERPT] if record["answer"] is not None else None,
        "steps": record["steps"],
        "tool_calls": record["tool_calls"],
        "model_calls": meter["model_calls"],
        "prompt_tokens": meter["prompt_tokens"],
        "completion_tokens": meter["completion_tokens"],
        "agent_tokens": record["agent_tokens"],
        "seconds": record["seconds"],
        "timed_out": record["timed_out"],
        "exit_code": record["exit_code"],
        "error": record["error"],
        "notes": record["notes"],
        "changes": changes(initial_snapshot(suite, task), snap),
        "stderr_tail": record["stderr_tail"][-600:],
        "cached": cached,
    }


# -- the whole run ------------------------------------------------------------------------------


def make_agents(names: list[str]) -> tuple[list[Agent], dict[str, str]]:
    """The agents asked for; those that cannot run here are skipped, with the reason."""
    agents: list[Agent] = []
    skipped: dict[str, str] = {}
    for name in names:
        if name not in ALL_AGENTS:
            raise SystemExit(f"unknown agent {name!r}; choose from {', '.join(ALL_AGENTS)}")
        try:
            agents.append(make_agent(name))
        except AgentUnavailable as exc:
            log(f"skipping {name}: {exc}")
            skipped[name] = str(exc)
    return agents, skipped


def evaluate(
    args: argparse.Namespace, server: str | None, model: str, model_label: str
) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    suite = load_suite()
    tasks = select(suite.tasks, args.tasks)
    if args.kinds:
        tasks = [t for t in tasks if t.kind in args.kinds]
    if args.limit is not None:
        tasks = tasks[: args.limit]
    if not tasks:
        raise SystemExit("no tasks selected")
    agents, skipped = make_agents(args.agents)
    if not agents:
        raise SystemExit("no agents to run")
    if server is None and any(a.uses_model for a in agents):
        raise SystemExit("these agents need a model server")
    slug = re.sub(r"[^\w.-]+", "_", Path(model).name)
    settings = {k: getattr(args, k) for k in ("timeout", "max_steps", "max_tokens", "temperature")}
    settings["nested_sandbox"] = args.nested_sandbox
    cache = ResultCache(CACHE_DIR / slug, not args.fresh, settings)
    rows: list[dict[str, Any]] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="conch-agent-bench-") as scratch:
        for i, task in enumerate(tasks, 1):
            marks = []
            for agent in agents:
                record = cache.get(agent, task)
                cached = record is not None
                if record is None:
                    record = run_agent(agent, task, suite, server, model, args, Path(scratch))
                    cache.put(agent, task, record)
                row = row_for(task, suite, record, cached)
                rows.append(row)
                marks.append(f"{agent.name} {'✓' if row['passed'] else '✗'}" + _costs(row))
            running = ", ".join(
                f"{a.name} {report.rate([r for r in rows if r['agent'] == a.name]).passed}/{i}"
                for a in agents
            )
            log(
                f"[{i}/{len(tasks)}] {task.id}: {'  '.join(marks)}  | {running}"
                f"  ({time.monotonic() - started:.0f} s)"
            )
    meta = {
        **run_meta("benchmarks.agent.run", model_label, server, len(tasks)),
        "agents": [a.name for a in agents],
        "skipped_agents": skipped,
        **settings,
        "seconds": round(time.monotonic() - started, 1),
    }
    return meta, rows, [a.name for a in agents]


def _costs(row: dict[str, Any]) -> str:
    parts = [f"{row['seconds']:.0f}s"]
    if row["model_calls"]:
        parts.append(f"{row['model_calls']} calls")
    if row["timed_out"]:
        parts.append("timeout")
    if row["cached"]:
        parts.append("cached")
    return " (" + ", ".join(parts) + ")"


def write_report(
    meta: dict[str, Any], rows: list[dict[str, Any]], agents: list[str], out: Path
) -> None:
    """Summaries added to ``meta``; writes ``out``.json and ``out``.md."""
    meta["summary"] = {
        agent: report.summary([r for r in rows if r["agent"] == agent]) for agent in agents
    }
    meta["paired"] = {
        other: report.paired(rows, "conch", other)
        for other in agents
        if other != "conch" and "conch" in agents
    }
    write_report_files(meta, rows, out, report.render(meta, rows, agents))


def join(paths: list[Path], out: Path) -> int:
    """One report from runs of the same agents on different tasks (shards of one run, run
    side by side against the same server), rows in task order; every run's command is kept."""
    shards = read_shards(paths, "agent", order="index")
    reports, agents = shards.reports, shards.names
    first = reports[0]["meta"]
    meta = {
        **{k: first[k] for k in ("model", "server", "timeout", "max_steps", "max_tokens")},
        "temperature": first["temperature"],
        "nested_sandbox": first.get("nested_sandbox", False),
        "command": " ; ".join(rep["meta"]["command"] for rep in reports),
        "date": ", ".join(sorted({rep["meta"]["date"] for rep in reports})),
        "tasks": shards.tasks,
        "agents": agents,
        "skipped_agents": first.get("skipped_agents", {}),
        "seconds": round(max(rep["meta"]["seconds"] for rep in reports), 1),
        "joined_from": [str(p) for p in paths],
    }
    write_report(meta, shards.rows, agents, out)
    return 0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.agent.run", description=__doc__.splitlines()[0]
    )

    def names(text: str) -> list[str]:
        return [t.strip() for t in text.split(",") if t.strip()]

    parser.add_argument(
        "--agents",
        default=",".join(DEFAULT_AGENTS),
        type=names,
        help=f"comma-separated agents (default: %(default)s; also {', '.join(ALL_AGENTS[4:])})",
    )
    parser.add_argument("--tasks", default=None, help="comma-separated task ids or indexes")
    parser.add_argument("--kinds", default=None, type=names, help="only tasks of these kinds")
    parser.add_argument("--limit", type=int, default=None, help="only the first N tasks")
    parser.add_argument("--server", default=None, help="an OpenAI-compatible base URL (…/v1)")
    parser.add_argument("--out", default="benchmarks/results/agent", help="output path stem")
    parser.add_argument("--fresh", action="store_true", help="ignore cached runs")
    parser.add_argument(
        "--timeout", type=float, default=300.0, help="wall-time limit per run, s (default 300)"
    )
    parser.add_argument(
        "--max-steps", type=int, default=10, help="step limit for agents that take one"
    )
    parser.add_argument("--max-tokens", type=int, default=1024, help="tokens per model reply")
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument(
        "--nested-sandbox",
        action="store_true",
        help="bind the host's /proc into the sandbox so an agent can start bubblewrap itself "
        "(lets the agent read host processes' /proc entries)",
    )
    parser.add_argument(
        "--join",
        nargs="+",
        metavar="REPORT.json",
        help="run nothing: combine reports of the same agents on different tasks into --out",
    )
    parser.add_argument("--list", action="store_true", help="list the tasks and stop")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.join:
        return join([Path(p) for p in args.join], Path(args.out))
    if args.list:
        for task in load_suite().tasks:
            print(f"{task.index:3} {task.id:32} {task.kind:14} d{task.difficulty}")
        return 0
    stop_on_signals()
    args.bwrap = sandbox.bwrap_path()
    needs_model = any(name not in ("oracle", "noop") for name in args.agents)
    with contextlib.ExitStack() as stack:
        server: str | None = None
        model = model_label = "none"
        if args.server:
            server = args.server.rstrip("/")
        elif needs_model:
            from benchmarks.engine import serve

            server, model_file = stack.enter_context(serve(WORK / "engine-server.log"))
            model_label = f"{Path(model_file).name} (conch's embedded model)"
        if server is not None:
            from benchmarks.engine import server_model

            model = server_model(server)
            if args.server:
                model_label = model
        meta, rows, agents = evaluate(args, server, model, model_label)
    write_report(meta, rows, agents, Path(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
