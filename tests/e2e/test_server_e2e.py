"""``conch serve`` on the real embedded model through the warm model service, driven by the
official ``openai`` client: a plain answer, a client tool called through tool_choice, and a
question answered with a server-side tool whose call streams as a ``conch.tool_call``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from conch.agent.builtin import ToolOptions
from conch.config.settings import Settings
from conch.host.auth import new_token
from conch.server.config import ServerConfig
from conch.server.models import ModelTable
from conch.server.run import bound_port, serving

pytestmark = pytest.mark.e2e

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "the city's name"}},
            "required": ["city"],
        },
    },
}


@pytest.fixture
def client(
    runtime_dir: Path, embedded_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[openai.OpenAI]:
    """The openai client on a conch serve over the embedded model (model service on)."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime_dir))
    monkeypatch.delenv("CONCH_DAEMON", raising=False)
    (tmp_path / "secret.txt").write_text("The code word is PELICAN.\n", encoding="utf-8")
    key = new_token()
    config = ServerConfig(port=0, api_key=key, tools=ToolOptions(root=tmp_path, audit=False))
    with serving(config, ModelTable.from_settings(Settings())) as server:
        base = f"http://127.0.0.1:{bound_port(server)}/v1"
        yield openai.OpenAI(base_url=base, api_key=key, max_retries=0, timeout=600)


def _model(client: openai.OpenAI) -> str:
    return client.models.list().data[0].id


def test_the_embedded_model_answers_through_the_api(client: openai.OpenAI) -> None:
    reply = client.chat.completions.create(
        model=_model(client),
        messages=[{"role": "user", "content": "What is 2 + 3? Answer with the number only."}],
        tool_choice="none",
        max_completion_tokens=16,
    )
    assert "5" in (reply.choices[0].message.content or "")
    assert reply.usage is not None and reply.usage.completion_tokens > 0


def test_the_embedded_model_calls_the_client_s_tool(client: openai.OpenAI) -> None:
    stream = client.chat.completions.create(
        model=_model(client),
        messages=[{"role": "user", "content": "What is the weather in Paris right now?"}],
        tools=[WEATHER],  # type: ignore[list-item]
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    calls = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
    assert calls, "the model made no tool call"
    assert calls[0].index == 0 and calls[0].function is not None
    assert calls[0].function.name == "get_weather"
    assert "paris" in json.loads(calls[0].function.arguments or "{}").get("city", "").lower()
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] == "tool_calls"
    assert chunks[-1].usage is not None


def test_the_embedded_model_reads_a_file_on_the_server(client: openai.OpenAI) -> None:
    stream = client.chat.completions.create(
        model=_model(client),
        messages=[{"role": "user", "content": "What is the code word written in secret.txt?"}],
        stream=True,
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    extras = [c.model_extra["conch"] for c in chunks if c.model_extra and "conch" in c.model_extra]
    reads = [e for e in extras if e["type"] == "conch.tool_call" and e["name"] == "fs_read"]
    assert reads, [e["type"] for e in extras]
    assert "PELICAN" in text.upper(), text
