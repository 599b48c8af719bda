"""What the policy judges of a command run as its plan: the expanded words, not the text.

When safe mode expands a variable or braces, or a ``cd`` moves the later steps, the words that
run differ from the command's text. ``analyse_plan`` writes each step's words out again,
quoted, and analyses them as the literal command they are, so every check (the denylist, the
risk, the sandbox root) sees what will run.
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
import re
from collections.abc import Mapping
from pathlib import Path

from conch.errors import PolicyRejection
from conch.messages import PlanStage, RedirectKind, Word
from conch.policy.commands import analyse
from conch.policy.model import Analysis, Arg, Feed, Invocation
from conch.policy.parse import GLOB_CHARS
from conch.policy.plan import expanded_plan


def analyse_plan(
    command: str,
    environ: Mapping[str, str] | None = None,
    *,
    cwd: Path | None = None,
    root: Path | None = None,
) -> Analysis | None:
    """What the policy judges of ``command`` run as its plan, when the words that run differ
    from its text (a variable or brace expanded, a ``cd``); None otherwise, or when safe mode
    cannot run it (``plan`` says why).

    Each step's words are written out again, quoted, and analysed as the literal command
    they are, so every check sees the expanded words (``rm -rf $HOME`` is ``rm -rf ~``: a
    word in the home directory is written with ``~``). After a ``cd``, relative paths are
    read from the directory it names (from ``cwd``, when given), as the runner runs them.
    """
    try:
        made, changed = expanded_plan(command, environ, cwd, root)
    except PolicyRejection:
        return None
    if not changed:
        return None

    whole = Analysis()
    start = "" if cwd is None else os.path.abspath(cwd)
    base = ""
    for step in made.steps:
        if step.connector:
            whole.operators.append(step.connector)
        part = analyse(" | ".join(_render_stage(stage) for stage in step.stages))
        for stage in step.stages:
            words = stage.words
            found = analyse(" ".join(_render(w, i == 0) for i, w in enumerate(words)))
            head = found.invocations[0] if found.invocations else None
            expected = [_home_folded(w.text) for w in words]
            if head is None or [head.raw_name, *head.texts()] != expected:
                whole.failures.append(
                    f"The policy could not parse the expanded words {expected[:8]!r}; it is "
                    "rejected because its effect cannot be checked."
                )
        if base:
            _rebase(part, base)
        for field in dataclasses.fields(Analysis):
            mine, theirs = getattr(whole, field.name), getattr(part, field.name)
            if isinstance(mine, list):
                mine.extend(theirs)
            elif isinstance(mine, dict):
                mine.update(theirs)
        if step.is_cd:
            target = _home_folded(step.stages[0].words[1].text)
            joined = posixpath.join(base or start, target)
            base = target if target.startswith("~") else _home_folded(joined)
    return whole


_PLAIN = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")
_KEYWORDS = frozenset(
    {"if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until"}
    | {"do", "done", "in", "function", "time", "coproc"}
)


def _quoted(text: str) -> str:
    if _PLAIN.fullmatch(text):
        return text
    return "'" + text.replace("'", "'\\''") + "'"


def _home_folded(text: str) -> str:
    """``text`` with the home directory it starts with written ``~``."""
    home = os.path.expanduser("~").rstrip("/")
    if home and home != "~" and (text == home or text.startswith(home + "/")):
        return "~" + text[len(home) :]
    return text


def _render(word: Word, first: bool) -> str:
    """``word`` as shell text that reads back as the same word (globs left unquoted)."""
    text = _home_folded(word.text)
    head = ""
    if text == "~" or text.startswith("~/"):
        head, text = text[:2], text[2:]
    if word.glob:
        pieces = re.split(r"([*?\[])", text)
        body = "".join(p if p in GLOB_CHARS else _quoted(p) for p in pieces if p)
    elif first and not head and (text in _KEYWORDS or "=" in text):
        body = "'" + text.replace("'", "'\\''") + "'"
    else:
        body = _quoted(text) if text or not head else ""
    return head + body


def _render_stage(stage: PlanStage) -> str:
    parts = [_render(w, i == 0) for i, w in enumerate(stage.words)]
    for r in stage.redirects:
        if r.kind is RedirectKind.DUP:
            parts.append(f"{r.fd}>&{r.source}")
            continue
        operator = {RedirectKind.READ: "<", RedirectKind.WRITE: ">", RedirectKind.APPEND: ">>"}
        default = 0 if r.kind is RedirectKind.READ else 1
        descriptor = "" if r.fd == default else str(r.fd)
        parts.append(f"{descriptor}{operator[r.kind]}{_render(Word(r.target or ''), False)}")
    return " ".join(parts)


def _moved(arg: Arg, base: str) -> Arg:
    """``arg`` with its relative path read from ``base``."""
    path = arg.path_text
    if not path or path.startswith(("/", "~")):
        return arg
    key, sep, value = path.partition("=")
    if sep:
        if not (key.startswith("-") or key in ("if", "of")) or value.startswith(("/", "~")):
            return arg
        return dataclasses.replace(arg, path_text=f"{key}={posixpath.join(base, value)}")
    if path.startswith("-"):
        return arg
    return dataclasses.replace(arg, path_text=posixpath.join(base, path))


def _rebase(part: Analysis, base: str) -> None:
    """Read the relative paths of ``part`` from ``base`` (after a ``cd``)."""
    moved: dict[int, Invocation] = {}
    for i, inv in enumerate(part.invocations):
        moved[id(inv)] = part.invocations[i] = dataclasses.replace(
            inv, args=tuple(_moved(a, base) for a in inv.args)
        )
    part.redirects = [
        r if r.operator.endswith("&") else dataclasses.replace(r, target=_moved(r.target, base))
        for r in part.redirects
    ]
    part.feeds = [
        Feed(
            tuple(moved.get(id(p), p) for p in feed.producers),
            tuple(moved.get(id(c), c) for c in feed.consumers),
            feed.text,
        )
        for feed in part.feeds
    ]
