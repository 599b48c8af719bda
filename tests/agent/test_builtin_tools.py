"""The built-in toolset: which tools come with which options, and tool_lookup over them."""

from __future__ import annotations

from pathlib import Path

from conch.agent.builtin import ToolOptions, default_tools
from conch.agent.lookup import index, lookup_tool, manual
from conch.execute.sandbox import Sandbox
from conch.tools import tool


@tool(trigger="Say hello.")
def hello(name: str) -> str:
    """Say hello to someone.

    A longer explanation of greeting etiquette."""
    return f"hello {name}"


def test_the_baseline_is_datetime_plan_and_web() -> None:
    names = [t.name for t in default_tools(ToolOptions())]
    assert names[:2] == ["datetime", "plan"]
    assert "web_fetch" in names
    assert not {"bash", "evaluate", "memory"} & set(names)
    assert not any(n.startswith("fs") for n in names)


def test_a_sandbox_root_bash_and_memory_bring_their_tools(tmp_path: Path) -> None:
    options = ToolOptions(
        root=tmp_path,
        bash=True,
        memory_dir=tmp_path / "memory",
        state_dir=tmp_path / "state",
        evaluate_sandbox=Sandbox(None, None, "not needed here"),
    )
    names = [t.name for t in default_tools(options)]
    assert {"bash", "evaluate", "memory", "fs_read", "fs_write"} <= set(names)
    assert names.index("bash") < names.index("evaluate") < names.index("memory")


def test_the_unified_file_tool_can_be_chosen(tmp_path: Path) -> None:
    names = [t.name for t in default_tools(ToolOptions(root=tmp_path, fs_mode="unified"))]
    assert "fs" in names and "fs_read" not in names


def test_tool_lookup_lists_the_tools_and_shows_a_manual() -> None:
    tools = [hello]
    lookup = lookup_tool(lambda: tools)
    assert lookup.name == "tool_lookup"
    assert index(tools) == "1. hello: Say hello."
    page = manual(tools, "HELL")
    assert page.startswith("## hello\nSay hello to someone.\n\nA longer explanation")
    assert '"name": {' in page
    assert manual(tools, "zzz") == "No tool matches 'zzz'. Tools: hello"
    assert lookup.function() == "1. hello: Say hello."
    assert lookup.function(name="hello") == page
