"""Saved chats: one file per sandbox directory in the state directory, rewritten atomically
after every turn, read back by ``conch chat --continue``.

The file is JSON: a version, the sandbox, when it was saved, the model, and the messages in
the OpenAI chat shape (without the system prompt, which is built anew on resume); and, when
the last instruction was worked on one step per turn, its plan: each step with its status
(``conch.agent.stepplan.plan_record``; a record, not read back).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from conch.errors import ConchError
from conch.messages import Message, ToolCall

VERSION = 1


class SessionFileError(ConchError):
    """A saved chat cannot be read back (names the file and what to do)."""


def session_path(state_dir: Path, sandbox: Path) -> Path:
    """Where the chat held in ``sandbox`` is saved."""
    digest = hashlib.sha256(str(sandbox).encode("utf-8")).hexdigest()[:16]
    return state_dir / "sessions" / f"{digest}.json"


def save_session(
    path: Path,
    sandbox: Path,
    model: str,
    messages: Iterable[Message],
    plan: Sequence[Mapping[str, object]] = (),
) -> None:
    """Write the chat to ``path`` atomically (a crash leaves the previous save whole);
    ``plan``: the last instruction's steps, kept when there are any."""
    from conch.storage.files import atomic_write_text

    data: dict[str, Any] = {
        "version": VERSION,
        "sandbox": str(sandbox),
        "saved": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "model": model,
        "messages": [m.to_openai() for m in messages],
    }
    if plan:
        data["plan"] = [dict(step) for step in plan]
    atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=1) + "\n", 0o600)


def load_session(path: Path) -> list[Message] | None:
    """The messages saved at ``path``; None when there is no saved chat. SessionFileError
    when the file cannot be read or is not a saved chat."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise SessionFileError(f"cannot read the saved chat {path}: {exc}") from None
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("version") != VERSION:
            raise ValueError(f"not a version {VERSION} saved chat")
        return messages_from(data.get("messages"))
    except (ValueError, KeyError, TypeError) as exc:
        raise SessionFileError(
            f"the saved chat {path} is damaged ({exc}); delete it, or start without --continue"
        ) from None


def messages_from(items: Any) -> list[Message]:
    """Messages back from their OpenAI shape; ValueError when one is not a message."""
    if not isinstance(items, list):
        raise ValueError("no list of messages")
    return [_message(item) for item in items]


def _message(item: Any) -> Message:
    role = item["role"]
    if role not in ("user", "assistant", "tool"):
        raise ValueError(f"a message with role {role!r}")
    calls: Sequence[Any] = item.get("tool_calls") or []
    return Message(
        role,
        str(item.get("content") or ""),
        tuple(
            ToolCall(str(c["id"]), str(c["function"]["name"]), str(c["function"]["arguments"]))
            for c in calls
        ),
        item.get("tool_call_id"),
        item.get("name"),
    )
