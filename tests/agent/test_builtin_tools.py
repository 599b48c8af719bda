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


def test_the_baseline_is_plan_and_datetime_and_the_web_is_asked_for() -> None:
    names = [t.name for t in default_tools(ToolOptions())]
    assert names == ["plan", "datetime"]
    with_web = [t.name for t in default_tools(ToolOptions(web=True))]
    assert "web_fetch" in with_web


def test_the_file_tools_and_bash_come_first(tmp_path: Path) -> None:
    options = ToolOptions(root=tmp_path, bash=True, state_dir=tmp_path / "state")
    names = [t.name for t in default_tools(options)]
    assert names[0] == "fs_read"
    assert names.index("bash") < names.index("plan") < names.index("datetime")


def test_evaluate_is_offered_only_where_a_sandbox_can_run_it(tmp_path: Path) -> None:
    broken = Sandbox(None, None, "no bubblewrap here")
    names = [t.name for t in default_tools(ToolOptions(root=tmp_path, evaluate_sandbox=broken))]
    assert "evaluate" not in names and "fs_read" in names


def test_a_sandbox_root_bash_and_memory_bring_their_tools(tmp_path: Path) -> None:
    options = ToolOptions(
        root=tmp_path,
        bash=True,
        memory_dir=tmp_path / "memory",
        state_dir=tmp_path / "state",
        evaluate_sandbox=Sandbox("/usr/bin/bwrap", "given"),  # said to work, not tried
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
