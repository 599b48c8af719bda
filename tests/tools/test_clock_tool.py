"""The datetime tool: the model reads the date and time instead of guessing them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta, timezone

from conch.messages import ToolResult
from conch.tools import Tool, datetime_tool

Call = Callable[..., ToolResult]


def test_it_gives_date_time_weekday_timezone_and_iso_form(
    caller: Callable[[Iterable[Tool]], Call],
) -> None:
    moment = datetime(2026, 5, 27, 14, 3, 5, tzinfo=timezone(timedelta(hours=2), "CEST"))
    call = caller([datetime_tool(lambda: moment)])
    result = call("datetime")
    assert not result.is_error
    assert result.content.splitlines() == [
        "date: 2026-05-27",
        "time: 14:03:05",
        "weekday: Wednesday",
        "timezone: CEST (UTC+02:00)",
        "iso: 2026-05-27T14:03:05+02:00",
    ]


def test_a_zone_without_a_name_is_given_as_its_offset() -> None:
    moment = datetime(2024, 2, 29, 23, 59, 59, tzinfo=timezone(timedelta(hours=-5, minutes=-30)))
    text = datetime_tool(lambda: moment)()
    assert "weekday: Thursday" in text
    assert "timezone: UTC-05:30" in text


def test_the_default_clock_is_the_local_time_with_its_zone() -> None:
    before = datetime.now().astimezone().replace(microsecond=0)
    text = datetime_tool()()
    iso = text.splitlines()[-1].removeprefix("iso: ")
    after = datetime.now().astimezone()
    assert before <= datetime.fromisoformat(iso) <= after
    assert datetime.fromisoformat(iso).tzinfo is not None


def test_the_tool_takes_no_arguments_and_has_a_trigger() -> None:
    item = datetime_tool()
    assert item.name == "datetime"
    assert item.spec.parameters["properties"] == {}
    assert item.trigger
