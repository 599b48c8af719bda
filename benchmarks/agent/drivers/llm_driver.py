"""Run one task with Simon Willison's llm (its own package, in its own venv), print the result.

    BENCH_SPEC=... python llm_driver.py

The server is registered as llm's OpenAI-compatible model ``bench`` (``extra-openai-models.yaml``
under ``LLM_USER_PATH`` in the run's home, with ``supports_tools: true``). The instruction is
sent through llm's Python API, ``model.conversation(...).chain(...)``, with the four tools of
``peer_tools.py`` (read_file, write_file, list_files, run_shell) as function tools; llm runs
every tool call the model makes and sends the result back, as ``llm --functions`` does, until
the model answers without a tool call or the chain limit is reached. No system prompt is
given (llm has none by default). The answer is the text of the chain's last response.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peer_tools
import protocol

MODEL_ID = "bench"


def configure(base_url: str, model: str) -> None:
    """Register the server as llm's model ``bench`` in a fresh ``LLM_USER_PATH``."""
    user_dir = Path(os.environ.setdefault("LLM_USER_PATH", str(Path.home() / ".llm-bench")))
    user_dir.mkdir(parents=True, exist_ok=True)
    # JSON strings and booleans are valid YAML, so no YAML library is needed here.
    entry = (
        f"- model_id: {MODEL_ID}\n"
        f"  model_name: {json.dumps(model)}\n"
        f"  api_base: {json.dumps(base_url)}\n"
        "  supports_tools: true\n"
    )
    (user_dir / "extra-openai-models.yaml").write_text(entry, encoding="utf-8")


def main() -> int:
    job = protocol.spec()
    configure(job["base_url"], job["model"])
    try:
        import llm
    except ImportError as exc:
        protocol.emit(None, error=protocol.describe(exc))
        return 1
    model = llm.get_model(MODEL_ID)
    conversation = model.conversation(
        tools=list(peer_tools.TOOLS), chain_limit=int(job.get("max_steps", 10))
    )
    options = {
        "temperature": job.get("temperature", 0.0),
        "max_tokens": job.get("max_tokens", 1024),
    }
    responses = []
    error: str | None = None
    try:
        chain = conversation.chain(job["instruction"], options=options)
        for response in chain.responses():
            response.text()  # run the response to its end before the next round
            responses.append(response)
    except Exception as exc:
        error = protocol.describe(exc)
    answer = responses[-1].text() if responses else None
    tokens = {"input": 0, "output": 0}
    for response in responses:
        usage = response.usage()
        tokens["input"] += usage.input or 0
        tokens["output"] += usage.output or 0
    protocol.emit(
        answer,
        steps=len(responses),
        tool_calls=sum(len(r.tool_calls()) for r in responses),
        agent_tokens=tokens,
        error=error,
        notes={"tools": dict(peer_tools.CALLS)},
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
