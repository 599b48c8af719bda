"""Streamed OpenAI-style replies, read once for every provider.

A server streams ``chat.completion.chunk`` objects as server-sent events; the embedded engines
hand the same objects to a callback. Either way the chunks become conch's events here: text
deltas as they arrive, tool calls whole (reassembled from their fragments by one
``ToolCallAssembler``), and one ``Finished`` with the usage last.

The SSE reader is conch's own rather than ``httpx-sse``: that library follows the SSE spec to
the letter (an event ends only at a blank line, an unterminated last event is dropped, the
content type must be ``text/event-stream``), and OpenAI-compatible servers do not all do so.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from conch.messages import Finished, ProviderEvent, Stage, TextDelta, ToolCall, Usage

DONE = "[DONE]"

# How often a caller waiting on a worker wakes, so signals (Ctrl+C) are handled promptly.
POLL_SECONDS = 0.1

T = TypeVar("T")
StageCallback = Callable[[str, float | None], None]


class MalformedStream(ValueError):
    """A line or chunk that no OpenAI-compatible server would send; the message quotes it."""


def sse_data(lines: Iterable[str]) -> Iterator[str]:
    """The ``data`` of each server-sent event in ``lines``, up to ``data: [DONE]``.

    Each ``data:`` line is taken as one event: every OpenAI-compatible server sends one-line
    JSON, and some omit the blank line that should end an event (or the content type that
    should announce the stream). Comments (keepalives) and ``event``/``id``/``retry`` lines
    are skipped; any other line raises MalformedStream.
    """
    for raw in lines:
        line = raw.rstrip("\r\n")
        if not line or line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if name in ("event", "id", "retry"):
            continue
        if name != "data":
            raise MalformedStream(line)
        value = value.removeprefix(" ")
        if value.strip() == DONE:
            return
        yield value


@dataclass
class _Pending:
    id: str
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ToolCallAssembler:
    """Whole tool calls from streamed fragments (``delta.tool_calls`` items).

    A fragment names its call by ``index``. A fragment without an index continues the last
    call, unless it carries an ``id`` other than that call's, which starts a new call: servers
    that omit the index send one call at a time. The first fragment of a call carries its id
    and name, later ones pieces of its arguments; a call without an id is given
    ``call_<index>``, and a repeated name replaces the earlier one rather than doubling it.
    """

    def __init__(self) -> None:
        self._calls: dict[int, _Pending] = {}
        self._last: int | None = None

    def add(self, fragment: Mapping[str, Any]) -> None:
        """Fold one fragment into the calls seen so far."""
        index = fragment.get("index")
        fresh_id = fragment.get("id")
        if not isinstance(index, int) or isinstance(index, bool):
            last = self._last
            starts = last is None or (bool(fresh_id) and self._calls[last].id != str(fresh_id))
            index = (max(self._calls, default=-1) + 1) if starts else last
        assert index is not None
        call = self._calls.setdefault(index, _Pending(f"call_{index}"))
        self._last = index
        if fresh_id:
            call.id = str(fresh_id)
        function = fragment.get("function") or {}
        if function.get("name"):
            call.name = str(function["name"])
        if function.get("arguments"):
            call.arguments.append(str(function["arguments"]))

    def flush(self) -> list[ToolCall]:
        """The calls so far, whole and in index order; the assembler starts afresh.

        MalformedStream for a call that never got a function name."""
        calls = []
        for _, call in sorted(self._calls.items()):
            if not call.name:
                raise MalformedStream(
                    f"a tool call without a function name: {call.id} {''.join(call.arguments)}"
                )
            calls.append(ToolCall(call.id, call.name, "".join(call.arguments)))
        self._calls.clear()
        self._last = None
        return calls


def chunk_events(chunks: Iterable[Mapping[str, Any]]) -> Iterator[ProviderEvent]:
    """conch's events for a stream of ``chat.completion.chunk`` objects: a ``TextDelta`` for
    each piece of content, the tool calls whole once their choice finishes (or the stream
    ends), then one ``Finished`` with the usage, the finish reason, llama.cpp's timings and the
    sum of the tokens' log-probabilities (``logprobs.content``) when the chunks carry them.

    MalformedStream (quoting the chunk) for a chunk of the wrong shape."""
    tools = ToolCallAssembler()
    usage: Usage | None = None
    finish: str | None = None
    timings: dict[str, Any] | None = None
    logprob: float | None = None
    for chunk in chunks:
        try:
            if chunk.get("usage"):
                usage = usage_of(chunk["usage"])
            if isinstance(chunk.get("timings"), dict):
                timings = dict(chunk["timings"])
            for choice in chunk.get("choices") or []:
                for token in (choice.get("logprobs") or {}).get("content") or []:
                    logprob = (logprob or 0.0) + float(token["logprob"])
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    yield TextDelta(str(delta["content"]))
                for fragment in delta.get("tool_calls") or []:
                    tools.add(fragment)
                if choice.get("finish_reason"):
                    finish = str(choice["finish_reason"])
                    yield from tools.flush()
        except MalformedStream:
            raise
        except (AttributeError, TypeError, KeyError, ValueError) as exc:
            raise MalformedStream(_quote(chunk)) from exc
    yield from tools.flush()
    yield Finished(usage or Usage(), finish, timings, logprob)


def usage_of(raw: Mapping[str, Any]) -> Usage:
    """Token counts from an OpenAI ``usage`` object (missing counts are zero)."""
    return Usage(int(raw.get("prompt_tokens") or 0), int(raw.get("completion_tokens") or 0))


def _quote(chunk: Any) -> str:
    try:
        return json.dumps(chunk)
    except (TypeError, ValueError):
        return repr(chunk)


class StageCancelled(Exception):
    """Raised inside ``staged`` work when its caller stopped listening."""


def staged(
    work: Callable[[StageCallback], T], *, wait_on_cancel: bool = True
) -> Generator[Stage, None, T]:
    """Run ``work`` in a worker thread, yielding a ``Stage`` for each stage it reports (its
    callback takes a label and a fraction) as it happens; return its result, or raise its
    exception, in the caller's thread.

    When the caller stops listening (the generator is closed, Ctrl+C), the next stage ``work``
    reports raises StageCancelled inside it, and with ``wait_on_cancel`` the worker is waited
    for, so that work such as assembling a file cleans up before the caller goes on.
    """
    feed: queue.Queue[tuple[str, Any]] = queue.Queue()
    cancel = threading.Event()

    def report(label: str, fraction: float | None) -> None:
        if cancel.is_set():
            raise StageCancelled
        feed.put(("stage", Stage(label, fraction)))

    def run() -> None:
        try:
            result = work(report)
        except BaseException as exc:
            feed.put(("error", exc))
        else:
            feed.put(("done", result))

    worker = threading.Thread(target=run, name="conch-staged", daemon=True)
    worker.start()
    try:
        while True:
            try:
                kind, item = feed.get(timeout=POLL_SECONDS)
            except queue.Empty:
                continue
            if kind == "stage":
                yield item
            elif kind == "error":
                raise item
            else:
                return item  # type: ignore[no-any-return]
    finally:
        if worker.is_alive():
            cancel.set()
            if wait_on_cancel:
                worker.join()
