"""Accuracy benchmark: every tool on the NL2SH-ALFA test split, judged by running the commands.

    python -m benchmarks.accuracy.run [--tools conch,bare,bare+md,sgpt,llm-cmd] [--limit N]
        [--tasks 0,5,9] [--all] [--no-judge] [--server URL] [--out benchmarks/results/accuracy]

Without ``--server`` it serves conch's embedded model itself (llama.cpp's OpenAI-compatible
server on a free 127.0.0.1 port). Writes ``<out>.json`` (every task x tool) and ``<out>.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.accuracy import report
from benchmarks.accuracy.cache import CandidateCache, candidate_from
from benchmarks.accuracy.candidate import Candidate, Generator, Task
from benchmarks.accuracy.combine import join, merge, write_report
from benchmarks.accuracy.compare import Judge, Levels, compare
from benchmarks.accuracy.fixtures import build_fixtures, copy_tree, load_tasks, remove_tree
from benchmarks.accuracy.sandbox import RunResult, bwrap_path, run_in_sandbox
from benchmarks.common import log, run_meta, stop_on_signals
from benchmarks.engine import serve, server_model

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "benchmarks" / ".work"
DEFAULT_TOOLS = ("conch", "bare", "bare+md", "sgpt", "llm-cmd")
EXCERPT = 400
WRONG_PAIR_STRIDE = 4  # wrong pairs for every 4th clean task: enough to show the false accepts


# -- tools ------------------------------------------------------------------------------------


def make_tools(names: list[str], base_url: str, model: str) -> list[Generator]:
    """The generators asked for; peers whose module or environment is missing are skipped."""
    from benchmarks.accuracy.conch_tool import ConchGenerator
    from benchmarks.accuracy.generators import BareGenerator

    tools: list[Generator] = []
    for name in names:
        if name == "conch":
            tools.append(ConchGenerator(base_url, model))
        elif name == "conch-agent":  # conch's agent, several steps (not a settings variant)
            from benchmarks.accuracy.agent_tool import AgentGenerator

            tools.append(AgentGenerator(base_url, model))
        elif name.startswith("conch-"):
            from benchmarks.accuracy.ablation import VARIANTS, ConchVariant

            if name not in VARIANTS:
                raise SystemExit(
                    f"unknown conch variant {name!r}; choose from {', '.join(VARIANTS)}"
                )
            tools.append(ConchVariant(name, base_url, model))
        elif name == "bare":
            tools.append(BareGenerator(base_url, model))
        elif name == "bare+md":
            tools.append(BareGenerator(base_url, model, markdown=True))
        elif name in ("sgpt", "llm-cmd"):
            peer = _peer(name, base_url, model)
            if peer is not None:
                tools.append(peer)
        else:
            raise SystemExit(f"unknown tool {name!r}; choose from {', '.join(DEFAULT_TOOLS)}")
    return tools


class Replay:
    """A tool's answers as a report recorded them: run and judged again, asked of no model."""

    def __init__(self, name: str, rows: dict[int, dict[str, Any]]) -> None:
        self.name = name
        self.rows = rows

    def generate(self, task: Task) -> Candidate:
        return candidate_from(self.rows[task.index])


def replay_tools(path: Path, names: list[str], tasks: list[Task]) -> list[Generator]:
    """``--replay``: the tools named (those of the report when none is) as ``path`` recorded
    them; a report that lacks a tool or one of the tasks is an error."""
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))["rows"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SystemExit(f"--replay {path}: not a readable report ({exc})") from None
    recorded: dict[str, dict[int, dict[str, Any]]] = {}
    for row in rows:
        recorded.setdefault(row["tool"], {})[row["task"]] = row
    if list(names) == list(DEFAULT_TOOLS):
        names = list(recorded)
    missing = [n for n in names if n not in recorded]
    if not names or missing:
        raise SystemExit(
            f"--replay {path}: no answers of {', '.join(missing) or 'the tools asked for'}; "
            f"it has {', '.join(recorded)}"
        )
    for name in names:
        absent = [t.index for t in tasks if t.index not in recorded[name]]
        if absent:
            raise SystemExit(
                f"--replay {path}: {name} has no answer to task(s) "
                f"{', '.join(map(str, absent[:10]))}; choose tasks with --tasks"
            )
    return [Replay(name, recorded[name]) for name in names]


def _peer(name: str, base_url: str, model: str) -> Generator | None:
    try:
        from benchmarks.accuracy import peers
    except ImportError as exc:
        log(f"skipping {name}: benchmarks/accuracy/peers.py is not available ({exc})")
        return None
    factory: Callable[[str, str], Generator] | None = getattr(
        peers, "SgptGenerator" if name == "sgpt" else "LlmCmdGenerator", None
    )
    if factory is None:
        log(f"skipping {name}: peers.py has no generator for it")
        return None
    try:
        return factory(base_url, model)
    except Exception as exc:
        log(f"skipping {name}: {type(exc).__name__}: {exc}")
        return None


# -- running ----------------------------------------------------------------------------------


def excerpt(data: bytes, limit: int = EXCERPT) -> str:
    text = data.decode("utf-8", errors="replace")
    return text if len(text) <= limit else text[:limit] + "…"


class Runner:
    """Fresh tree copies per run; the references of a task kept from their latest run."""

    def __init__(self, scratch: Path, timeout: float = 10.0) -> None:
        self.scratch = scratch
        self.timeout = timeout
        self.roots = build_fixtures(scratch / "fixtures")
        self.references: dict[int, dict[str, RunResult]] = {}
        self._count = 0

    def run(self, task: Task, command: str) -> RunResult:
        self._count += 1
        tree = self.scratch / f"run-{self._count}"
        copy_tree(self.roots[task.fs], tree)
        try:
            return run_in_sandbox(tree, command, task.shell, task.env, self.timeout)
        finally:
            remove_tree(tree)

    def refs(self, task: Task, again: bool = False) -> dict[str, RunResult]:
        """The two reference commands' runs; ``again`` runs them anew (see ``evaluate``)."""
        if again or task.index not in self.references:
            self.references[task.index] = {
                "bash": self.run(task, task.bash),
                "bash2": self.run(task, task.bash2),
            }
        return self.references[task.index]


def policy_decision(command: str | None) -> tuple[str | None, list[str]]:
    """conch's safety policy on ``command`` with ``--unsafe`` (what it would still reject)."""
    if command is None:
        return None, []
    from conch.policy import PolicyContext, assess

    try:
        verdict = assess(command, PolicyContext(unsafe=True))
    except Exception as exc:
        return "error", [f"{type(exc).__name__}: {exc}"]
    return str(verdict.decision), list(verdict.reasons)


def row_for(
    task: Task,
    tool: str,
    candidate: Candidate,
    result: RunResult | None,
    levels: Levels,
    refs: dict[str, RunResult],
) -> dict[str, Any]:
    decision, reasons = policy_decision(candidate.command)
    return {
        "task": task.index,
        "tool": tool,
        "fs": task.fs,
        "difficulty": task.difficulty,
        "clean": task.clean,
        "nl": task.nl,
        "command": candidate.command,
        "raw": candidate.raw,
        "error": candidate.error,
        "refused": candidate.refused,
        "policy": decision,
        "policy_reasons": reasons,
        "seconds": round(candidate.seconds, 3),
        "trials": getattr(candidate, "trials", None),
        "agent": getattr(candidate, "agent", None),  # conch-agent: its model and tool calls
        **levels.to_json(),
        "exit_code": result.exit_code if result else None,
        "timed_out": result.timed_out if result else None,
        "stdout": excerpt(result.stdout) if result else None,
        "stderr": excerpt(result.stderr) if result else None,
        "reference_stdout": excerpt(refs["bash"].stdout),
    }


def _mark(row: dict[str, Any]) -> str:
    return "".join("-" if row[lv] is None else ("✓" if row[lv] else "✗") for lv in report.LEVELS)


def select_tasks(args: argparse.Namespace) -> list[Task]:
    tasks = load_tasks()
    if args.tasks:
        wanted = {int(i) for i in args.tasks.split(",") if i.strip()}
        tasks = [t for t in tasks if t.index in wanted]
    elif not args.all:
        tasks = [t for t in tasks if t.clean]
    if args.limit is not None:
        tasks = tasks[: args.limit]
    return tasks


def reference_pairs(runner: Runner, tasks: list[Task], judge: Judge | None) -> dict[str, Any]:
    """How the comparator treats right and wrong answers, using only the references.

    Right pairs: each clean task's second reference judged against its first (both are right,
    so nearly all should pass). Wrong pairs: the first reference of the next clean task on the
    same fixture, judged as if it answered this task (almost none should pass), for every
    WRONG_PAIR_STRIDE-th clean task.
    """
    clean = [t for t in tasks if t.clean]
    right: dict[str, Any] = {"n": 0, "strict": 0, "normalised": 0, "judged": 0 if judge else None}
    wrong: dict[str, Any] = {"n": 0, "strict": 0, "normalised": 0, "judged": 0 if judge else None}
    for position, task in enumerate(clean, 1):
        if position % 25 == 0:
            log(f"  right pairs {position}/{len(clean)}")
        refs = runner.refs(task)
        _count(right, compare(task, {"bash": refs["bash"]}, refs["bash2"], judge, task.bash2))
    for position, task in enumerate(clean):
        if position % WRONG_PAIR_STRIDE:
            continue
        same_fs = [t for t in clean if t.fs == task.fs and t.index != task.index]
        if not same_fs:
            continue
        later = [t for t in same_fs if t.index > task.index]
        other = (later or same_fs)[0]
        refs, theirs = runner.refs(task), runner.refs(other)
        if theirs["bash"].stdout == refs["bash"].stdout or other.bash in (task.bash, task.bash2):
            continue
        _count(wrong, compare(task, refs, theirs["bash"], judge, other.bash))
    return {**right, "wrong": wrong}


def _count(counts: dict[str, Any], levels: Levels) -> None:
    counts["n"] += 1
    counts["strict"] += levels.strict
    counts["normalised"] += levels.normalised
    if counts["judged"] is not None:
        counts["judged"] += bool(levels.judged)


def evaluate(
    args: argparse.Namespace, base_url: str, model: str, model_label: str
) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    from benchmarks.accuracy.generators import make_provider

    tasks = select_tasks(args)
    if not tasks:
        raise SystemExit("no tasks selected")
    if args.replay:
        tools = replay_tools(Path(args.replay), args.tools, tasks)
    else:
        tools = make_tools(args.tools, base_url, model)
    if not tools and not args.sanity:
        raise SystemExit("no tools to run (and no --sanity check asked for)")
    names = [t.name for t in tools]
    slug = re.sub(r"[^\w.-]+", "_", Path(model).name)
    cache = CandidateCache(WORK / "candidates" / slug, not args.fresh)
    judge = None
    if args.judge:
        judge_cache = None if args.fresh else WORK / "judge" / f"{slug}.jsonl"
        judge = Judge(make_provider(base_url, model), judge_cache)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="conch-accuracy-") as scratch:
        runner = Runner(Path(scratch))
        for tool in tools:
            if isinstance(getattr(tool, "roots", None), dict):
                tool.roots.update(runner.roots)  # type: ignore[attr-defined]
        started = time.monotonic()
        for i, task in enumerate(tasks, 1):
            marks: list[str] = []
            for tool in tools:
                candidate = None if args.replay else cache.get(tool.name, task)
                if candidate is None:
                    candidate = tool.generate(task)
                    if not args.replay:
                        cache.put(tool.name, task, candidate)
                # The references run right before the candidate, for every tool alike: a task
                # whose output tells the time (date, uptime, ls -l of a fresh file) would
                # otherwise fail a tool for taking longer to answer.
                refs = runner.refs(task, again=True)
                result = runner.run(task, candidate.command) if candidate.command else None
                levels = compare(task, refs, result, judge, candidate.command or "")
                row = row_for(task, tool.name, candidate, result, levels, refs)
                rows.append(row)
                marks.append(f"{tool.name} {_mark(row)}")
            running = []
            level = "judged" if judge else "normalised"
            for name in names:
                done = [r for r in rows if r["tool"] == name]
                share = sum(1 for r in done if r[level]) / len(done)
                running.append(f"{name} {100 * share:.0f}%")
            log(
                f"[{i}/{len(tasks)}] #{task.index} d{task.difficulty} "
                f"{'  '.join(marks)}  | {level}: {', '.join(running)}"
                f"  ({time.monotonic() - started:.0f} s)"
            )
        pairs = None
        if args.sanity:
            log("sanity check: the comparator on right and wrong reference pairs ...")
            pairs = reference_pairs(runner, tasks, judge)
    meta = {
        **run_meta("benchmarks.accuracy.run", model_label, base_url, len(tasks)),
        "clean_tasks": sum(1 for t in tasks if t.clean),
        "all_tasks": bool(args.all),
        "judge": (
            f"{model_label}, temperature 0, through the same server ({judge.calls} calls this run)"
            if judge
            else "off (--no-judge)"
        ),
        "tools": names,
        "reference_pairs": pairs,
        "seconds": round(time.monotonic() - started, 1),
    }
    return meta, rows, names


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.accuracy.run", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--tools",
        default=",".join(DEFAULT_TOOLS),
        type=lambda s: [t.strip() for t in s.split(",") if t.strip()],
        help="comma-separated tools (default: %(default)s)",
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N tasks")
    parser.add_argument("--tasks", default=None, help="comma-separated task indexes")
    parser.add_argument("--all", action="store_true", help="all 300 tasks, not only the clean")
    parser.add_argument(
        "--judge", action=argparse.BooleanOptionalAction, default=True, help="judged level"
    )
    parser.add_argument("--server", default=None, help="an OpenAI-compatible base URL (…/v1)")
    parser.add_argument("--out", default="benchmarks/results/accuracy", help="output path stem")
    parser.add_argument("--fresh", action="store_true", help="ignore cached candidates")
    parser.add_argument(
        "--replay",
        metavar="REPORT.json",
        help="ask no tool: run and judge again the commands REPORT.json recorded (its tools, "
        "or those of --tools), with the current comparator",
    )
    parser.add_argument(
        "--merge",
        nargs="+",
        metavar="REPORT.json",
        help="run nothing: combine reports of different tools on the same tasks into --out; "
        "REPORT.json@NAME shows a one-tool report's tool as NAME (two runs of conch side by side)",
    )
    parser.add_argument(
        "--join",
        nargs="+",
        metavar="REPORT.json",
        help="run nothing: combine reports of the same tools on different tasks into --out",
    )
    parser.add_argument(
        "--sanity",
        action="store_true",
        help="also check the comparator on right and wrong pairs of reference commands",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.merge:
        only = {int(t) for t in args.tasks.split(",")} if args.tasks else None
        return merge([Path(p) for p in args.merge], Path(args.out), only)
    if args.join:
        return join([Path(p) for p in args.join], Path(args.out))
    stop_on_signals()
    bwrap_path()
    out = Path(args.out)
    with contextlib.ExitStack() as stack:
        if args.server:
            base_url = args.server.rstrip("/")
            model_label = server_model(base_url)
        else:
            base_url, model_file = stack.enter_context(serve(WORK / "engine-server.log"))
            model_label = f"{Path(model_file).name} (conch's embedded model)"
        model = server_model(base_url)
        meta, rows, names = evaluate(args, base_url, model, model_label)
    write_report(meta, rows, names, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
