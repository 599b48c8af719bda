"""How likely the real model finds a reply: the score ``generation.review`` chooses by, from the
embedded engine in-process and from llama.cpp's HTTP server over the same model; and the
model's tokenizer, which the agent counts its conversation with."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cliutil import CliResult
from conch.command.propose import review_messages
from conch.config.settings import LocalSettings
from conch.providers.local.provider import LocalProvider
from conch.providers.openai import OpenAIProvider

pytestmark = pytest.mark.e2e

REQUEST = "list all files here, including hidden ones"


@pytest.fixture(scope="module")
def local(
    embedded_model: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LocalProvider]:
    provider = LocalProvider(
        LocalSettings(model_path=str(embedded_model), engine="xllamacpp"),
        tmp_path_factory.mktemp("cache"),
    )
    yield provider
    provider.close()


def test_the_request_is_likelier_after_the_command_that_answers_it(local: LocalProvider) -> None:
    right = local.likelihood(review_messages("ls -a"), REQUEST)
    wrong = local.likelihood(review_messages("df -h"), REQUEST)
    assert right is not None and wrong is not None
    assert wrong < right < 0


def test_the_engine_and_the_server_give_the_same_score(
    local: LocalProvider, engine_server: str
) -> None:
    server = OpenAIProvider(engine_server, None, None, 120.0, 0)
    try:
        over_http = server.likelihood(review_messages("ls -la"), REQUEST)
    finally:
        server.close()
    in_process = local.likelihood(review_messages("ls -la"), REQUEST)
    assert over_http is not None and in_process is not None
    # The same model, template and tokens; only the arithmetic differs (context size, batch
    # and cache reuse change the order of floating-point sums: about 1% measured).
    assert over_http == pytest.approx(in_process, rel=0.03)


def test_the_engine_and_the_server_count_tokens_with_the_models_tokenizer(
    local: LocalProvider, engine_server: str
) -> None:
    text = "find . -name '*.py' -newer setup.cfg | xargs wc -l"
    local.load()
    server = OpenAIProvider(engine_server, None, None, 120.0, 0)
    try:
        over_http = server.count_tokens(text)
    finally:
        server.close()
    in_process = local.count_tokens(text)
    assert in_process is not None and 8 < in_process < len(text)
    assert over_http == in_process


def test_openai_itself_is_not_asked_to_score() -> None:
    provider = OpenAIProvider("https://api.openai.com/v1", "gpt-4o-mini", "sk-unused", 5.0, 0)
    try:
        assert provider.likelihood(review_messages("ls"), REQUEST) is None
    finally:
        provider.close()


def test_json_shows_each_reviewed_answer_with_its_score(
    conch: Callable[..., CliResult], embedded_model: Path
) -> None:
    """Through the CLI and the model service: three answers, each scored by the model."""
    result = conch("--json", "--quiet", "--no-dry-run", "show the disk usage of this directory")
    assert result.code in (0, 3), result.err
    data = json.loads(result.out)
    trials = data["candidates"]
    assert [t.get("examples", "shipped") for t in trials] == ["shipped", "larger", "plain"]
    assert all(isinstance(t["likelihood"], float) and t["likelihood"] < 0 for t in trials)
    best = max(trials, key=lambda t: t["likelihood"])
    assert data["command"] in {
        t["command"] for t in trials if t["likelihood"] == best["likelihood"]
    }


def test_the_engines_loopback_listener_refuses_other_clients(local: LocalProvider) -> None:
    """xllamacpp listens on 127.0.0.1; without the process's key nobody else gets the model."""
    import httpx

    address = local.load()._server.listening_address  # type: ignore[attr-defined]
    assert address.startswith("http://127.0.0.1:")
    body = {"prompt": "ls", "n_predict": 1}
    assert httpx.post(f"{address}/completion", json=body, timeout=30).status_code == 401
    assert local.likelihood(review_messages("ls"), "list files") is not None  # conch's own
