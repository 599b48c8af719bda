"""The turn's worker thread, seen from the event loop.

The library is synchronous (the agent is a generator); the server is async. ``Bridge`` runs
``run_turn`` in a thread of its own and hands its items to the event loop as they come. It
waits for a free slot first (``Caps.concurrent``), stops the turn when the request runs
past ``Caps.timeout_s``, and ``cancel`` (the client went away) stops the model at its next
token: the agent's stream is closed, and with it the model's.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator

from conch.agent.session import Session
from conch.server.turn import Item, run_turn
from conch.server.wire import APIError, ChatRequest


def timed_out(seconds: float) -> APIError:
    """The error of a request that ran past the time limit."""
    return APIError(
        504,
        f"the request ran past the server's time limit of {seconds:g} s",
        kind="server_error",
        code="timeout",
    )


class Bridge:
    """One request's turn, run in a worker thread; iterate ``items`` on the event loop."""

    def __init__(
        self, session: Session, request: ChatRequest, timeout_s: float, slots: asyncio.Semaphore
    ) -> None:
        self.session = session
        self.request = request
        self.timeout_s = timeout_s
        self.slots = slots
        self.cancelled = threading.Event()
        self.finished = threading.Event()
        self._queue: asyncio.Queue[Item | None] = asyncio.Queue()

    def cancel(self) -> None:
        """Stop the turn at its next event (safe from any thread)."""
        self.cancelled.set()

    async def items(self) -> AsyncIterator[Item]:
        """The turn's items as they come; a timeout is the last item when it strikes."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        try:
            try:
                await asyncio.wait_for(self.slots.acquire(), self.timeout_s)
            except TimeoutError:
                self.session.close()
                yield timed_out(self.timeout_s)
                return
            worker = threading.Thread(
                target=self._work, args=(loop,), name="conch-serve-turn", daemon=True
            )
            worker.start()
            while True:
                try:
                    item = await asyncio.wait_for(self._queue.get(), deadline - loop.time())
                except TimeoutError:
                    yield timed_out(self.timeout_s)
                    return
                if item is None:
                    return
                yield item
        finally:
            self.cancel()

    def _work(self, loop: asyncio.AbstractEventLoop) -> None:
        def emit(item: Item | None) -> None:
            try:
                loop.call_soon_threadsafe(self._queue.put_nowait, item)
            except RuntimeError:  # the event loop is gone: so is the client
                self.cancel()

        try:
            run_turn(self.session, self.request, emit, self.cancelled)
        finally:
            self.session.close()
            self.finished.set()
            emit(None)
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self.slots.release)
