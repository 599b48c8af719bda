"""A third-party agent in a few lines: a custom tool, a session, a chat."""

from __future__ import annotations

from conch import ScriptedProvider, Session, ToolCall, tool


def test_a_ten_line_agent_with_a_custom_tool_runs() -> None:
    @tool(trigger="Convert Celsius to Fahrenheit.")
    def fahrenheit(celsius: float) -> float:
        """Convert a temperature from Celsius to Fahrenheit."""
        return celsius * 9 / 5 + 32

    model = ScriptedProvider.of(ToolCall("1", "fahrenheit", '{"celsius": 100}'), "212 °F.")
    session = Session(model).with_default_tools(False).add_tool(fahrenheit)
    reply = session.chat("How hot is boiling water in Fahrenheit?")

    assert reply == "212 °F."
    assert session.history[2].content == "212.0"
