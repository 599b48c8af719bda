"""llama.cpp's own OpenAI-compatible server over the embedded model, spoken to with plain httpx."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from conch.messages import GenerationOptions, Message
from conch.providers.base import complete
from conch.providers.local.engines import gguf_end_token
from conch.providers.openai import OpenAIProvider
from conch.validate.extract import ONE_LINE_GRAMMAR

pytestmark = pytest.mark.e2e


def test_lists_the_model(engine_server: str) -> None:
    reply = httpx.get(f"{engine_server}/models", timeout=10)
    assert reply.status_code == 200
    data = reply.json()["data"]
    assert len(data) == 1
    assert data[0]["id"].endswith(".gguf")


def test_answers_a_chat_completion(engine_server: str) -> None:
    body = {
        "model": "local",
        "messages": [
            {"role": "system", "content": "Reply with one shell command only, no markdown."},
            {"role": "user", "content": "print the current working directory"},
        ],
        "temperature": 0,
        "max_tokens": 16,
    }
    reply = httpx.post(f"{engine_server}/chat/completions", json=body, timeout=120)
    assert reply.status_code == 200
    data = reply.json()
    assert "pwd" in data["choices"][0]["message"]["content"]
    assert data["usage"]["completion_tokens"] > 0


def test_streams_server_sent_events(engine_server: str) -> None:
    body = {
        "messages": [{"role": "user", "content": "Say hello in five words."}],
        "temperature": 0,
        "max_tokens": 16,
        "stream": True,
    }
    pieces: list[str] = []
    done = False
    with httpx.stream("POST", f"{engine_server}/chat/completions", json=body, timeout=120) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if not line.startswith("data: "):
                continue
            payload = line.removeprefix("data: ")
            if payload == "[DONE]":
                done = True
                break
            for choice in json.loads(payload)["choices"]:
                pieces.append(choice["delta"].get("content") or "")
    assert done
    assert len([p for p in pieces if p]) >= 2
    assert "".join(pieces).strip()


def test_the_openai_provider_biases_the_end_token_the_model_file_names(
    engine_server: str, embedded_model: Path
) -> None:
    provider = OpenAIProvider(engine_server, None, None, 120.0, 0)
    try:
        # The server's tokenizer and the GGUF metadata agree on the token that ends a reply.
        assert provider.end_token() == gguf_end_token(embedded_model) is not None
        ask = [
            Message("system", "Reply with one shell command only, on one line, no markdown."),
            Message("user", "count the lines of every python file under src, largest first"),
        ]
        plain = GenerationOptions(max_tokens=64, grammar=ONE_LINE_GRAMMAR)
        full = complete(provider, ask, plain).text
        options = GenerationOptions(max_tokens=64, grammar=ONE_LINE_GRAMMAR, end_bias=10.0)
        short = complete(provider, ask, options).text
    finally:
        provider.close()
    # Only the end token's logit changed: greedy decoding takes the same path, and stops sooner.
    assert short and len(short) < len(full)
    assert full.startswith(short)
