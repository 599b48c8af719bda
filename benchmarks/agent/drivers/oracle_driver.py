"""A stand-in agent that asks no model: it does what the task's reference solution says.

    BENCH_SPEC=... python oracle_driver.py [--noop]

``oracle`` (the default) applies the ``solution`` in BENCH_SPEC in the working directory
(renames, deletions, writes) and answers with its answer; every task should pass, so a run
of it checks the sandbox, the runner and the judge end to end. ``--noop`` does nothing and
answers nothing: only the refuse tasks should pass.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import protocol


def main() -> int:
    job = protocol.spec()
    if "--noop" in sys.argv[1:]:
        protocol.emit("", steps=0, tool_calls=0)
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository
    from benchmarks.agent.tasks import apply_solution

    solution = job.get("solution") or {}
    try:
        answer = apply_solution(Path.cwd(), solution)
    except Exception as exc:
        protocol.emit(None, error=protocol.describe(exc))
        return 1
    actions = sum(len(solution.get(k) or ()) for k in ("rename", "delete", "write"))
    protocol.emit(answer, steps=1, tool_calls=actions)
    return 0


if __name__ == "__main__":
    sys.exit(main())
