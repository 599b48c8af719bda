"""The embedded provider: a GGUF model run in-process by llama.cpp, fully offline.

Creating the provider is instant; the model is assembled (first run only) and loaded on the
first ``stream``. The engine generates in a daemon worker thread that feeds a queue, so chunks
reach the caller as they are produced and Ctrl+C in the caller is never stuck behind C code.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from conch.errors import ConchError, ProviderError
from conch.messages import Chunk, GenerationOptions, Message, ToolCall, Usage
from conch.providers.local.engines import Engine, error_message, open_engine
from conch.providers.local.model_files import Progress, model_path_for

if TYPE_CHECKING:
    from conch.config.settings import AISettings, LocalSettings

EngineFactory = Callable[[str, Path, int, int | None], Engine]

# How often the consumer wakes while waiting, so signals (Ctrl+C) are handled promptly.
_POLL_SECONDS = 0.1


def build_request(
    messages: Sequence[Message],
    options: GenerationOptions,
    tools: Sequence[dict[str, Any]] | None = None,
    end_token: int | None = None,
) -> dict[str, Any]:
    """The OpenAI-shaped chat request for ``messages`` under ``options``; ``end_token`` is
    the model's end-of-turn token, which ``options.end_bias`` applies to."""
    request: dict[str, Any] = {
        "messages": [m.to_openai() for m in messages],
        "temperature": options.temperature,
        "max_tokens": options.max_tokens,
    }
    if options.stop:
        request["stop"] = list(options.stop)
    if options.seed is not None:
        request["seed"] = options.seed
    if options.grammar:
        request["grammar"] = options.grammar
    elif options.json_schema is not None:
        request["json_schema"] = options.json_schema
    if tools:
        request["tools"] = list(tools)
    if options.end_bias and end_token is not None:
        request["logit_bias"] = {str(end_token): options.end_bias}
    return request


@dataclass
class _Fragment:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ToolCallAssembler:
    """Joins OpenAI streaming tool-call fragments (keyed by ``index``) into whole calls."""

    def __init__(self) -> None:
        self._calls: dict[int, _Fragment] = {}

    def add(self, fragments: Sequence[dict[str, Any]]) -> None:
        """Fold one delta's ``tool_calls`` list into the calls seen so far."""
        for position, fragment in enumerate(fragments):
            index = fragment.get("index", position)
            call = self._calls.setdefault(int(index), _Fragment())
            if fragment.get("id"):
                call.id = str(fragment["id"])
            function = fragment.get("function") or {}
            if function.get("name"):
                call.name += str(function["name"])
            if function.get("arguments"):
                call.arguments.append(str(function["arguments"]))

    def calls(self) -> list[ToolCall]:
        """The whole calls, in index order."""
        return [
            ToolCall(id=c.id or f"call_{i}", name=c.name, arguments="".join(c.arguments))
            for i, c in sorted(self._calls.items())
        ]


class LocalProvider:
    """The ``local`` provider: llama.cpp in-process on the embedded or a configured GGUF."""

    name = "local"

    def __init__(
        self,
        settings: LocalSettings,
        cache_dir: Path,
        engine_factory: EngineFactory | None = None,
    ) -> None:
        self.settings = settings
        self.cache_dir = cache_dir
        self.on_progress: Progress | None = None
        self.load_seconds: float | None = None
        self.last_timings: dict[str, Any] | None = None
        self._engine_factory: EngineFactory = engine_factory or open_engine
        self._engine: Engine | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: AISettings) -> LocalProvider:
        """A provider for ``ai.local``; loads nothing until the first request."""
        from conch.config.paths import Paths

        return cls(settings.local, Paths.default().cache_dir)

    @property
    def loaded(self) -> bool:
        """True once the model is in memory."""
        return self._engine is not None

    def load(self) -> Engine:
        """Assemble (first run) and load the model now, reporting progress; idempotent."""
        with self._lock:
            if self._engine is not None:
                return self._engine
            path = model_path_for(self.settings, self.cache_dir, self.on_progress)
            if self.on_progress is not None:
                self.on_progress("loading model", None)
            started = time.monotonic()
            self._engine = self._engine_factory(
                self.settings.engine, path, self.settings.n_ctx, self.settings.n_threads
            )
            self.load_seconds = time.monotonic() - started
            return self._engine

    def stream(
        self,
        messages: Sequence[Message],
        options: GenerationOptions,
        tools: Sequence[dict[str, Any]] | None = None,
    ) -> Generator[Chunk, None, None]:
        """Stream text deltas, whole tool calls, then a final chunk with usage.

        Closing the generator early (or Ctrl+C while iterating) stops the engine at its next token.
        """
        engine = self.load()
        end_token = engine.end_token() if options.end_bias else None
        request = build_request(messages, options, tools, end_token)
        feed: queue.Queue[tuple[str, Any]] = queue.Queue()
        cancel = threading.Event()

        def on_chunk(chunk: dict[str, Any]) -> bool:
            feed.put(("chunk", chunk))
            return cancel.is_set()

        def work() -> None:
            try:
                engine.chat(request, on_chunk)
            except BaseException as exc:
                feed.put(("error", exc))
            else:
                feed.put(("done", None))

        worker = threading.Thread(target=work, name="conch-local-engine", daemon=True)
        worker.start()
        try:
            yield from self._drain(feed)
        finally:
            # Early close, an error or Ctrl+C: tell the engine to stop at its next token.
            cancel.set()

    def _drain(self, feed: queue.Queue[tuple[str, Any]]) -> Iterator[Chunk]:
        tools = ToolCallAssembler()
        usage = Usage()
        finish: str | None = None
        while True:
            try:
                kind, item = feed.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                continue
            if kind == "error":
                if isinstance(item, ConchError):
                    raise item
                raise ProviderError(f"the local engine failed: {error_message(str(item))}")
            if kind == "done":
                break
            if "error" in item:
                raise ProviderError(f"the local engine failed: {error_message(item['error'])}")
            if item.get("usage"):
                raw = item["usage"]
                usage = Usage(
                    int(raw.get("prompt_tokens") or 0), int(raw.get("completion_tokens") or 0)
                )
            if item.get("timings"):
                self.last_timings = dict(item["timings"])
            for choice in item.get("choices") or []:
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    yield Chunk(text=str(delta["content"]))
                if delta.get("tool_calls"):
                    tools.add(delta["tool_calls"])
                if choice.get("finish_reason"):
                    finish = str(choice["finish_reason"])
        for call in tools.calls():
            yield Chunk(tool_call=call)
        yield Chunk(usage=usage, finish_reason=finish)

    def likelihood(self, messages: Sequence[Message], reply: str) -> float | None:
        """How likely the model finds ``reply`` after ``messages`` (loads it if needed)."""
        method = getattr(self.load(), "likelihood", None)  # an engine may not offer it
        return None if method is None else cast("float | None", method(messages, reply))

    def close(self) -> None:
        """Free the engine; a later request loads the model again."""
        with self._lock:
            engine, self._engine = self._engine, None
        if engine is not None:
            engine.close()
