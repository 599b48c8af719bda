"""The service's one model and the requests it runs on it, one at a time.

``ModelRunner`` loads the model (timing the load and keeping its failure for ``status``),
makes each request wait for its turn (telling the client why it waits), and answers it over
its connection: ``complete`` as ``chunk`` lines then ``done`` with the engine's timings,
``likelihood`` as ``done`` with the log-probability, ``tokenize`` as ``done`` with the
count, ``load`` as ``done`` with the load's
seconds. ``conch.daemon.service.Service`` owns the socket and hands requests over.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import Any, TypeVar

from conch.daemon import protocol
from conch.daemon.backend import ServedModel
from conch.daemon.protocol import Channel, ConnectionLost, ProtocolError, keepalive
from conch.errors import ConchError, ProviderError
from conch.messages import (
    Finished,
    GenerationOptions,
    Message,
    ProviderEvent,
    Stage,
    ToolSpec,
)

log = logging.getLogger("conch.daemon")
# What a request parses into before its work runs (``ModelRunner._request``).
_Request = TypeVar("_Request")

# How often a request waiting for its turn checks whether the service is stopping.
POLL_SECONDS = 0.25
# A connection hears something at least this often while its request is in progress.
KEEPALIVE_SECONDS = 1.0

LOADING = "loading model"


class _Stopping(Exception):
    """The service is shutting down while a request waits or runs."""


class ModelRunner:
    """One loaded model; requests on it take turns. ``stopping`` is the service's stop flag."""

    def __init__(self, provider: ServedModel, stopping: threading.Event) -> None:
        self.provider = provider
        self.stopping = stopping
        self.loading = False
        self.load_seconds: float | None = None
        self.load_error: str | None = None
        self.requests_served = 0
        self.active = 0
        self.waiting = 0
        self.last_request = time.monotonic()
        self._model_lock = threading.Lock()
        self._state_lock = threading.Lock()

    # -- state ----------------------------------------------------------------------------

    def touch(self) -> None:
        """Restart the idle clock."""
        with self._state_lock:
            self.last_request = time.monotonic()

    def busy(self) -> bool:
        """True while a request runs or waits, or the model loads."""
        with self._state_lock:
            return bool(self.active or self.waiting or self.loading)

    def idle_seconds(self) -> float:
        """Seconds since the last request ended (0 while one runs)."""
        with self._state_lock:
            return 0.0 if self.active else time.monotonic() - self.last_request

    def status(self) -> dict[str, Any]:
        """The model's part of the service's status."""
        idle = self.idle_seconds()
        with self._state_lock:
            return {
                "loaded": self.provider.loaded,
                "loading": self.loading,
                "load_seconds": self.load_seconds,
                "load_error": self.load_error,
                "requests": self.requests_served,
                "active": self.active,
                "waiting": self.waiting,
                "idle_s": round(idle, 3),
            }

    # -- loading --------------------------------------------------------------------------

    def load_model(self) -> None:
        """Load the model now, failures included (requests then report them)."""
        with self._model_lock:
            with self._state_lock:
                self.loading = True
            try:
                self._load_now()
            except Exception:
                log.warning("loading the model failed: %s", self.load_error)
            else:
                log.info("model loaded in %.2f s", self.load_seconds or 0.0)
            finally:
                with self._state_lock:
                    self.loading = False

    def _load_now(self, channel: Channel | None = None) -> str | None:
        """Load the model unless it is loaded (telling ``channel``), timing the load and
        recording a failure before raising it; the stage told, if any."""
        if self.provider.loaded:
            return None
        if channel is not None:
            channel.send({"type": "progress", "stage": LOADING})
        started = time.monotonic()
        try:
            self.provider.load()
        except Exception as exc:
            self.load_error = " ".join(str(exc).split())
            raise
        self.load_seconds = time.monotonic() - started
        self.load_error = None
        return LOADING

    # -- requests -------------------------------------------------------------------------

    def complete(self, channel: Channel, message: dict[str, Any]) -> None:
        """Answer a ``complete`` request."""

        def parse() -> tuple[list[Message], GenerationOptions, list[ToolSpec] | None]:
            messages = protocol.messages_from_wire(message.get("messages"))
            options = protocol.options_from_wire(message.get("options") or {})
            tools = message.get("tools")
            if tools is not None and not isinstance(tools, list):
                raise ProtocolError("tools must be a list")
            try:
                specs = [ToolSpec.from_openai(tool) for tool in tools] if tools else None
            except ValueError as exc:
                raise ProtocolError(f"tools: {exc}") from None
            return messages, options, specs

        self._request(channel, parse, lambda request: self._generate(channel, *request))

    def likelihood(self, channel: Channel, message: dict[str, Any]) -> None:
        """Answer a ``likelihood`` request."""

        def parse() -> tuple[list[Message], str]:
            reply = message.get("reply")
            if not isinstance(reply, str):
                raise ProtocolError("reply must be a string")
            return protocol.messages_from_wire(message.get("messages")), reply

        self._request(channel, parse, lambda request: self._score(channel, *request))

    def tokenize(self, message: dict[str, Any]) -> dict[str, Any]:
        """The reply to a ``tokenize`` request: answered at once, outside the requests' turns
        (the tokenizer does not touch the model's state), and never loading the model."""
        text = message.get("text")
        if not isinstance(text, str):
            return _error("bad request: text must be a string")
        count = None
        counter = getattr(self.provider, "count_tokens", None)
        if self.provider.loaded and counter is not None:
            try:
                count = counter(text)
            except ConchError:
                count = None
        return {"type": "done", "tokens": count}

    def load(self, channel: Channel) -> None:
        """Answer a ``load`` request: load the model unless it is loaded."""
        with keepalive(channel, KEEPALIVE_SECONDS):
            try:
                with self._turn(channel):
                    self._load_now(channel)
            except _Stopping:
                channel.send(_error("the model service was stopped while loading"))
                return
            except (ConnectionLost, TimeoutError):
                raise
            except Exception as exc:
                if not isinstance(exc, ConchError):
                    log.exception("loading the model failed")
                    exc = ProviderError(f"loading the model failed: {type(exc).__name__}: {exc}")
                    self.load_error = " ".join(str(exc).split())
                channel.send(protocol.error_to_wire(exc))
                return
            finally:
                self.touch()
        channel.send({"type": "done", "load_seconds": self.load_seconds})

    def _request(
        self, channel: Channel, parse: Callable[[], _Request], work: Callable[[_Request], None]
    ) -> None:
        """Parse a request (a bad one is refused), then do its ``work`` in the model's turn."""
        try:
            request = parse()
        except ProtocolError as exc:
            channel.send(_error(f"bad request: {exc}"))
            return
        with keepalive(channel, KEEPALIVE_SECONDS):
            try:
                with self._turn(channel):
                    work(request)
            except _Stopping:
                channel.send(_error("the model service was stopped during the request"))

    def _score(self, channel: Channel, messages: list[Message], reply: str) -> None:
        try:
            self._load_now(channel)
            value = self.provider.likelihood(messages, reply)
        except (_Stopping, ConnectionLost, TimeoutError):
            raise  # the client went away: nobody to tell
        except Exception as exc:
            self._report(channel, exc, "scoring")
            return
        finally:
            self._served()
        channel.send({"type": "done", "logprob": value})

    def _generate(
        self,
        channel: Channel,
        messages: Sequence[Message],
        options: GenerationOptions,
        tools: list[ToolSpec] | None,
    ) -> None:
        started = time.monotonic()
        stream: Iterator[ProviderEvent] | None = None
        timings: dict[str, Any] | None = None
        try:
            told = self._load_now(channel)
            stream = self.provider.stream(messages, options, tools)
            for event in stream:
                if self.stopping.is_set():
                    raise _Stopping
                if isinstance(event, Finished):
                    timings = event.timings
                elif isinstance(event, Stage):  # the model's own stages, each told once
                    if event.label == told:
                        continue
                    told = event.label
                wire = protocol.event_to_wire(event)
                if wire is not None:
                    channel.send(wire)
        except (_Stopping, ConnectionLost, TimeoutError):
            raise
        except Exception as exc:
            self._report(channel, exc, "request")
            return
        finally:
            # Stops the engine at its next token when the client went away mid-answer.
            if isinstance(stream, Generator):
                stream.close()
            self._served()
        log.info(
            "request %d served in %.2f s%s",
            self.requests_served,
            time.monotonic() - started,
            _prompt_note(timings),
        )
        channel.send({"type": "done", "timings": timings})

    def _served(self) -> None:
        with self._state_lock:
            self.requests_served += 1
            self.last_request = time.monotonic()

    def _report(self, channel: Channel, exc: Exception, what: str) -> None:
        """Tell the client why its request failed, in one line (a bug is logged in full)."""
        if not isinstance(exc, ConchError):
            log.exception("%s failed", what)
            exc = ProviderError(f"the model service failed: {type(exc).__name__}: {exc}")
        channel.send(protocol.error_to_wire(exc))

    @contextlib.contextmanager
    def _turn(self, channel: Channel) -> Iterator[None]:
        """Wait for the model (one request at a time), telling the client why it waits."""
        with self._state_lock:
            self.waiting += 1
        try:
            told: str | None = None
            while not self._model_lock.acquire(timeout=POLL_SECONDS):
                if self.stopping.is_set():
                    raise _Stopping
                stage = LOADING if self.loading else "waiting for another request"
                if stage != told:
                    channel.send({"type": "progress", "stage": stage})
                    told = stage
        finally:
            with self._state_lock:
                self.waiting -= 1
        with self._state_lock:
            self.active += 1
        try:
            yield
        finally:
            with self._state_lock:
                self.active -= 1
                self.last_request = time.monotonic()
            self._model_lock.release()


def _prompt_note(timings: Any) -> str:
    """How much of the prompt the engine evaluated and how much it reused from its cache."""
    if not isinstance(timings, dict) or "prompt_n" not in timings:
        return ""
    return (
        f" (prompt: {timings.get('prompt_n')} tokens evaluated, {timings.get('cache_n', 0)} reused)"
    )


def _error(text: str) -> dict[str, Any]:
    return protocol.error_to_wire(ProviderError(text))
