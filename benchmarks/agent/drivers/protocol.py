"""What a driver reads and prints (standard library only: every agent's venv imports it).

A driver runs inside the sandbox, in the task's project directory. It reads its job from the
environment variable ``BENCH_SPEC`` (JSON: ``base_url``, ``model``, ``instruction``,
``max_steps``, ``max_tokens``, ``temperature``, and ``solution`` for the oracle) and prints,
as the last line of its stdout, one JSON object::

    {"answer": "...", "steps": 3, "tool_calls": 5,
     "agent_tokens": {"input": 1200, "output": 80}, "error": null, "notes": {}}

``steps`` and ``tool_calls`` are what the agent itself reports (None when it reports
nothing); ``agent_tokens`` likewise. The benchmark also counts model calls and tokens itself,
from the server's replies.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any

RESULT_KEY = "answer"


def spec() -> dict[str, Any]:
    """The job this driver was started for."""
    data: dict[str, Any] = json.loads(os.environ["BENCH_SPEC"])
    return data


def emit(
    answer: str | None,
    *,
    steps: int | None = None,
    tool_calls: int | None = None,
    agent_tokens: dict[str, int] | None = None,
    error: str | None = None,
    notes: dict[str, Any] | None = None,
) -> None:
    """Print the result line (after a newline, so it starts a line of its own)."""
    line = {
        RESULT_KEY: answer,
        "steps": steps,
        "tool_calls": tool_calls,
        "agent_tokens": agent_tokens,
        "error": error,
        "notes": notes or {},
    }
    sys.stdout.write("\n" + json.dumps(line, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def describe(exc: BaseException) -> str:
    """One line naming an exception, and the traceback to stderr for the record."""
    traceback.print_exception(exc, file=sys.stderr)
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return text[:500]
