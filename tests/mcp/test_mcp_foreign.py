"""What conch's model is told of a foreign tool: its prefixed name, its sanitized and capped
description, its schema; and the mcp_servers section of the config, checked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcputil import fake_server

from cliutil import step, write_config
from conch.mcp import foreign


@pytest.mark.parametrize(
    ("server", "tool", "name"),
    [
        ("github", "create_issue", "github__create_issue"),
        ("fs.local", "read file", "fs_local__read_file"),
        ("srv", "ä/ö:x", "srv______x"),
        ("s", "tool-name_2", "s__tool-name_2"),
    ],
)
def test_a_foreign_tool_is_named_after_its_server(server: str, tool: str, name: str) -> None:
    assert foreign.tool_name(server, tool) == name


def test_a_long_name_is_cut_to_64_characters_with_a_hash_that_keeps_it_unique() -> None:
    one = foreign.tool_name("server", "x" * 100)
    two = foreign.tool_name("server", "x" * 99 + "y")
    assert len(one) == len(two) == 64
    assert one != two and one.startswith("server__xxx")


def test_a_name_already_taken_gets_a_number() -> None:
    taken = {"a__b_c", "a__b_c_2"}
    assert foreign.tool_name("a", "b.c", taken) == "a__b_c_3"


def test_a_description_loses_escapes_and_controls_and_is_capped() -> None:
    text = "Reads \x1b[31mred\x1b[0m files.\x07\x00\n\n\x1b]0;title\x07Second.\r\n" + "x" * 5000
    clean = foreign.description(text)
    assert clean.startswith("Reads red files.\n\nSecond.\n")
    assert not any(ord(c) < 32 and c not in "\n\t" for c in clean)
    assert len(clean.encode()) <= foreign.DESCRIPTION_CAP
    assert clean.endswith("[… truncated]")


def test_the_trigger_is_one_line_naming_the_server() -> None:
    trigger = foreign.trigger("First line\nstill first.\n\nSecond paragraph.", "gh")
    assert trigger == "[gh] First line still first."
    assert foreign.trigger(None, "gh") == "[gh] (no description)"
    assert len(foreign.trigger("word " * 100, "gh")) <= 200


def test_server_instructions_are_a_capped_labelled_paragraph() -> None:
    text = foreign.instructions("gh", "Be nice.\x1b[2J\n" + "y" * 3000)
    assert text.startswith("MCP SERVER gh (its own words, not conch's):\nBe nice.\n")
    assert "\x1b" not in text
    assert len(text.encode()) < foreign.INSTRUCTIONS_CAP + 100
    assert foreign.instructions("gh", "  ") == ""


def test_a_schema_is_cleaned_and_one_that_is_not_an_object_or_too_big_refused() -> None:
    raw: dict[str, Any] = {
        "type": "object",
        "properties": {"q": {"type": "string", "description": "the\x1b[1m query\nterm"}},
    }
    assert foreign.schema(raw)["properties"]["q"]["description"] == "the query term"
    assert foreign.schema({}) == {"type": "object", "properties": {}}
    with pytest.raises(ValueError, match="not a JSON object"):
        foreign.schema(["x"])
    with pytest.raises(ValueError, match="of type 'string'"):
        foreign.schema({"type": "string"})
    huge = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(2000)}}
    with pytest.raises(ValueError, match="at most 16384"):
        foreign.schema(huge)


def test_a_result_is_sanitized_and_capped() -> None:
    text = foreign.result_text("ok\x1b[31m!\x00" + "z" * (foreign.RESULT_CAP + 10))
    assert text.startswith("ok!z") and len(text.encode()) <= foreign.RESULT_CAP


# -- the config ------------------------------------------------------------------------------


def test_invalid_mcp_servers_name_the_file_the_line_and_the_key(
    conch: Any, isolated_dirs: Path
) -> None:
    path = write_config(
        isolated_dirs,
        "mcp_servers:\n"
        "  good:\n    command: server\n    args: [--stdio]\n"
        "  both:\n    command: x\n    url: http://h/mcp\n"
        '  "bad name":\n    command: x\n'
        "  web:\n    url: ftp://h/mcp\n"
        "  mixed:\n    command: x\n    headers: {A: b}\n"
        "  typo:\n    comand: x\n",
    )
    result = conch("--print", "list files")
    assert result.code != 0 and result.out == ""
    err = result.err
    assert f"{path}:5: mcp_servers.both: give either command (a stdio server) or url" in err
    assert f"{path}:8: mcp_servers.bad name.[key]: not a valid name" in err
    assert f"{path}:11: mcp_servers.web.url: not an http:// or https:// URL" in err
    assert f"{path}:12: mcp_servers.mixed: headers are for a streamable HTTP server" in err
    assert f"{path}:16: mcp_servers.typo.comand: unknown key" in err
    assert "good" not in err
    assert "Traceback" not in err


def test_chat_uses_a_configured_server_s_tools_and_lists_where_they_come_from(
    conch: Any, isolated_dirs: Path
) -> None:
    command, *args = fake_server()
    replies = [step("fake__echo", text="from chat"), "The server said it."]
    write_config(
        isolated_dirs,
        "ai:\n  provider: scripted\n  tool_calls: json\n  script: "
        + json.dumps(replies)
        + "\nmcp_servers:\n  fake:\n    command: "
        + json.dumps(command)
        + "\n    args: "
        + json.dumps(args)
        + "\n  gone:\n    command: /no/such/server\n"
        # No one is asked in print mode: the user's rule allows this server's tools.
        + "permissions:\n  mcp:\n    'fake.*': allow\n",
    )
    result = conch("chat", "-p", "echo something", "--no-local-session")
    assert result.code == 0, result.err
    assert result.out == "The server said it.\n"
    assert "fake__echo" in result.err and "echo: from chat" in result.err
    [problem] = [line for line in result.err.splitlines() if "MCP server" in line]
    assert problem.startswith("conch: MCP server gone did not start (no such program")


def test_the_shell_s_mcp_command_lists_servers_and_their_tools(
    conch: Any, isolated_dirs: Path
) -> None:
    command, *args = fake_server("--page-size", "2")
    write_config(
        isolated_dirs,
        "ai:\n  provider: scripted\nmcp_servers:\n  fake:\n    command: "
        + json.dumps(command)
        + "\n    args: "
        + json.dumps(args)
        + "\n  later:\n    command: x\n    enabled: false\n",
    )
    result = conch("shell", stdin=":mcp\n:quit\n")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert any(line.startswith("  fake  connected; protocol ") for line in lines)
    assert "    fake__echo" in lines
    assert "    fake__add_numbers  (the server's add.numbers)" in lines
    assert "  later  disabled" in lines
