"""Run one task with smolagents (its own package, in its own venv), print the result line.

    BENCH_SPEC=... python smolagents_driver.py toolcalling|code

``toolcalling``: smolagents' ``ToolCallingAgent`` (the model calls tools through the server's
tool-call API). ``code``: its ``CodeAgent`` (the model writes Python that smolagents runs in
its local, restricted interpreter, calling the tools as functions). Both get the four tools
of ``peer_tools.py`` (read_file, write_file, list_files, run_shell) and smolagents' own
final_answer tool; smolagents ships no file or shell tools, and its base tools (web search,
web page visits, a Python interpreter tool) need the internet, so they are not added. The
model is smolagents' ``OpenAIServerModel`` pointed at the benchmark's server.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peer_tools
import protocol

DUMMY_KEY = "sk-bench-dummy"  # the server ignores it; the client wants one


def main() -> int:
    style = sys.argv[1] if len(sys.argv) > 1 else "toolcalling"
    job = protocol.spec()
    try:
        from smolagents import (
            ActionStep,
            CodeAgent,
            LogLevel,
            OpenAIServerModel,
            ToolCallingAgent,
            tool,
        )
    except ImportError as exc:
        protocol.emit(None, error=protocol.describe(exc))
        return 1
    model = OpenAIServerModel(
        model_id=job["model"],
        api_base=job["base_url"],
        api_key=DUMMY_KEY,
        temperature=job.get("temperature", 0.0),
        max_tokens=job.get("max_tokens", 1024),
    )
    tools = [tool(function) for function in peer_tools.TOOLS]
    agent_class = CodeAgent if style == "code" else ToolCallingAgent
    agent = agent_class(
        tools=tools,
        model=model,
        max_steps=int(job.get("max_steps", 10)),
        verbosity_level=LogLevel.OFF,
    )
    answer: str | None = None
    error: str | None = None
    state = None
    try:
        result = agent.run(job["instruction"], return_full_result=True)
        answer = None if result.output is None else str(result.output)
        state = result.state
    except Exception as exc:
        error = protocol.describe(exc)
    steps = [s for s in agent.memory.steps if isinstance(s, ActionStep)]
    usage = agent.monitor.get_total_token_counts()
    protocol.emit(
        answer,
        steps=len(steps),
        tool_calls=sum(peer_tools.CALLS.values()),
        agent_tokens={"input": usage.input_tokens, "output": usage.output_tokens},
        error=error,
        notes={
            "state": state,
            "tools": dict(peer_tools.CALLS),
            "step_errors": sum(1 for s in steps if s.error is not None),
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
