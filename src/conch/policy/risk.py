"""Risk classes, from harmless to dangerous, and their order."""

from __future__ import annotations

from enum import StrEnum


class Risk(StrEnum):
    """What running a command can do, from harmless to dangerous."""

    READ_ONLY = "read-only"
    WRITES = "writes"
    DESTRUCTIVE = "destructive"
    PRIVILEGED = "privileged"
    NETWORK = "network"
    UNKNOWN = "unknown"


# Network can leak data or fetch code, so it outranks local writes; an unknown program could
# be anything, but destroying data or acting as root are worse than "could be anything".
RISK_ORDER: tuple[Risk, ...] = (
    Risk.READ_ONLY,
    Risk.WRITES,
    Risk.NETWORK,
    Risk.UNKNOWN,
    Risk.DESTRUCTIVE,
    Risk.PRIVILEGED,
)


def highest(risks: list[Risk]) -> Risk:
    """The most severe of ``risks`` (read-only when empty)."""
    return max(risks, key=RISK_ORDER.index, default=Risk.READ_ONLY)
