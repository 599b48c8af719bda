"""Run one task with conch's agent (``conch.Session``), print the result line.

    BENCH_SPEC=... python conch_driver.py        (with the Python that has conch installed)

ASSUMES this part of conch's library API (fix ``make_session`` if it changes):

    Session.remote(url, model, *, tools=ToolOptions(...), options=GenerationOptions(...),
                   limits=Limits(max_iterations=N)) -> Session
    Session.with_default_tools(True) -> Session        # the built-in tools ToolOptions allow
    Session.chat(text, on_event=callback) -> str       # one turn of the tool loop
    events: ToolStarted (one per tool call), TurnFinished(iterations, usage)

The session gets what ``conch run --allow-dangerous`` offers: the fs_* file tools and
``evaluate`` (where a sandbox can run it) confined to the project (``ToolOptions.root``),
``bash`` in full-autonomous mode (runs whatever the safety policy allows, asks no one),
plan and datetime.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import protocol


def make_session(job: dict[str, Any]) -> Any:
    """conch's agent as the benchmark runs it: the server, all built-in tools, the limits."""
    from conch import GenerationOptions, Session, ToolOptions
    from conch.agent.loop import Limits
    from conch.policy import ExecutionMode

    # What `conch run --allow-dangerous` offers: the file tools, bash, evaluate where a
    # sandbox can run, plan and datetime (no web, no memory).
    tools = ToolOptions(root=Path.cwd(), bash=True, mode=ExecutionMode.FULL)
    options = GenerationOptions(temperature=job["temperature"], max_tokens=job["max_tokens"])
    limits = Limits(max_iterations=int(job["max_steps"]))
    tool_calls = sys.argv[1] if len(sys.argv) > 1 else "auto"  # ai.tool_calls
    variant = sys.argv[2] if len(sys.argv) > 2 else ""  # "core" or "steps"
    core = variant == "core"
    if variant == "noeval":  # the tools without evaluate
        tools = ToolOptions(root=Path.cwd(), bash=True, mode=ExecutionMode.FULL, evaluate=False)
    if variant in (
        "act",
        "act-only",
        "act-first",
    ):  # do: steps said in words, the one-shot pipeline acts
        tools = ToolOptions(root=Path.cwd(), bash=True, mode=ExecutionMode.FULL, act=True)
    if core:  # fewer tools: no plan, datetime, fs_glob, fs_mkdir or fs_diff
        tools = ToolOptions(
            root=Path.cwd(), bash=True, mode=ExecutionMode.FULL, plan=False, datetime=False
        )
    session = Session.remote(
        job["base_url"],
        job["model"],
        tools=tools,
        options=options,
        limits=limits,
        tool_calls=tool_calls,
        stepwise=True if variant == "steps" else None,  # None: conch's default
        act_first=variant == "act-first",
    )
    left_out = CORE_LEFT_OUT if core else ACT_ONLY_LEFT_OUT if variant == "act-only" else None
    if left_out is None:
        return session.with_default_tools(True)
    from conch.agent.builtin import default_tools

    session.with_default_tools(False)
    for tool in default_tools(tools, None, lambda: session.provider):
        if tool.name not in left_out:
            session.add_tool(tool)
    return session


CORE_LEFT_OUT = {"fs_glob", "fs_mkdir", "fs_diff"}
ACT_ONLY_LEFT_OUT = {"bash", "evaluate"}  # commands only through do


def main() -> int:
    job = protocol.spec()
    notes: dict[str, Any] = {}
    try:
        from conch.execute.sandbox import find_sandbox

        notes["conch_sandbox_usable"] = find_sandbox().usable  # evaluate needs bubblewrap
        session = make_session(job)
    except Exception as exc:
        protocol.emit(None, error=protocol.describe(exc), notes=notes)
        return 1
    counts = {"tool_calls": 0, "steps": None, "input": None, "output": None}

    trace: list[str] = []  # what the agent did, for reading a failure afterwards
    notes["trace"] = trace

    def on_event(event: object) -> None:
        kind = type(event).__name__
        if kind == "ToolStarted":
            counts["tool_calls"] = int(counts["tool_calls"] or 0) + 1
            call = getattr(event, "call", None)
            trace.append(f"{getattr(call, 'name', '?')} {getattr(call, 'arguments', '')[:300]}")
        elif kind == "ToolFinished":
            result = getattr(event, "result", None)
            mark = "error" if getattr(result, "is_error", False) else "ok"
            trace.append(f"  -> {mark}: {getattr(result, 'content', '')[:200]}")
        elif kind == "TurnFinished":
            usage = getattr(event, "usage", None)
            counts["steps"] = getattr(event, "iterations", None)
            counts["input"] = getattr(usage, "prompt_tokens", None)
            counts["output"] = getattr(usage, "completion_tokens", None)

    answer: str | None = None
    error: str | None = None
    try:
        answer = str(session.chat(job["instruction"], on_event=on_event))
    except Exception as exc:
        error = protocol.describe(exc)
    tokens = None
    if counts["input"] is not None:
        tokens = {"input": int(counts["input"]), "output": int(counts["output"] or 0)}
    protocol.emit(
        answer,
        steps=counts["steps"],
        tool_calls=counts["tool_calls"],
        agent_tokens=tokens,
        error=error,
        notes=notes,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
