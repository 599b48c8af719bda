"""Tools as values: the schema a model is shown, and calls that never raise."""

from __future__ import annotations

import json
from typing import Literal

import pytest

from conch.messages import ToolCall, ToolSpec
from conch.tools import Tool, ToolRegistry, make_tool, tool


@tool
def read_file(path: str, lines: int = 20, mode: Literal["head", "tail"] = "head") -> str:
    """Read the first or last lines of a file."""
    if path == "boom":
        raise OSError("disk on fire\nreally")
    return f"{mode} {lines} of {path}"


@tool(name="find", trigger="when looking for files", system="Prefer find over ls -R.")
def find_files(patterns: list[str], root: str | None = None) -> list[str]:
    """Find files by name."""
    return [f"{root or '.'}/{p}" for p in patterns]


def test_the_schema_comes_from_the_type_hints() -> None:
    assert isinstance(read_file, Tool)
    assert read_file.spec == ToolSpec(
        "read_file",
        "Read the first or last lines of a file.",
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "path": {"type": "string"},
                "lines": {"type": "integer", "default": 20},
                "mode": {"type": "string", "enum": ["head", "tail"], "default": "head"},
            },
            "required": ["path"],
        },
    )


def test_the_decorator_takes_a_name_a_trigger_and_a_system_addendum() -> None:
    assert (find_files.name, find_files.trigger, find_files.system) == (
        "find",
        "when looking for files",
        "Prefer find over ls -R.",
    )
    props = find_files.spec.parameters["properties"]
    assert props["patterns"] == {"type": "array", "items": {"type": "string"}}
    assert "null" in json.dumps(props["root"])  # optional
    assert find_files.spec.parameters["required"] == ["patterns"]
    assert find_files(patterns=["a"]) == ["./a"]  # still callable


def registry() -> ToolRegistry:
    return ToolRegistry([read_file, find_files])


def call(name: str, arguments: str) -> ToolCall:
    return ToolCall("c1", name, arguments)


def test_specs_are_what_providers_get() -> None:
    assert [s.name for s in registry().specs()] == ["read_file", "find"]
    assert "find" in registry() and len(registry()) == 2


def test_a_good_call_runs_the_function() -> None:
    result = registry().call(call("read_file", '{"path": "a.txt", "mode": "tail"}'))
    assert (result.content, result.is_error, result.call_id) == ("tail 20 of a.txt", False, "c1")
    listed = registry().call(call("find", '{"patterns": ["x", "y"], "root": "/srv"}'))
    assert json.loads(listed.content) == ["/srv/x", "/srv/y"]


@pytest.mark.parametrize(
    ("name", "arguments", "says"),
    [
        ("read_file", "{not json", "not JSON"),
        ("read_file", "[1, 2]", "must be a JSON object"),
        ("rm", "{}", "no tool named 'rm' (tools: read_file, find)"),
        ("read_file", "{}", "bad arguments: path: Field required"),
        ("read_file", '{"path": "a", "lines": "many"}', "bad arguments: lines:"),
        ("read_file", '{"path": "a", "mode": "middle"}', "bad arguments: mode:"),
        ("read_file", '{"path": "a", "force": true}', "bad arguments: force:"),
        ("read_file", '{"path": "boom"}', "OSError: disk on fire really"),
    ],
)
def test_whatever_the_model_gets_wrong_comes_back_as_an_error_result(
    name: str, arguments: str, says: str
) -> None:
    result = registry().call(call(name, arguments))
    assert result.is_error
    assert says in result.content and "\n" not in result.content


def test_a_name_is_registered_once() -> None:
    with pytest.raises(ValueError, match="already registered"):
        ToolRegistry([read_file, read_file])


def test_a_function_without_hints_cannot_be_a_tool() -> None:
    def untyped(path):  # type: ignore[no-untyped-def]
        return path

    with pytest.raises(TypeError, match="needs a type hint"):
        tool(untyped)


def test_closures_of_one_definition_share_their_arguments_model_but_not_their_schema() -> None:
    def make(greeting: str) -> Tool:
        def greet(name: str, times: int = 1) -> str:
            """Greet someone."""
            return f"{greeting} {name}" * times

        return make_tool(greet)

    first, second = make("hello"), make("bye")
    assert first.arguments is second.arguments
    assert first.spec.parameters == second.spec.parameters
    first.spec.parameters["properties"].clear()  # one tool's schema is its own
    assert "name" in second.spec.parameters["properties"]
    assert first(name="ada") == "hello ada" and second(name="ada", times=2) == "bye adabye ada"


def test_a_different_default_gets_its_own_schema() -> None:
    def make(default: int) -> Tool:
        def count(n: int = default) -> int:
            """Count."""
            return n

        return make_tool(count)

    assert make(1).spec.parameters["properties"]["n"]["default"] == 1
    assert make(2).spec.parameters["properties"]["n"]["default"] == 2
