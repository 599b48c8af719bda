"""In-process llama.cpp engines behind one small adapter, so the local provider is engine-blind.

Both adapters speak OpenAI chat-completions dicts: ``chat`` takes a request and either returns
the whole response, or (with ``on_chunk``) calls it once per streamed chunk and returns None.
Engines are imported lazily: importing this module costs nothing.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import mmap
import os
import secrets
import struct
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from conch.errors import ConfigError, ProviderError
from conch.messages import Message

ChunkCallback = Callable[[dict[str, Any]], bool | None]

ENGINE_NOT_INSTALLED = "the embedded engine is not installed; run: pip install 'conch[local]'"
LLAMA_CPP_PYTHON_NOT_INSTALLED = (
    "engine llama-cpp-python is not installed; "
    "pip install llama-cpp-python or set ai.local.engine: xllamacpp"
)

# llama.cpp's common log: 0 prints nothing, 1 errors only, 3 (the default) a page per load.
_XLLAMACPP_VERBOSITY = 1


class Engine(Protocol):
    """A loaded model answering OpenAI-shaped chat requests."""

    def chat(
        self, request: dict[str, Any], on_chunk: ChunkCallback | None
    ) -> dict[str, Any] | None:
        """Run ``request``. With ``on_chunk``, stream: a truthy return from it stops generation."""
        ...

    def close(self) -> None:
        """Free the model's memory; the engine is unusable afterwards."""
        ...

    def end_token(self) -> int | None:
        """The id of the token that ends the model's reply (for a logit bias), if known."""
        ...

    def likelihood(self, messages: Sequence[Message], reply: str) -> float | None:
        """The log-probability of ``reply`` after ``messages``, or None if it cannot say."""
        ...

    def count_tokens(self, text: str) -> int | None:
        """How many tokens the model's tokenizer makes of ``text``, or None if it cannot say."""
        ...


def default_threads() -> int:
    """Threads for generation when ``ai.local.n_threads`` is unset."""
    return os.cpu_count() or 1


def engine_name(kind: str, importable: Callable[[str], bool] | None = None) -> str:
    """The concrete engine ``ai.local.engine: kind`` selects: ``auto`` is llama-cpp-python
    where ``importable`` (default: whether it is installed) says so, else xllamacpp."""
    if kind == "auto":
        if (importable or _importable)("llama_cpp"):
            return "llama-cpp-python"
        return "xllamacpp"
    return kind


def open_engine(kind: str, model_path: Path, n_ctx: int, n_threads: int | None) -> Engine:
    """Load ``model_path`` with the engine ``kind`` names (auto, xllamacpp, llama-cpp-python)."""
    threads = n_threads or default_threads()
    name = engine_name(kind)
    if name == "llama-cpp-python":
        return LlamaCppPythonEngine(model_path, n_ctx, threads)
    if name == "xllamacpp":
        return XllamacppEngine(model_path, n_ctx, threads)
    raise ConfigError(
        f"unknown engine '{kind}' in ai.local.engine; use auto, xllamacpp or llama-cpp-python"
    )


def _importable(module: str) -> bool:
    if module in sys.modules:
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def check_gguf(model_path: Path) -> None:
    """ConfigError unless ``model_path`` is a readable GGUF file (engines only log the cause)."""
    try:
        with model_path.open("rb") as handle:
            header = handle.read(8)
    except OSError as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ConfigError(f"cannot read model file {model_path}: {reason}") from None
    # A junk or truncated file makes llama.cpp log a dozen lines; catch the common cases here.
    version = int.from_bytes(header[4:8], "little") if len(header) == 8 else 0
    if header[:4] != b"GGUF" or not 1 <= version <= 255:
        raise ConfigError(f"{model_path} is not a GGUF model file (check ai.local.model_path)")


# GGUF metadata value types (the GGUF spec): fixed sizes, and the two variable ones.
_GGUF_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_GGUF_STRING, _GGUF_ARRAY = 8, 9
_GGUF_INTEGERS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 10: "<Q", 11: "<q"}
_END_TOKEN_KEYS = ("tokenizer.ggml.eot_token_id", "tokenizer.ggml.eos_token_id")


def gguf_end_token(model_path: Path) -> int | None:
    """The id of the token that ends a chat turn, from a GGUF file's metadata: the
    end-of-turn token where the model names one, else its end-of-sequence token. None when
    the file is unreadable or says neither.

    Only the metadata at the head of the file is read (memory-mapped, skipping the
    vocabulary): llama.cpp's own Python reader also indexes every tensor, seconds per load.
    """
    try:
        with (
            model_path.open("rb") as handle,
            mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data,
        ):
            return _gguf_end_token(data)
    except (OSError, ValueError, struct.error, IndexError):
        return None


def _gguf_end_token(data: mmap.mmap) -> int | None:
    if data[:4] != b"GGUF" or struct.unpack_from("<I", data, 4)[0] < 2:
        return None
    count = struct.unpack_from("<Q", data, 16)[0]
    offset = 24
    found: dict[str, int] = {}

    def skip(kind: int, at: int) -> int:
        if kind == _GGUF_STRING:
            return at + 8 + int(struct.unpack_from("<Q", data, at)[0])
        if kind == _GGUF_ARRAY:
            inner, length = struct.unpack_from("<IQ", data, at)
            at += 12
            if inner in _GGUF_SIZES:
                return at + int(length) * _GGUF_SIZES[inner]
            for _ in range(length):
                at = skip(inner, at)
            return at
        return at + _GGUF_SIZES[kind]

    for _ in range(count):
        size = struct.unpack_from("<Q", data, offset)[0]
        key = bytes(data[offset + 8 : offset + 8 + size]).decode("utf-8", "replace")
        offset += 8 + size
        kind = struct.unpack_from("<I", data, offset)[0]
        offset += 4
        if key in _END_TOKEN_KEYS and kind in _GGUF_INTEGERS:
            found[key] = struct.unpack_from(_GGUF_INTEGERS[kind], data, offset)[0]
            if key == _END_TOKEN_KEYS[0]:
                break
        offset = skip(kind, offset)
    return next((found[key] for key in _END_TOKEN_KEYS if key in found), None)


class _ModelFile:
    """What an engine reads from its GGUF file beyond the model, when first asked."""

    _model_path: Path

    @functools.cached_property
    def _end_token_id(self) -> int | None:
        return gguf_end_token(self._model_path)

    def end_token(self) -> int | None:
        """The model's end-of-turn token, read once from the GGUF metadata."""
        return self._end_token_id


def error_message(error: Any) -> str:
    """The message of an OpenAI-style error payload, as one line."""
    if isinstance(error, dict):
        error = error.get("message") or json.dumps(error)
    return " ".join(str(error).split()) or "unknown error"


class XllamacppEngine(_ModelFile):
    """llama.cpp through xllamacpp's in-process server (the default, prebuilt wheels)."""

    def __init__(self, model_path: Path, n_ctx: int, n_threads: int) -> None:
        try:
            import xllamacpp
        except ImportError:
            raise ConfigError(ENGINE_NOT_INSTALLED) from None
        check_gguf(model_path)
        self._model_path = model_path
        self._client: Any = None  # an httpx.Client for ``likelihood``, made when first needed
        self._score_lock = threading.Lock()
        params = xllamacpp.CommonParams()
        params.model.path = str(model_path)
        params.n_ctx = n_ctx
        params.cpuparams.n_threads = n_threads
        params.cpuparams_batch.n_threads = n_threads
        params.verbosity = _XLLAMACPP_VERBOSITY
        # xllamacpp always opens an HTTP listener on a free 127.0.0.1 port: without a key any
        # local user could use the model through it. Only this process knows the key.
        self._key = secrets.token_urlsafe(32)
        params.api_keys = [self._key]
        try:
            self._server: Any = xllamacpp.Server(params)
        except Exception as exc:
            raise ProviderError(
                f"the local engine could not load {model_path}: {error_message(str(exc))}"
            ) from None

    def chat(
        self, request: dict[str, Any], on_chunk: ChunkCallback | None
    ) -> dict[str, Any] | None:
        """Run one chat request; engine errors become ProviderError."""
        server = self._server
        if server is None:
            raise ProviderError("the local engine was closed")
        if on_chunk is None:
            result = server.handle_chat_completions({**request, "stream": False})
            if not isinstance(result, dict):
                raise ProviderError("the local engine returned no response")
            if "error" in result:
                raise ProviderError(f"the local engine failed: {error_message(result['error'])}")
            return result
        failures: list[BaseException] = []

        def callback(chunk: dict[str, Any]) -> bool:
            # Exceptions raised here would be swallowed by the binding: keep them for later.
            error = chunk.get("error")
            if error is None and "choices" not in chunk and "message" in chunk:
                error = chunk  # the binding's own bare error shape
            if error is not None:
                failures.append(ProviderError(f"the local engine failed: {error_message(error)}"))
                return True
            try:
                return bool(on_chunk(chunk))
            except BaseException as exc:
                failures.append(exc)
                return True

        streaming = {**request, "stream": True, "stream_options": {"include_usage": True}}
        server.handle_chat_completions(streaming, callback)
        if failures:
            raise failures[0]
        return None

    def likelihood(self, messages: Sequence[Message], reply: str) -> float | None:
        """Asked of the engine's llama.cpp server over its loopback HTTP listener (xllamacpp
        starts one on a free 127.0.0.1 port, here behind this process's key), the only way
        to its tokenizer; None if absent."""
        from conch.providers.llama_server import Unsupported, reply_logprob

        listener = self._listener()
        if listener is None:
            return None
        client, address = listener
        try:
            return reply_logprob(client, address, messages, reply, "the local engine")
        except Unsupported:
            return None

    def count_tokens(self, text: str) -> int | None:
        """Asked of the same loopback listener's ``/tokenize``; None if absent."""
        from conch.providers.llama_server import token_count

        listener = self._listener()
        return token_count(*listener, text) if listener is not None else None

    def _listener(self) -> tuple[Any, str] | None:
        """An HTTP client holding this process's key, and the address of xllamacpp's
        listener; None when the binding opened none."""
        server = self._server
        address = getattr(server, "listening_address", None) if server is not None else None
        if not address:
            return None
        import httpx

        with self._score_lock:
            if self._server is None:
                raise ProviderError("the local engine was closed")
            if self._client is None:
                self._client = httpx.Client(
                    headers={"Authorization": f"Bearer {self._key}"},
                    timeout=httpx.Timeout(300.0, connect=10.0),
                )
            return self._client, str(address)

    def close(self) -> None:
        """Drop the server; llama.cpp frees the model when the last reference goes."""
        with self._score_lock:
            self._server = None
            client, self._client = self._client, None
        if client is not None:
            client.close()


class LlamaCppPythonEngine(_ModelFile):
    """llama.cpp through llama-cpp-python, preferred by ``engine: auto`` when installed."""

    def __init__(self, model_path: Path, n_ctx: int, n_threads: int) -> None:
        try:
            import llama_cpp
        except ImportError:
            raise ConfigError(LLAMA_CPP_PYTHON_NOT_INSTALLED) from None
        check_gguf(model_path)
        self._model_path = model_path
        self._module: Any = llama_cpp
        # Llama objects are not safe to share between threads: one request at a time.
        self._lock = threading.Lock()
        try:
            self._llm: Any = llama_cpp.Llama(
                model_path=str(model_path), n_ctx=n_ctx, n_threads=n_threads, verbose=False
            )
        except Exception as exc:
            raise ProviderError(
                f"the local engine could not load {model_path}: {error_message(str(exc))}"
            ) from None

    def _arguments(self, request: dict[str, Any]) -> dict[str, Any]:
        grammar_cls = self._module.LlamaGrammar
        args: dict[str, Any] = {"messages": request["messages"]}
        for key in ("temperature", "max_tokens", "stop", "seed", "tools", "tool_choice"):
            if request.get(key) is not None:
                args[key] = request[key]
        if request.get("logit_bias"):
            args["logit_bias"] = {int(k): float(v) for k, v in request["logit_bias"].items()}
        if request.get("grammar"):
            args["grammar"] = grammar_cls.from_string(request["grammar"], verbose=False)
        elif request.get("json_schema") is not None:
            args["grammar"] = grammar_cls.from_json_schema(
                json.dumps(request["json_schema"]), verbose=False
            )
        return args

    def chat(
        self, request: dict[str, Any], on_chunk: ChunkCallback | None
    ) -> dict[str, Any] | None:
        """Run one chat request; engine errors become ProviderError."""
        llm = self._llm
        if llm is None:
            raise ProviderError("the local engine was closed")
        with self._lock:
            try:
                args = self._arguments(request)
                if on_chunk is None:
                    result: dict[str, Any] = llm.create_chat_completion(**args, stream=False)
                    return result
                self._stream(llm, args, on_chunk)
            except (ValueError, RuntimeError) as exc:
                raise ProviderError(f"the local engine failed: {error_message(str(exc))}") from None
        return None

    def _stream(self, llm: Any, args: dict[str, Any], on_chunk: ChunkCallback) -> None:
        completion = 0
        last: dict[str, Any] | None = None
        chunks = llm.create_chat_completion(**args, stream=True)
        try:
            for chunk in chunks:
                last = chunk
                choices = chunk.get("choices") or []
                if choices and (choices[0].get("delta") or {}).get("content"):
                    completion += 1
                if on_chunk(chunk):
                    return
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
        # llama-cpp-python streams no usage; derive it (one chunk per token) like llama.cpp does.
        context = int(getattr(llm, "n_tokens", 0) or 0)
        prompt = max(context - completion, 0)
        on_chunk(
            {
                "id": (last or {}).get("id", "chatcmpl-local"),
                "object": "chat.completion.chunk",
                "choices": [],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                },
            }
        )

    def likelihood(self, messages: Sequence[Message], reply: str) -> float | None:
        """Not offered by this adapter (``generation.review`` then keeps the first answer)."""
        return None

    def count_tokens(self, text: str) -> int | None:
        """llama-cpp-python's own tokenizer, the model's special tokens included."""
        llm = self._llm
        if llm is None:
            return None
        with self._lock:
            try:
                return len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))
            except (ValueError, RuntimeError, TypeError):
                return None

    def close(self) -> None:
        """Free the model now rather than at garbage collection."""
        llm, self._llm = self._llm, None
        close = getattr(llm, "close", None)
        if close is not None:
            close()
