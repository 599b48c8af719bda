"""The local provider: streaming through a worker thread (fake engine), then the real model."""

from __future__ import annotations

import json
import signal
import struct
import sys
import threading
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conch.config.paths import Paths
from conch.config.settings import AISettings, LocalSettings
from conch.errors import ConfigError, ProviderError
from conch.messages import (
    Finished,
    GenerationOptions,
    Message,
    ProviderEvent,
    Stage,
    TextDelta,
    ToolCall,
    ToolSpec,
    Usage,
)
from conch.providers.base import Provider, complete, create_provider
from conch.providers.local import engines
from conch.providers.local.engines import ChunkCallback, Engine
from conch.providers.local.model_files import embedded_model_path
from conch.providers.local.provider import LocalProvider, build_request
from conch.validate.extract import ONE_LINE_GRAMMAR

ASK = [
    Message("system", "Reply with one shell command only, on one line, no markdown."),
    Message("user", "show the current working directory"),
]


def delta(content: str | None = None, **extra: Any) -> dict[str, Any]:
    piece: dict[str, Any] = dict(extra)
    if content is not None:
        piece["content"] = content
    return {"choices": [{"index": 0, "delta": piece, "finish_reason": None}]}


def finish(reason: str = "stop") -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}


def usage(prompt: int, completion: int) -> dict[str, Any]:
    return {"choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion}}


class FakeEngine:
    """Streams scripted chunks; ``endless`` keeps streaming until told to stop."""

    def __init__(self, chunks: list[dict[str, Any]], endless: bool = False) -> None:
        self.chunks = chunks
        self.endless = endless
        self.requests: list[dict[str, Any]] = []
        self.stopped = threading.Event()
        self.closed = False
        self.error: BaseException | None = None

    def chat(
        self, request: dict[str, Any], on_chunk: ChunkCallback | None
    ) -> dict[str, Any] | None:
        assert on_chunk is not None
        self.requests.append(request)
        if self.error is not None:
            raise self.error
        for chunk in self.chunks:
            if on_chunk(chunk):
                self.stopped.set()
                return None
        while self.endless:
            self.stopped.wait(0.01)  # a token now and then, until told to stop
            if on_chunk(delta("x")):
                self.stopped.set()
                return None
        return None

    def close(self) -> None:
        self.closed = True

    def end_token(self) -> int | None:
        return 7

    def likelihood(self, messages: Any, reply: str) -> float | None:
        return None  # this engine cannot score replies

    def count_tokens(self, text: str) -> int | None:
        return None  # nor count tokens


def provider_with(engine: FakeEngine, tmp_path: Path, **settings: Any) -> LocalProvider:
    gguf = tmp_path / "fake.gguf"
    gguf.write_bytes(b"GGUF\x03\x00\x00\x00")
    local = LocalSettings(model_path=str(gguf), **settings)
    opened: list[tuple[str, Path, int, int | None]] = []

    def factory(kind: str, path: Path, n_ctx: int, n_threads: int | None) -> Engine:
        opened.append((kind, path, n_ctx, n_threads))
        return engine

    provider = LocalProvider(local, tmp_path / "cache", engine_factory=factory)
    provider.opened = opened  # type: ignore[attr-defined]
    return provider


# -- with a fake engine ---------------------------------------------------------------------


def test_is_a_provider_and_registered(tmp_path: Path) -> None:
    provider = create_provider(AISettings(provider="local"))
    assert isinstance(provider, LocalProvider)
    assert isinstance(provider, Provider)
    assert provider.name == "local"
    assert not provider.loaded  # creating it loads nothing


def test_request_carries_options_and_tools() -> None:
    tools = [ToolSpec("ls", "List a directory.", {"type": "object"})]
    options = GenerationOptions(
        temperature=0.3, max_tokens=7, stop=("\n",), seed=42, grammar="root ::= [a-z]+"
    )
    request = build_request(ASK, options, tools)
    assert request == {
        "messages": [m.to_openai() for m in ASK],
        "temperature": 0.3,
        "max_tokens": 7,
        "stop": ["\n"],
        "seed": 42,
        "grammar": "root ::= [a-z]+",
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "ls",
                    "description": "List a directory.",
                    "parameters": {"type": "object"},
                },
            }
        ],
    }
    schema = {"type": "object"}
    assert build_request(ASK, GenerationOptions(json_schema=schema))["json_schema"] == schema
    assert "stop" not in build_request(ASK, GenerationOptions())


def test_end_bias_is_a_logit_bias_on_the_end_token_when_it_is_known() -> None:
    biased = GenerationOptions(end_bias=2.0)
    assert build_request(ASK, biased, end_token=151645)["logit_bias"] == {"151645": 2.0}
    assert "logit_bias" not in build_request(ASK, biased)  # the token is not known
    assert "logit_bias" not in build_request(ASK, GenerationOptions(), end_token=151645)


def test_the_provider_asks_the_engine_for_its_end_token_only_with_an_end_bias(
    tmp_path: Path,
) -> None:
    engine = FakeEngine([delta("ls"), usage(3, 1)])
    provider = provider_with(engine, tmp_path)
    complete(provider, ASK, GenerationOptions(end_bias=1.5))
    complete(provider, ASK, GenerationOptions())
    assert engine.requests[0]["logit_bias"] == {"7": 1.5}
    assert "logit_bias" not in engine.requests[1]


def gguf_string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def gguf_file(path: Path, entries: list[tuple[str, int, bytes]], version: int = 3) -> Path:
    """A GGUF header with metadata ``entries`` (key, value type, encoded value), no tensors."""
    body = b"".join(gguf_string(k) + struct.pack("<I", kind) + v for k, kind, v in entries)
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", version, 0, len(entries)) + body)
    return path


VOCABULARY = (
    "tokenizer.ggml.tokens",
    9,
    struct.pack("<IQ", 8, 3) + b"".join(gguf_string(t) for t in ("a", "<|im_end|>", "b")),
)
SCORES = ("tokenizer.ggml.scores", 9, struct.pack("<IQ", 6, 3) + struct.pack("<3f", 0, 1, 2))
NAME = ("general.name", 8, gguf_string("tiny"))


def test_gguf_end_token_reads_the_end_of_sequence_token_past_the_vocabulary(
    tmp_path: Path,
) -> None:
    eos = ("tokenizer.ggml.eos_token_id", 4, struct.pack("<I", 1))
    path = gguf_file(tmp_path / "m.gguf", [NAME, VOCABULARY, SCORES, eos])
    assert engines.gguf_end_token(path) == 1


def test_gguf_end_token_prefers_the_end_of_turn_token(tmp_path: Path) -> None:
    eos = ("tokenizer.ggml.eos_token_id", 4, struct.pack("<I", 1))
    eot = ("tokenizer.ggml.eot_token_id", 5, struct.pack("<i", 2))
    assert engines.gguf_end_token(gguf_file(tmp_path / "m.gguf", [eos, VOCABULARY, eot])) == 2


@pytest.mark.parametrize(
    "make",
    [
        lambda p: gguf_file(p, [NAME, VOCABULARY]),  # names no end token
        lambda p: gguf_file(p, [("tokenizer.ggml.eos_token_id", 4, b"\x01")]),  # truncated
        lambda p: gguf_file(p, [("tokenizer.ggml.eos_token_id", 4, b"\x01\0\0\0")], 1),
        lambda p: p.write_bytes(b"not a model") and p,
        lambda p: p,  # missing
    ],
    ids=["no-end-token", "truncated", "version-1", "not-gguf", "missing"],
)
def test_gguf_end_token_is_none_when_the_file_does_not_say(tmp_path: Path, make: Any) -> None:
    assert engines.gguf_end_token(make(tmp_path / "m.gguf")) is None


def test_streams_text_then_usage(tmp_path: Path) -> None:
    engine = FakeEngine([delta(role="assistant"), delta("ls"), delta(" -l"), finish(), usage(9, 2)])
    provider = provider_with(engine, tmp_path, n_ctx=512, n_threads=3)

    events = list(provider.stream(ASK, GenerationOptions()))

    assert events == [
        Stage("loading model"),
        TextDelta("ls"),
        TextDelta(" -l"),
        Finished(Usage(9, 2), "stop"),
    ]
    assert provider.opened == [("auto", tmp_path / "fake.gguf", 512, 3)]  # type: ignore[attr-defined]
    again = list(provider.stream(ASK, GenerationOptions()))
    assert len(provider.opened) == 1  # type: ignore[attr-defined]  # loaded once
    assert not any(isinstance(e, Stage) for e in again)  # nothing to wait for the second time


def test_the_engines_timings_come_with_the_end(tmp_path: Path) -> None:
    timings = {"prompt_n": 12, "cache_n": 30}
    engine = FakeEngine([delta("ls"), finish(), {"choices": [], "timings": timings}])
    events = list(provider_with(engine, tmp_path).stream(ASK, GenerationOptions()))
    assert events[-1] == Finished(Usage(), "stop", timings)


def test_reassembles_tool_call_fragments(tmp_path: Path) -> None:
    def call(index: int, **fields: Any) -> dict[str, Any]:
        return delta(tool_calls=[{"index": index, **fields}])

    engine = FakeEngine(
        [
            call(0, id="call_a", type="function", function={"name": "list_dir", "arguments": ""}),
            call(0, function={"arguments": '{"pa'}),
            call(1, id="call_b", function={"name": "cat", "arguments": '{"f": 1}'}),
            call(0, function={"arguments": 'th": "/"}'}),
            finish("tool_calls"),
            usage(5, 9),
        ]
    )
    response = complete(provider_with(engine, tmp_path), ASK)
    assert response.tool_calls == (
        ToolCall("call_a", "list_dir", '{"path": "/"}'),
        ToolCall("call_b", "cat", '{"f": 1}'),
    )
    assert response.finish_reason == "tool_calls"
    assert response.usage == Usage(5, 9)


def test_engine_errors_become_provider_errors(tmp_path: Path) -> None:
    engine = FakeEngine([])
    engine.error = RuntimeError("llama_decode failed\nwith code -3")
    with pytest.raises(ProviderError, match="llama_decode failed with code -3"):
        list(provider_with(engine, tmp_path).stream(ASK, GenerationOptions()))


def test_error_chunk_becomes_provider_error(tmp_path: Path) -> None:
    engine = FakeEngine([delta("l"), {"error": {"code": 400, "message": "bad grammar"}}])
    with pytest.raises(ProviderError, match="bad grammar"):
        list(provider_with(engine, tmp_path).stream(ASK, GenerationOptions()))


def test_closing_the_stream_stops_the_engine(tmp_path: Path) -> None:
    engine = FakeEngine([delta("a")], endless=True)
    provider = provider_with(engine, tmp_path)
    provider.load()
    stream = provider.stream(ASK, GenerationOptions())
    assert next(stream) == TextDelta("a")
    stream.close()
    assert engine.stopped.wait(5)


def test_ctrl_c_while_waiting_propagates_promptly(tmp_path: Path) -> None:
    engine = FakeEngine([], endless=True)
    engine.chunks = []
    silent = threading.Event()

    def stalled_chat(request: dict[str, Any], on_chunk: ChunkCallback | None) -> None:
        assert on_chunk is not None
        silent.wait(10)  # a long prompt evaluation: no chunk for a while
        if on_chunk(delta("late")):
            engine.stopped.set()

    engine.chat = stalled_chat  # type: ignore[method-assign]

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            list(provider_with(engine, tmp_path).stream(ASK, GenerationOptions()))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert time.monotonic() - started < 2
    silent.set()
    assert engine.stopped.wait(5)  # the engine was told to stop at its next token


def test_close_frees_the_engine(tmp_path: Path) -> None:
    engine = FakeEngine([finish()])
    provider = provider_with(engine, tmp_path)
    list(provider.stream(ASK, GenerationOptions()))
    provider.close()
    assert engine.closed
    assert not provider.loaded


def test_missing_model_path_is_a_config_error(tmp_path: Path) -> None:
    local = LocalSettings(model_path=str(tmp_path / "missing.gguf"))
    provider = LocalProvider(local, tmp_path / "cache")
    with pytest.raises(ConfigError, match=r"ai\.local\.model_path"):
        list(provider.stream(ASK, GenerationOptions()))


@pytest.mark.parametrize("header", [b"hello", b"GGUF", b"GGUF\xff\xff\xff\x7f"])
def test_not_a_gguf_file_is_a_config_error(tmp_path: Path, header: bytes) -> None:
    bogus = tmp_path / "notes.txt"
    bogus.write_bytes(header)
    provider = LocalProvider(LocalSettings(model_path=str(bogus), engine="xllamacpp"), tmp_path)
    with pytest.raises(ConfigError, match="not a GGUF"):
        list(provider.stream(ASK, GenerationOptions()))


def test_engine_load_failure_is_a_provider_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\x00" * 64)
    provider = LocalProvider(LocalSettings(model_path=str(broken), engine="xllamacpp"), tmp_path)
    with pytest.raises(ProviderError, match="could not load"):
        list(provider.stream(ASK, GenerationOptions()))
    assert not provider.loaded


def test_engine_choice() -> None:
    present = {"xllamacpp"}

    def importable(name: str) -> bool:
        return name in present

    assert engines.engine_name("auto", importable) == "xllamacpp"
    present.add("llama_cpp")
    assert engines.engine_name("auto", importable) == "llama-cpp-python"
    assert engines.engine_name("xllamacpp", importable) == "xllamacpp"
    assert engines.default_threads() >= 1


def test_llama_cpp_python_missing_names_the_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import now fails
    with pytest.raises(ConfigError, match="pip install llama-cpp-python"):
        engines.open_engine("llama-cpp-python", tmp_path / "m.gguf", 512, None)


def test_xllamacpp_missing_names_the_fix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "xllamacpp", None)
    with pytest.raises(ConfigError, match=r"pip install 'conch\[local\]'"):
        engines.open_engine("xllamacpp", tmp_path / "m.gguf", 512, None)


# -- with the real embedded model -----------------------------------------------------------


@pytest.fixture(scope="module")
def real_provider() -> Iterator[LocalProvider]:
    embedded_model_path(Paths.default().cache_dir)  # assembled once per machine
    provider = LocalProvider(LocalSettings(), Paths.default().cache_dir)
    yield provider
    provider.close()


def collect(provider: LocalProvider, options: GenerationOptions) -> list[ProviderEvent]:
    return list(provider.stream(ASK, options))


@pytest.mark.e2e
def test_real_model_streams_several_chunks_then_usage(real_provider: LocalProvider) -> None:
    ask = [ASK[0], Message("user", "find all python files modified in the last 2 days")]
    events = list(real_provider.stream(ask, GenerationOptions(max_tokens=48)))
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(texts) >= 3
    assert "find" in "".join(texts)
    last = events[-1]
    assert isinstance(last, Finished) and last.usage.prompt_tokens > 0
    assert last.usage.completion_tokens >= len(texts) - 1
    assert last.finish_reason in ("stop", "length")
    assert not any(isinstance(e, Finished) for e in events[:-1])


@pytest.mark.e2e
def test_real_model_honours_a_one_line_grammar(real_provider: LocalProvider) -> None:
    ask_long = [Message("user", "Write three short lines about shells, one per line.")]
    options = GenerationOptions(max_tokens=48, grammar="root ::= [^\\n]+")
    text = complete(real_provider, ask_long, options).text
    assert text.strip()
    assert "\n" not in text


@pytest.mark.e2e
def test_real_model_follows_a_json_schema(real_provider: LocalProvider) -> None:
    schema = {
        "type": "object",
        "properties": {"command": {"type": "string"}, "risky": {"type": "boolean"}},
        "required": ["command", "risky"],
        "additionalProperties": False,
    }
    response = complete(real_provider, ASK, GenerationOptions(max_tokens=96, json_schema=schema))
    data = json.loads(response.text)
    assert set(data) == {"command", "risky"}
    assert isinstance(data["command"], str) and data["command"]
    assert isinstance(data["risky"], bool)


@pytest.mark.e2e
def test_real_model_end_bias_ends_the_same_reply_sooner(real_provider: LocalProvider) -> None:
    ask = [ASK[0], Message("user", "count the lines of every python file under src, largest first")]
    plain = GenerationOptions(max_tokens=64, grammar=ONE_LINE_GRAMMAR)
    biased = GenerationOptions(max_tokens=64, grammar=ONE_LINE_GRAMMAR, end_bias=10.0)
    full = complete(real_provider, ask, plain).text
    short = complete(real_provider, ask, biased).text
    # Only the end token's logit changed: greedy decoding takes the same path, and stops sooner.
    assert short and len(short) < len(full)
    assert full.startswith(short)


@pytest.mark.e2e
def test_real_model_bad_grammar_is_a_provider_error(real_provider: LocalProvider) -> None:
    with pytest.raises(ProviderError, match="grammar"):
        collect(real_provider, GenerationOptions(max_tokens=8, grammar="root ::= ("))
    # The engine survives a bad request.
    assert complete(real_provider, ASK, GenerationOptions(max_tokens=16)).text


# -- the llama-cpp-python adapter, against a stand-in module (the real one is optional) -----


class FakeGrammar:
    def __init__(self, kind: str, text: str) -> None:
        self.kind, self.text = kind, text

    @classmethod
    def from_string(cls, grammar: str, verbose: bool = True) -> FakeGrammar:
        assert verbose is False
        return cls("gbnf", grammar)

    @classmethod
    def from_json_schema(cls, json_schema: str, verbose: bool = True) -> FakeGrammar:
        assert verbose is False
        return cls("schema", json_schema)


class FakeLlama:
    instances: list[FakeLlama] = []  # noqa: RUF012

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.calls: list[dict[str, Any]] = []
        self.n_tokens = 0
        self.closed = False
        FakeLlama.instances.append(self)

    def create_chat_completion(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        self.n_tokens = 12 + 2
        if not kwargs["stream"]:
            return {"choices": [{"message": {"role": "assistant", "content": "ls -l"}}]}
        return iter([delta(role="assistant"), delta("ls"), delta(" -l"), finish()])

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def fake_llama_cpp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    module = types.ModuleType("llama_cpp")
    module.Llama = FakeLlama  # type: ignore[attr-defined]
    module.LlamaGrammar = FakeGrammar  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    FakeLlama.instances.clear()
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF\x03\x00\x00\x00")
    return gguf


def test_llama_cpp_python_adapter_streams_with_grammar(fake_llama_cpp: Path) -> None:
    engine = engines.open_engine("llama-cpp-python", fake_llama_cpp, 1024, 2)
    (llm,) = FakeLlama.instances
    assert llm.kwargs == {
        "model_path": str(fake_llama_cpp),
        "n_ctx": 1024,
        "n_threads": 2,
        "verbose": False,
    }
    seen: list[dict[str, Any]] = []
    options = GenerationOptions(seed=1, grammar="root ::= [a-z]+", end_bias=2.0)
    assert engine.end_token() is None  # the stand-in model file names no end token
    request = build_request(ASK, options, end_token=7)
    assert engine.chat(request, lambda chunk: seen.append(chunk)) is None
    call = llm.calls[0]
    assert call["stream"] is True and call["seed"] == 1
    assert call["logit_bias"] == {7: 2.0}  # llama-cpp-python takes token ids as ints
    assert (call["grammar"].kind, call["grammar"].text) == ("gbnf", "root ::= [a-z]+")
    assert seen[-1]["usage"] == {"prompt_tokens": 12, "completion_tokens": 2, "total_tokens": 14}
    engine.close()
    assert llm.closed


def test_llama_cpp_python_adapter_json_schema_and_auto(
    fake_llama_cpp: Path, tmp_path: Path
) -> None:
    local = LocalSettings(model_path=str(fake_llama_cpp))  # engine: auto prefers it
    provider = LocalProvider(local, tmp_path / "cache")
    schema = {"type": "object"}
    response = complete(provider, ASK, GenerationOptions(json_schema=schema))
    assert response.text == "ls -l"
    assert response.usage == Usage(12, 2)
    grammar = FakeLlama.instances[0].calls[0]["grammar"]
    assert (grammar.kind, json.loads(grammar.text)) == ("schema", schema)
    result = FakeLlama.instances[0].create_chat_completion(messages=[], stream=False)
    assert result["choices"][0]["message"]["content"] == "ls -l"


class ScoringEngine(FakeEngine):
    """An engine that scores replies: minus their length in words."""

    def likelihood(self, messages: Any, reply: str) -> float | None:
        return -float(len(reply.split()))


def test_likelihood_loads_the_model_and_asks_the_engine(tmp_path: Path) -> None:
    provider = provider_with(ScoringEngine([finish()]), tmp_path)
    assert provider.likelihood(ASK, "list the files") == -3.0
    assert provider.loaded


class CountingEngine(FakeEngine):
    """An engine whose tokenizer makes a token of each word."""

    def count_tokens(self, text: str) -> int | None:
        return len(text.split())


def test_tokens_are_counted_by_the_loaded_engine_and_counting_never_loads_it(
    tmp_path: Path,
) -> None:
    provider = provider_with(CountingEngine([finish()]), tmp_path)
    assert provider.count_tokens("list the files") is None
    assert not provider.loaded
    provider.load()
    assert provider.count_tokens("list the files") == 3


def test_an_engine_that_cannot_score_gives_no_likelihood(tmp_path: Path) -> None:
    provider = provider_with(FakeEngine([finish()]), tmp_path)
    assert provider.likelihood(ASK, "list the files") is None
