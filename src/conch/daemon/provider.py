"""The ``local`` provider answered by the warm model service, and the one call front ends make
to get a provider (``open_provider``).

Failures never hang and never lose a request silently:

* the service cannot start at all (no runtime directory, socket path too long, it exits at
  start or does not come up in ``daemon.start_timeout_s``): the request runs in this process
  instead, and a ``Note`` says so;
* the service dies before it sent any of the answer: the request is retried once on a freshly
  started service;
* it dies in the middle of the answer: ProviderError, one line;
* it sends nothing for ``ai.timeout`` seconds (it sends keepalives while it works): ProviderError.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from conch.config.paths import Paths
from conch.daemon import protocol
from conch.daemon.client import Connection, ServiceSpec, Timeouts, ensure_service
from conch.daemon.location import Location, ServiceUnavailable
from conch.daemon.protocol import ConnectionLost, ProtocolError
from conch.errors import ProviderError
from conch.messages import (
    Finished,
    GenerationOptions,
    Message,
    Note,
    ProviderEvent,
    Stage,
    ToolSpec,
)
from conch.providers.base import create_provider, is_builtin
from conch.providers.streaming import StageCallback, staged

if TYPE_CHECKING:
    from conch.config.settings import AISettings, DaemonSettings
    from conch.providers.base import Provider

# What the service's exchange yields: stages as events, ``chunk`` and ``done`` as wire dicts.
_Served = Generator["ProviderEvent | dict[str, Any]", None, None]


def open_provider(
    ai: AISettings, daemon: DaemonSettings | None = None, paths: Paths | None = None
) -> Provider:
    """The provider ``ai.provider`` names, as front ends should open it: the built-in
    ``local`` provider runs in the warm model service when ``daemon`` is given and enabled;
    every other provider (and a provider registered over the name ``local``) runs as
    ``conch.providers.create_provider`` builds it."""
    if daemon is not None and daemon.enabled and ai.provider == "local" and is_builtin("local"):
        return DaemonProvider(ai, daemon, paths or Paths.default())
    return create_provider(ai)


class DaemonProvider:
    """The ``local`` provider, answered by the warm model service instead of this process."""

    name = "local"
    native_tool_calls = False  # the embedded model writes tool calls as text: JSON steps

    def __init__(
        self,
        ai: AISettings,
        daemon: DaemonSettings,
        paths: Paths,
        location: Location | None = None,
        backend: str | None = None,
        fallback: Callable[[], Provider] | None = None,
        timeouts: Timeouts | None = None,
    ) -> None:
        """``location`` is where the service lives (default: this user's runtime directory),
        ``backend`` what a service this provider starts runs (default: conch's own local
        provider), ``fallback`` makes the provider requests run on when the service cannot
        start (default: the model in this process, ``LocalProvider``), and ``timeouts`` how
        long to wait on a service that does not answer."""
        self.ai = ai
        self.daemon = daemon
        self.paths = paths
        self.location = location
        self.backend = backend
        self.timeouts = timeouts
        self.service_pid: int | None = None
        self._spec: ServiceSpec | None = None
        self._fallback: Provider | None = None
        self._make_fallback = fallback
        self._notes: list[str] = []  # told with the next stream

    @classmethod
    def from_settings(cls, ai: AISettings, daemon: DaemonSettings) -> DaemonProvider:
        """A provider for ``ai.local`` through the service; connects on the first request."""
        return cls(ai, daemon, Paths.default())

    @property
    def in_process(self) -> bool:
        """True once requests run in this process because the service could not start."""
        return self._fallback is not None

    def stream(
        self,
        messages: Sequence[Message],
        options: GenerationOptions,
        tools: Sequence[ToolSpec] | None = None,
    ) -> Generator[ProviderEvent, None, None]:
        """Stream the answer from the service (see the module docstring for failures)."""
        yield from self._told()
        if self._fallback is None:
            request = {
                "type": "complete",
                "messages": protocol.messages_to_wire(messages),
                "options": protocol.options_to_wire(options),
                "tools": [tool.to_openai() for tool in tools] if tools else None,
            }
            end: Finished | None = None
            for reply in self._served(request):
                if not isinstance(reply, dict):
                    yield reply
                    yield from self._told()
                elif reply["type"] == "chunk":
                    for event in protocol.events_from_wire(reply):
                        if isinstance(event, Finished):
                            end = event
                        else:
                            yield event
                else:  # done: the end, with the engine's timings
                    timings = reply.get("timings")
                    end = end or Finished()
                    timings = dict(timings) if isinstance(timings, dict) else None
                    yield Finished(end.usage, end.finish_reason, timings, end.logprob)
            yield from self._told()
            if self._fallback is None:
                return
        yield from self._fallback.stream(messages, options, tools)

    def likelihood(self, messages: Sequence[Message], reply: str) -> float | None:
        """How likely the model finds ``reply`` after ``messages``, asked of the service."""
        if self._fallback is None:
            request = {
                "type": "likelihood",
                "messages": protocol.messages_to_wire(messages),
                "reply": reply,
            }
            value = None
            for answer in self._served(request):
                if isinstance(answer, dict):
                    value = answer.get("logprob")
            if self._fallback is None:
                return float(value) if isinstance(value, int | float) else None
        return self._fallback.likelihood(messages, reply)

    def count_tokens(self, text: str) -> int | None:
        """The service's tokenizer on ``text``; None while its model is not loaded."""
        if self._fallback is None:
            value = None
            for answer in self._served({"type": "tokenize", "text": text}):
                if isinstance(answer, dict):
                    value = answer.get("tokens")
            if self._fallback is None:
                return value if isinstance(value, int) else None
        counter = getattr(self._fallback, "count_tokens", None)
        return counter(text) if counter is not None else None

    def _told(self) -> Iterator[Note]:
        while self._notes:
            yield Note(self._notes.pop(0))

    def _served(self, request: dict[str, Any]) -> _Served:
        """Stages while the service starts, then its ``chunk`` and ``done`` replies to
        ``request``. A service that stops before its first chunk is replaced and asked once
        more; one that cannot start makes this provider fall back to the model in this
        process (no reply is yielded then)."""
        for attempt in (1, 2):
            try:
                connection = yield from staged(self._connect, wait_on_cancel=False)
            except ServiceUnavailable as exc:
                self._fall_back(str(exc))
                return
            delivered = False
            try:
                for reply in self._exchange(connection, request):
                    delivered = delivered or (isinstance(reply, dict) and reply["type"] == "chunk")
                    yield reply
                return
            except ConnectionLost:
                if delivered or attempt == 2:
                    raise ProviderError(_lost(connection.pid, delivered)) from None
                self._notes.append(
                    f"the model service (pid {connection.pid}) stopped before answering; "
                    "retrying on a new one"
                )
            finally:
                connection.close()

    def _connect(self, progress: StageCallback) -> Connection:
        if self._spec is None:
            self._spec = ServiceSpec.build(
                self.ai,
                self.daemon,
                self.paths,
                self.location,
                self.backend,
                progress,
                self.timeouts,
            )
        connection = ensure_service(self._spec, progress)
        self.service_pid = connection.pid
        return connection

    def _exchange(self, connection: Connection, request: dict[str, Any]) -> _Served:
        """The service's ``chunk`` and ``done`` replies to ``request``; its progress as
        stages; an ``error`` reply raised."""
        timeout = self.ai.timeout
        told: str | None = None
        try:
            for reply in connection.replies(request, timeout):
                kind = reply["type"]
                if kind in ("chunk", "done"):
                    yield reply
                elif kind == "progress":
                    stage = str(reply.get("stage") or "")
                    if stage and stage != told:
                        yield Stage(stage)
                    told = stage
                elif kind == "error":
                    raise protocol.error_from_wire(reply)
        except TimeoutError:
            raise ProviderError(
                f"the model service (pid {connection.pid}) sent nothing for {timeout:g} s "
                "(ai.timeout); `conch daemon status` shows what it is doing"
            ) from None
        except ProtocolError as exc:
            raise ProviderError(f"the model service sent a malformed reply ({exc})") from None

    def _fall_back(self, reason: str) -> None:
        self._notes.append(f"{reason.rstrip('.')}; running the model in this process instead")
        if self._make_fallback is not None:
            self._fallback = self._make_fallback()
            return
        from conch.providers.local.provider import LocalProvider

        self._fallback = LocalProvider(self.ai.local, self.paths.cache_dir)

    def close(self) -> None:
        """Free the in-process fallback, if one was needed; the service stays warm."""
        if self._fallback is not None:
            self._fallback.close()


def _lost(pid: int | None, delivered: bool) -> str:
    who = f"the model service (pid {pid})" if pid else "the model service"
    when = "in the middle of its answer" if delivered else "before answering, twice"
    return f"{who} stopped {when}; run the request again (its log: `conch help daemon`)"
