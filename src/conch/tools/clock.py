"""The ``datetime`` tool: the current local date and time, so the model need not guess."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from conch.tools.tool import Tool, make_tool


def _local_now() -> datetime:
    return datetime.now().astimezone()


def describe_now(moment: datetime) -> str:
    """``moment`` as the lines the tool returns: date, time, weekday, timezone, ISO 8601.

    A naive ``moment`` is taken as local time."""
    local = moment if moment.tzinfo is not None else moment.astimezone()
    offset = local.strftime("%z")
    offset = f"UTC{offset[:3]}:{offset[3:]}" if offset else "UTC"
    zone = local.tzname() or offset
    return "\n".join(
        [
            f"date: {local:%Y-%m-%d}",
            f"time: {local:%H:%M:%S}",
            f"weekday: {local:%A}",
            f"timezone: {zone} ({offset})" if zone != offset else f"timezone: {offset}",
            f"iso: {local.isoformat(timespec='seconds')}",
        ]
    )


def datetime_tool(now: Callable[[], datetime] | None = None) -> Tool:
    """The ``datetime`` tool; ``now`` gives the moment (default: the local clock)."""
    clock = now or _local_now

    def current_datetime() -> str:
        """Get the current local date, time, weekday and timezone. Use it whenever the answer
        depends on today's date or the time; never guess them.

        Example: {}
        """
        return describe_now(clock())

    return make_tool(
        current_datetime,
        name="datetime",
        trigger="Get today's date, the time, the weekday and the timezone.",
    )
