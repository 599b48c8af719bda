"""Command accuracy on NL2SH-ALFA: the 258 clean tasks of its test split, each tool's command
run in a fresh copy of the task's file tree inside bubblewrap and compared with the task's two
reference commands (strict, normalised and judged levels; benchmarks/accuracy/README.md).

Every tool uses conch's packaged model behind one engine server, at temperature 0: conch at
its defaults, the bare model (a minimal prompt, and with markdown stripped), llm-cmd and
shell-gpt from their own venv (benchmarks/accuracy/setup_peers.sh; a peer missing is left
out, and the headline says so). Answers are cached per tool, task and code
(benchmarks/.work/candidates), so an interrupted run resumes; ``--fresh`` asks anew.
"""

from __future__ import annotations

from typing import Any

from benchmarks.accuracy import run as harness
from benchmarks.measured import publish

NAME = "accuracy"
TOOLS = harness.DEFAULT_TOOLS
LABELS = {
    "bare+md": "bare model + markdown stripping",
    "bare": "bare model, minimal prompt",
    "sgpt": "shell-gpt",
}


def headline(meta: dict[str, Any], asked: list[str]) -> list[str]:
    clean = {name: s["clean"] for name, s in meta["summary"].items()}
    ranked = sorted(clean, key=lambda name: -clean[name]["normalised"]["rate"])
    shown = ", ".join(
        f"{LABELS.get(name, name)} {100 * clean[name]['normalised']['rate']:.1f}%"
        for name in ranked
    )
    lines = [f"accuracy, NL2SH-ALFA, {meta['clean_tasks']} clean tasks, normalised: {shown}"]
    missing = [name for name in asked if name not in clean]
    if missing:
        lines.append(f"not run (see the log): {', '.join(missing)}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = publish.parser(NAME, __doc__)
    parser.add_argument(
        "--tools", default=",".join(TOOLS), help="comma-separated tools (default %(default)s)"
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N tasks")
    parser.add_argument("--tasks", default=None, help="comma-separated task indexes")
    parser.add_argument("--fresh", action="store_true", help="ignore cached answers")
    args = parser.parse_args(argv)
    asked = [t.strip() for t in args.tools.split(",") if t.strip()]
    partial = bool(args.tasks or args.limit is not None)
    only = ",".join(asked) if asked != list(TOOLS) else ""
    run = publish.begin(NAME, argv, args.out, partial, only)
    options = ["--tools", ",".join(asked), "--out", str(run.stem)]
    options += ["--tasks", args.tasks] if args.tasks else []
    options += ["--limit", str(args.limit)] if args.limit is not None else []
    options += ["--fresh"] if args.fresh else []
    with publish.defaults(), publish.runner_argv(options):
        harness.main(options)  # serves the packaged model itself, one request at a time
    run.stamp()
    return run.finish(headline(publish.read_json(run.json_path)["meta"], asked))
