"""What conch's model is told about a tool from an MCP server, which conch does not trust.

A foreign tool's name becomes ``SERVER__TOOL`` with every character a model API refuses
replaced by ``_`` (at most 64 characters, unique in its session); its description passes the
paragraph sanitizer (escape sequences and control characters out, at most
``DESCRIPTION_CAP`` bytes) and its short trigger the one-line one; the ``description`` and
``title`` texts inside its JSON schema pass the one-line sanitizer, and a schema that is not
an object, or is larger than ``SCHEMA_CAP`` characters of JSON, is refused. What a tool
returns is sanitized the same way and capped at ``RESULT_CAP`` bytes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection
from typing import Any

from conch import sanitize

SEPARATOR = "__"
NAME_CAP = 64
DESCRIPTION_CAP = 2048
INSTRUCTIONS_CAP = 1024
SCHEMA_CAP = 16 * 1024
RESULT_CAP = 256 * 1024

_NOT_IN_NAMES = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str, taken: Collection[str] = ()) -> str:
    """The name ``tool`` of ``server`` goes by: ``server__tool`` as a valid tool name
    (letters, digits, ``_`` and ``-``; at most 64 characters, with a short hash of the whole
    when it had to be cut), and not one of ``taken`` (``_2``, ``_3``... appended)."""
    base = _NOT_IN_NAMES.sub("_", f"{server}{SEPARATOR}{tool}")
    if len(base) > NAME_CAP:
        digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
        base = f"{base[: NAME_CAP - 9]}_{digest}"
    name, n = base, 1
    while name in taken:
        n += 1
        suffix = f"_{n}"
        name = base[: NAME_CAP - len(suffix)] + suffix
    return name


def description(text: str | None) -> str:
    """A foreign tool's description, as a sanitized paragraph of at most
    ``DESCRIPTION_CAP`` bytes."""
    return sanitize.paragraph(text or "", DESCRIPTION_CAP)


def trigger(text: str | None, server: str) -> str:
    """The one line the tools catalogue shows: the description's first paragraph, with the
    server named so the model knows the tool is not conch's."""
    first = (text or "").strip().split("\n\n", 1)[0]
    return sanitize.one_line(f"[{server}] {first}" if first else f"[{server}] (no description)")


def instructions(server: str, text: str | None) -> str:
    """A server's instructions as a system-prompt paragraph (empty when it gave none)."""
    body = sanitize.paragraph((text or "").strip(), INSTRUCTIONS_CAP)
    if not body:
        return ""
    return f"MCP SERVER {sanitize.name(server)} (its own words, not conch's):\n{body}"


def schema(raw: Any) -> dict[str, Any]:
    """A foreign tool's input schema made safe to show a model: ValueError when it is not
    a JSON object schema or is too large."""
    if not isinstance(raw, dict):
        raise ValueError("its input schema is not a JSON object")
    if raw.get("type", "object") != "object":
        raise ValueError(f"its input schema is of type {raw.get('type')!r}, not object")
    try:
        size = len(json.dumps(raw))
    except (TypeError, ValueError):
        raise ValueError("its input schema is not JSON") from None
    if size > SCHEMA_CAP:
        raise ValueError(f"its input schema is {size} characters of JSON (at most {SCHEMA_CAP})")
    clean = _clean(raw)
    assert isinstance(clean, dict)
    clean.setdefault("type", "object")
    clean.setdefault("properties", {})
    return clean


def _clean(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {str(k): _clean(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, str) and key in ("description", "title"):
        return sanitize.one_line(value, sanitize.LINE_CAP)
    return value


def result_text(text: str) -> str:
    """What a foreign tool returned, for the model: control characters out, at most
    ``RESULT_CAP`` bytes."""
    return sanitize.paragraph(text, RESULT_CAP)
