"""The real embedded model through the warm service: two answers, one service, cached prompt."""

from __future__ import annotations

import time

import pytest

from conch.config.paths import Paths
from conch.config.settings import AISettings, DaemonSettings
from conch.daemon.client import service_status, stop_service
from conch.daemon.location import Location
from conch.daemon.process import pid_alive
from conch.daemon.provider import DaemonProvider
from conch.messages import Finished, GenerationOptions, Message, ProviderEvent
from conch.providers.base import complete
from conch.providers.local.model_files import embedded_model_path

pytestmark = pytest.mark.e2e

SYSTEM = Message(
    "system",
    "You are an expert at the Unix shell. Reply with exactly one shell command for Linux, "
    "on one line, with no explanation, no markdown and no code fences.",
)


def test_the_real_model_answers_twice_through_one_warm_service(location: Location) -> None:
    model = embedded_model_path(Paths.default().cache_dir)  # assembled once per machine
    ai = AISettings(timeout=300)
    daemon = DaemonSettings(idle_timeout_s=120, start_timeout_s=120)
    options = GenerationOptions(max_tokens=16)

    first = DaemonProvider(ai, daemon, Paths.default(), backend="local")
    began = time.monotonic()
    one = complete(first, [SYSTEM, Message("user", "print the current working directory")], options)
    cold = time.monotonic() - began
    assert "pwd" in one.text
    assert one.usage.prompt_tokens > 0
    pid = first.service_pid
    assert pid is not None and pid_alive(pid)

    second = DaemonProvider(ai, daemon, Paths.default(), backend="local")
    began = time.monotonic()
    seen: list[ProviderEvent] = []
    ask = [SYSTEM, Message("user", "list the files in this directory")]
    two = complete(second, ask, options, on_event=seen.append)
    warm = time.monotonic() - began
    assert "ls" in two.text
    assert second.service_pid == pid  # the same loaded model answered
    assert not first.in_process and not second.in_process
    (end,) = [e for e in seen if isinstance(e, Finished)]
    timings = end.timings or {}
    if "cache_n" in timings:  # llama.cpp reports how much of the prompt it reused
        assert timings["cache_n"] > 0, timings
    assert warm < cold

    status = service_status(location)
    assert status is not None
    assert status["loaded"] is True and status["requests"] == 2
    assert status["model"]["path"] == str(model.resolve())
    assert status["rss_bytes"] > 500 * 2**20  # the model is in this process's memory
    assert stop_service(location) == pid
    assert not pid_alive(pid)
