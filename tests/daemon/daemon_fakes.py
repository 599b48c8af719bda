"""A fake model for the service's tests, loaded by the service as backend ``daemon_fakes:echo``.

It echoes the last message back in small chunks. Words in the message steer it:
``delay=S`` pauses S seconds between chunks, ``first=S`` pauses before the first one,
``fail`` raises a ProviderError, and ``say=TEXT`` replies TEXT and nothing else. Its
``likelihood`` of a reply is minus the number of words of the last message and the reply, and
it counts a token a word. Otherwise the
reply ends with the wall-clock interval it was generated in, ``[start end]``, so tests can
tell whether two requests overlapped.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from conch.config.settings import LocalSettings
from conch.errors import ConfigError, ProviderError
from conch.messages import (
    Finished,
    GenerationOptions,
    Message,
    ProviderEvent,
    Stage,
    TextDelta,
    ToolSpec,
    Usage,
)

# Seconds the fake takes to "load", and whether loading fails, from the service's environment.
LOAD_SECONDS_ENV = "CONCH_TEST_LOAD_SECONDS"
LOAD_FAILS_ENV = "CONCH_TEST_LOAD_FAILS"


def _number(words: list[str], key: str) -> float:
    for word in words:
        if word.startswith(f"{key}="):
            return float(word.split("=", 1)[1])
    return 0.0


class EchoProvider:
    """Echoes requests; counts them; pretends to load."""

    name = "echo"

    def __init__(self, settings: LocalSettings, cache_dir: Path) -> None:
        self.settings = settings
        self.loaded = False
        self.requests = 0

    def load(self) -> None:
        time.sleep(float(os.environ.get(LOAD_SECONDS_ENV) or 0))
        if os.environ.get(LOAD_FAILS_ENV):
            raise ConfigError(f"{self.settings.model_path} cannot be loaded, on purpose")
        self.loaded = True

    def stream(
        self,
        messages: Sequence[Message],
        options: GenerationOptions,
        tools: Sequence[ToolSpec] | None = None,
    ) -> Iterator[ProviderEvent]:
        if not self.loaded:
            self.load()
        self.requests += 1
        content = messages[-1].content
        words = content.split()
        if "fail" in words:
            raise ProviderError("the fake model failed on purpose")
        said = re.search(r"say=(\S+)", content)
        if said:
            yield TextDelta(said.group(1))
            yield Finished(Usage(len(words), 1), "stop")
            return
        started = time.time()
        time.sleep(_number(words, "first"))
        delay = _number(words, "delay")
        reply = f"echo: {content}"
        for start in range(0, len(reply), 4):
            yield TextDelta(reply[start : start + 4])
            time.sleep(delay)
        yield TextDelta(f" [{started:.3f} {time.time():.3f}]")
        timings = {"request": self.requests, "pid": os.getpid()}
        yield Finished(Usage(len(words), len(reply.split())), "stop", timings)

    def likelihood(self, messages: Sequence[Message], reply: str) -> float | None:
        """Minus the number of words of ``reply`` after the last message's; ``fail`` raises,
        ``unknown`` cannot be scored."""
        if not self.loaded:
            self.load()
        if "fail" in reply.split():
            raise ProviderError("the fake model failed on purpose")
        if "unknown" in reply.split():
            return None
        return -float(len(messages[-1].content.split()) + len(reply.split()))

    def count_tokens(self, text: str) -> int | None:
        """A token a word; ``unknown`` cannot be counted."""
        return None if "unknown" in text.split() else len(text.split())

    def close(self) -> None:
        self.loaded = False


class StagedEchoProvider(EchoProvider):
    """An echo that streams stages of its own on its first request: loading the model
    (twice, with and without a fraction), then warming up."""

    def stream(
        self,
        messages: Sequence[Message],
        options: GenerationOptions,
        tools: Sequence[ToolSpec] | None = None,
    ) -> Iterator[ProviderEvent]:
        if not self.requests:
            yield Stage("loading model")
            yield Stage("loading model", 0.5)
            yield Stage("warming up")
        yield from super().stream(messages, options, tools)


def echo(settings: LocalSettings, cache_dir: Path) -> EchoProvider:
    """The backend factory the service calls."""
    return EchoProvider(settings, cache_dir)
