"""What conch tells the model: system prompt, request, scope hint, peek samples, piped input."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from conch.command.examples import Example
from conch.config.settings import ContextSettings, PromptConfig
from conch.errors import InputError
from conch.messages import Message
from conch.sanitize import text as clean_text

PEEK_MAX_BYTES = 16384
SCOPE_DOT_MAX_BYTES = 4096


def sanitize(text: str) -> str:
    """Strip terminal escape sequences, control characters (NULs, C1 controls) and invisible
    or bidirectional characters from text spliced into a prompt (``conch.sanitize.text``)."""
    return clean_text(text)


def read_capped(data: bytes, limit: int) -> str:
    """Decode at most ``limit`` bytes, noting the truncation the way peek does."""
    if len(data) <= limit:
        return sanitize(data.decode("utf-8", errors="replace"))
    text = data[:limit].decode("utf-8", errors="ignore")
    return sanitize(text) + f"\n(truncated after {limit} bytes)"


def peek_file(path: Path, limit: int = PEEK_MAX_BYTES) -> str:
    """The first ``limit`` bytes of a file, with a truncation note when it is longer."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError:
        raise InputError(f"peek file {path} does not exist") from None
    except IsADirectoryError:
        raise InputError(f"peek file {path} is a directory; name a file") from None
    except OSError as exc:
        raise InputError(f"cannot read peek file {path}: {exc.strerror}") from None
    return read_capped(data, limit)


def scope_dot_listing(cwd: Path, limit: int = SCOPE_DOT_MAX_BYTES) -> str:
    """A non-recursive listing of ``cwd`` (directories end in ``/``), capped at ``limit``."""
    try:
        with os.scandir(cwd) as it:
            names = sorted(e.name + ("/" if e.is_dir() else "") for e in it)
    except OSError as exc:
        raise InputError(f"cannot list {cwd} for --scope .: {exc.strerror}") from None
    out: list[str] = []
    used = 0
    for name in names:
        if used + len(name) + 1 > limit:
            out.append("(truncated directory listing)")
            break
        out.append(name)
        used += len(name) + 1
    return "\n".join(out)


@dataclass(slots=True)
class RequestContext:
    """Everything the one-shot request sends besides the system prompt."""

    request: str
    scope: str | None = None
    scope_listing: str | None = None
    peek_samples: list[tuple[str, str]] = field(default_factory=list)
    stdin_text: str | None = None


def system_prompt(prompt: PromptConfig, platform_description: str) -> str:
    """Meta prompt, platform facts, and the allowed tools with their instructions."""
    parts = [sanitize(prompt.meta_prompt).strip(), "", "The user's platform:", platform_description]
    if prompt.tools:
        names = ", ".join(t.name for t in prompt.tools)
        parts += ["", f"Allowed tools (use only these programs): {names}"]
        for tool in prompt.tools:
            if tool.config.strip():
                parts += ["", f"## {tool.name}", sanitize(tool.config).strip()]
    return "\n".join(parts).strip()


def build_messages(
    prompt: PromptConfig,
    platform_description: str,
    ctx: RequestContext,
    examples: Sequence[Example] = (),
) -> list[Message]:
    """The message list of a one-shot request, in the documented order.

    Worked examples go between the system prompt and the request as earlier turns, so the
    model sees the exact form of answer wanted.
    """
    messages = [Message("system", system_prompt(prompt, platform_description))]
    for example in examples:
        messages.append(Message("user", example.request))
        messages.append(Message("assistant", example.command))
    messages.append(Message("user", sanitize(ctx.request)))
    if ctx.scope is not None:
        if ctx.scope == "." and ctx.scope_listing is not None:
            text = (
                "Scope: the current directory. Its entries (non-recursive):\n" + ctx.scope_listing
            )
        else:
            text = f"Scope: limit the command to {sanitize(ctx.scope)}"
        messages.append(Message("user", text))
    if ctx.peek_samples:
        samples = "\n".join(f"--- {name}\n{text}" for name, text in ctx.peek_samples)
        messages.append(
            Message(
                "user",
                "Here is a sample of the data the tools will operate on.\n"
                "It may be truncated and is provided only to infer structure and field names:\n"
                + samples,
            )
        )
    if ctx.stdin_text:
        messages.append(
            Message(
                "user", "Here is the input piped to conch (it may be truncated):\n" + ctx.stdin_text
            )
        )
    return messages


def peek_samples(
    files: Sequence[str], cwd: Path, limit: int = PEEK_MAX_BYTES
) -> list[tuple[str, str]]:
    """Read every peek file, failing on the first unreadable one (nothing is sent then)."""
    return [(name, peek_file(cwd / name, limit)) for name in files]


def gather(
    request: str,
    cwd: Path,
    caps: ContextSettings,
    scope: str | None = None,
    peek: Sequence[str] = (),
    piped: str | None = None,
) -> RequestContext:
    """The request with what goes with it, capped by ``caps`` (``context`` settings): the
    listing of ``cwd`` for scope ``.``, the ``peek`` files, and ``piped`` input (text the
    front end read from a pipe, at most ``caps.stdin_max_bytes + 1`` characters of it)."""
    ctx = RequestContext(request=request, scope=scope)
    if scope == ".":
        ctx.scope_listing = scope_dot_listing(cwd, caps.scope_max_bytes)
    if peek:
        ctx.peek_samples = peek_samples(peek, cwd, caps.peek_max_bytes)
    if piped is not None and piped.strip():
        ctx.stdin_text = read_capped(piped.encode("utf-8"), caps.stdin_max_bytes)
    return ctx
