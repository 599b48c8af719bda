"""The embedded provider: a GGUF model run in-process by llama.cpp, fully offline.

Creating the provider is instant; the model is assembled (first run only) and loaded on the
first ``stream``. A daemon worker thread loads the model and runs the engine, feeding a queue,
so events (the load's stages, then the reply) reach the caller as they happen and Ctrl+C in
the caller is never stuck behind C code.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Generator, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conch.errors import ConchError, ProviderError
from conch.messages import GenerationOptions, Message, ProviderEvent, ToolSpec
from conch.providers.local.engines import Engine, error_message, open_engine
from conch.providers.local.model_files import Progress, model_path_for
from conch.providers.streaming import POLL_SECONDS, MalformedStream, chunk_events, staged

if TYPE_CHECKING:
    from conch.config.settings import AISettings, LocalSettings

EngineFactory = Callable[[str, Path, int, int | None], Engine]


def build_request(
    messages: Sequence[Message],
    options: GenerationOptions,
    tools: Sequence[ToolSpec] | None = None,
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
    if options.logprobs:
        request["logprobs"] = True
        request["top_logprobs"] = 1  # the fewest that still reports each token's own
    if options.grammar:
        request["grammar"] = options.grammar
    elif options.json_schema is not None:
        request["json_schema"] = options.json_schema
    if tools:
        request["tools"] = [tool.to_openai() for tool in tools]
    if options.end_bias and end_token is not None:
        request["logit_bias"] = {str(end_token): options.end_bias}
    return request


class LocalProvider:
    """The ``local`` provider: llama.cpp in-process on the embedded or a configured GGUF."""

    name = "local"
    native_tool_calls = False  # the embedded model writes tool calls as text: JSON steps

    def __init__(
        self,
        settings: LocalSettings,
        cache_dir: Path,
        engine_factory: EngineFactory | None = None,
    ) -> None:
        self.settings = settings
        self.cache_dir = cache_dir
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

    def load(self, progress: Progress | None = None) -> Engine:
        """Assemble (first run) and load the model now, telling ``progress`` each stage;
        idempotent."""
        with self._lock:
            if self._engine is not None:
                return self._engine
            path = model_path_for(self.settings, self.cache_dir, progress)
            if progress is not None:
                progress("loading model", None)
            self._engine = self._engine_factory(
                self.settings.engine, path, self.settings.n_ctx, self.settings.n_threads
            )
            return self._engine

    def stream(
        self,
        messages: Sequence[Message],
        options: GenerationOptions,
        tools: Sequence[ToolSpec] | None = None,
    ) -> Generator[ProviderEvent, None, None]:
        """Stream the load's stages (first request only), text deltas, whole tool calls, then
        ``Finished``.

        Closing the generator early (or Ctrl+C while iterating) stops the engine at its next
        token, and the model's assembly at its next block (it removes its temp file).
        """
        engine = self._engine
        if engine is None:
            engine = yield from staged(self.load)
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
            yield from chunk_events(_chunks(feed))
        except MalformedStream as exc:
            raise ProviderError(f"the local engine sent a malformed reply: {exc}") from None
        finally:
            # Early close, an error or Ctrl+C: tell the engine to stop at its next token.
            cancel.set()

    def likelihood(self, messages: Sequence[Message], reply: str) -> float | None:
        """How likely the model finds ``reply`` after ``messages`` (loads it if needed)."""
        return self.load().likelihood(messages, reply)

    def count_tokens(self, text: str) -> int | None:
        """The model's tokenizer on ``text``; None until the model is loaded (counting never
        loads it) or when the engine cannot say."""
        engine = self._engine
        return engine.count_tokens(text) if engine is not None else None

    def close(self) -> None:
        """Free the engine; a later request loads the model again."""
        with self._lock:
            engine, self._engine = self._engine, None
        if engine is not None:
            engine.close()


def _chunks(feed: queue.Queue[tuple[str, Any]]) -> Iterator[dict[str, Any]]:
    """The engine's chunks as they come, until it is done; its failure raised here."""
    while True:
        try:
            kind, chunk = feed.get(timeout=POLL_SECONDS)
        except queue.Empty:
            continue
        if kind == "error":
            if isinstance(chunk, ConchError):
                raise chunk
            raise ProviderError(f"the local engine failed: {error_message(str(chunk))}")
        if kind == "done":
            return
        if "error" in chunk:
            raise ProviderError(f"the local engine failed: {error_message(chunk['error'])}")
        yield chunk
