"""The wire format and the service's location rules, without any process."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from conch.config.paths import Paths
from conch.config.settings import LocalSettings
from conch.daemon import protocol
from conch.daemon.location import (
    Location,
    ServiceUnavailable,
    check_socket_path,
    ensure_private_dir,
    peer_allowed,
    runtime_dir,
)
from conch.daemon.protocol import Channel, ConnectionLost, ProtocolError
from conch.errors import ConfigError, ProviderError
from conch.messages import (
    Finished,
    GenerationOptions,
    Message,
    Note,
    Stage,
    TextDelta,
    ToolCall,
    Usage,
)


def test_messages_and_options_survive_the_wire() -> None:
    messages = [
        Message("system", "be brief"),
        Message("assistant", "", tool_calls=(ToolCall("c1", "ls", '{"path": "."}'),)),
        Message("tool", "a b c", tool_call_id="c1", name="ls"),
    ]
    options = GenerationOptions(
        temperature=0.4,
        max_tokens=9,
        stop=("\n", "$"),
        json_schema={"type": "object"},
        seed=3,
        logprobs=True,
    )
    line = protocol.encode(
        {
            "type": "complete",
            "messages": protocol.messages_to_wire(messages),
            "options": protocol.options_to_wire(options),
        }
    )
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    back = protocol.decode(line)
    assert protocol.messages_from_wire(back["messages"]) == messages
    assert protocol.options_from_wire(back["options"]) == options


@pytest.mark.parametrize(
    ("event", "wire"),
    [
        (TextDelta("ls -l"), {"type": "chunk", "text": "ls -l"}),
        (
            ToolCall("c", "f", "{}"),
            {"type": "chunk", "tool_call": {"id": "c", "name": "f", "arguments": "{}"}},
        ),
        (
            Finished(Usage(12, 3), "stop"),
            {
                "type": "chunk",
                "usage": {"prompt_tokens": 12, "completion_tokens": 3},
                "finish_reason": "stop",
            },
        ),
        (
            Finished(Usage(5, 2), "stop", logprob=-0.25),
            {
                "type": "chunk",
                "usage": {"prompt_tokens": 5, "completion_tokens": 2},
                "finish_reason": "stop",
                "logprob": -0.25,
            },
        ),
    ],
)
def test_events_travel_as_the_chunk_messages_they_always_were(
    event: TextDelta | ToolCall | Finished, wire: dict[str, object]
) -> None:
    sent = protocol.event_to_wire(event)
    assert sent == wire
    assert protocol.events_from_wire(protocol.decode(protocol.encode(wire))) == [event]


def test_stages_are_progress_lines_and_notes_are_not_sent() -> None:
    sent = protocol.event_to_wire(Stage("assembling model", 0.5))
    assert sent == {"type": "progress", "stage": "assembling model"}
    assert protocol.event_to_wire(Note("fell back")) is None
    assert protocol.event_to_wire(TextDelta("")) is None


def test_an_older_chunk_with_text_and_usage_is_read_in_order() -> None:
    wire = {"type": "chunk", "text": "ls", "usage": {"prompt_tokens": 1, "completion_tokens": 1}}
    assert protocol.events_from_wire(wire) == [TextDelta("ls"), Finished(Usage(1, 1))]


def test_errors_keep_their_kind_and_fit_on_one_line() -> None:
    wire = protocol.error_to_wire(ConfigError("bad\nkey"))
    error = protocol.error_from_wire(wire)
    assert isinstance(error, ConfigError) and str(error) == "bad key"
    assert isinstance(
        protocol.error_from_wire({"kind": "os.system", "message": "x"}), ProviderError
    )
    assert isinstance(protocol.error_from_wire(protocol.error_to_wire(ValueError())), ProviderError)


@pytest.mark.parametrize("line", [b"[1]\n", b"{}\n", b"not json\n", b'{"type": 3}\n'])
def test_malformed_lines_are_protocol_errors(line: bytes) -> None:
    with pytest.raises(ProtocolError):
        protocol.decode(line)


@pytest.mark.parametrize(
    "messages",
    [None, [{"role": "boss", "content": "x"}], [{"content": "x"}], [{"role": "user"}], ["x"]],
)
def test_malformed_messages_are_protocol_errors(messages: object) -> None:
    with pytest.raises(ProtocolError):
        protocol.messages_from_wire(messages)
    with pytest.raises(ProtocolError):
        protocol.options_from_wire({"temperature": 0, "top_k": 3})


def test_channel_reports_a_peer_that_dies_mid_line() -> None:
    left, right = socket.socketpair()
    channel = Channel(left)
    right.sendall(b'{"type": "chunk", "te')
    right.close()
    with pytest.raises(ConnectionLost):
        channel.receive(5)
    channel.close()


def test_channel_times_out_instead_of_hanging() -> None:
    left, right = socket.socketpair()
    channel = Channel(left)
    with pytest.raises(TimeoutError):
        channel.receive(0.1)
    channel.close()
    right.close()


def test_model_identity_changes_when_the_file_changes(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    local = LocalSettings(model_path=str(model))
    first = protocol.model_identity(model, local, "local")
    assert first["path"] == str(model.resolve()) and first["size"] == 4
    os.utime(model, ns=(1, 1))
    assert protocol.model_identity(model, local, "local") != first
    assert protocol.model_identity(model, local.model_copy(update={"n_ctx": 512}), "local") != (
        protocol.model_identity(model, local, "local")
    )


def test_runtime_dir_is_xdg_runtime_dir_only_when_private(tmp_path: Path) -> None:
    paths = Paths(tmp_path / "config", tmp_path / "state", tmp_path / "cache")
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    assert runtime_dir(paths, {"XDG_RUNTIME_DIR": str(private)}) == private / "conch"
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert runtime_dir(paths, {"XDG_RUNTIME_DIR": str(shared)}) == paths.state_dir / "run"
    assert runtime_dir(paths, {"XDG_RUNTIME_DIR": "relative"}) == paths.state_dir / "run"
    assert runtime_dir(paths, {}) == paths.state_dir / "run"
    location = Location.default(paths, {"XDG_RUNTIME_DIR": str(private)})
    assert location.socket == private / "conch" / "conch.sock"
    assert location.pid_file == private / "conch" / "conch.pid"
    assert location.log_file == paths.state_dir / "daemon.log"


def test_the_socket_directory_is_made_private(tmp_path: Path) -> None:
    directory = tmp_path / "a" / "run"
    ensure_private_dir(directory)
    assert directory.stat().st_mode & 0o777 == 0o700
    directory.chmod(0o755)
    ensure_private_dir(directory)
    assert directory.stat().st_mode & 0o777 == 0o700
    (tmp_path / "file").write_text("x")
    with pytest.raises(ServiceUnavailable, match="not a directory"):
        ensure_private_dir(tmp_path / "file")


def test_a_socket_path_too_long_to_bind_is_refused(tmp_path: Path) -> None:
    check_socket_path(tmp_path / "conch.sock")
    with pytest.raises(ServiceUnavailable, match="XDG_RUNTIME_DIR"):
        check_socket_path(tmp_path / ("x" * 120) / "conch.sock")


def test_peers_of_another_user_are_refused() -> None:
    left, right = socket.socketpair(socket.AF_UNIX)
    try:
        assert peer_allowed(left)
        assert not peer_allowed(left, uid=os.getuid() + 1)
    finally:
        left.close()
        right.close()
