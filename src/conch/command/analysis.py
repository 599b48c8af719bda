"""A diagnosis of the latest run, grounded in what the history log recorded about it.

The model is given the facts, not the whole record: the request, the command, whether it ran,
its exit code and what that code means, the safety policy's decision and the notes (errors,
refusals). It answers in a few sentences (``ANALYSIS_MAX_TOKENS``). Switching the safety
checks off is never the fix: hints about unsafe mode are taken out of the facts, and any
sentence of the reply that still suggests it is dropped (``drop_unsafe_advice``).
"""

from __future__ import annotations

import re

from conch.errors import ModelOutputError
from conch.messages import GenerationOptions, Message
from conch.providers.base import EventCallback, Provider, complete
from conch.storage.history import HistoryEntry

ANALYZER_PROMPT = (
    "You diagnose the latest run of conch, a tool that turns a request in plain language into "
    "one shell command, checks it with a safety policy and runs it after confirmation. From "
    "the facts given, say in two to four short sentences what happened and why, citing the "
    "exit code or the error, then give one concrete next step: a corrected command, or a "
    "clearer way to word the request. When the safety policy refused the command, say what it "
    "refused and suggest a request for a simpler command that the policy allows; never "
    "suggest turning safety checks off. Plain text, no headings, no lists."
)

# Two to four sentences; the cap keeps the diagnosis to seconds on a small CPU.
ANALYSIS_MAX_TOKENS = 160

# Sentences that suggest unsafe mode as the fix: the flag, the mode, conch's short flag.
_UNSAFE_ADVICE = re.compile(
    r"--unsafe\b"
    r"|\bunsafe[ -](?:mode|flag|option|switch|setting|enabled|on)\b"
    r"|\b(?:in|with|enable|enabled|enabling|allow|allowing|turn on|turning on)\s+unsafe\b"
    r"|\bconch\b[^.!?\n]*(?<![\w-])-u(?![\w-])"
    r"|\b(?:with|the|use|using|pass|passing|add|adding|try|flag|option)\s+[`'\"]?-u(?![\w-])"
    r"|(?<![\w-])-u[`'\"]?\s+(?:flag|option|switch)\b"
    r"|[`'\"(]-u[`'\")]",
    re.I,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def analyze(
    provider: Provider,
    entry: HistoryEntry,
    on_event: EventCallback | None = None,
    outcome: str | None = None,
) -> str:
    """A short diagnosis of one history entry, never suggesting unsafe mode. Runs nothing.

    ``outcome`` says what the entry's exit code means when conch itself chose it (the
    front end's exit statuses); without it, the code is read as the command's own.
    """
    messages = [Message("system", ANALYZER_PROMPT), Message("user", analysis_facts(entry, outcome))]
    options = GenerationOptions(temperature=0.0, max_tokens=ANALYSIS_MAX_TOKENS)
    reply = complete(provider, messages, options, on_event=on_event).text.strip()
    if not reply:
        raise ModelOutputError("the model returned an empty analysis; retry")
    text = drop_unsafe_advice(reply)
    return text or _fallback(entry)


def analysis_facts(entry: HistoryEntry, outcome: str | None = None) -> str:
    """What the model is told about one run, one fact a line."""
    lines = [f"Request: {entry.request or '(none recorded)'}"]
    lines.append(f"Command: {entry.generated_command or '(no command was generated)'}")
    lines.append(f"Ran: {'yes' if entry.executed else 'no'}")
    meaning = exit_meaning(entry.exit_code) if entry.executed else outcome
    code = f"Exit code: {entry.exit_code}"
    lines.append(f"{code} ({meaning})" if meaning else code)
    if entry.decision:
        risk = f", risk {entry.risk}" if entry.risk else ""
        lines.append(f"Safety policy: {entry.decision}{risk}")
    notes = [_without_unsafe(note) for note in (entry.notes or "").split("; ")]
    notes = [note for note in notes if note]
    if notes:
        lines.append("Notes:")
        lines += [f"- {note}" for note in notes]
    return "\n".join(lines)


def exit_meaning(code: int) -> str:
    """What a command's exit code usually means."""
    signals = {2: "SIGINT, Ctrl+C", 9: "SIGKILL", 13: "SIGPIPE", 15: "SIGTERM"}
    if code == 0:
        return "the command succeeded"
    if code == 126:
        return "the program exists but could not be executed"
    if code == 127:
        return "the program was not found"
    if code > 128:
        name = signals.get(code - 128)
        return f"the command was killed by signal {code - 128}" + (f" ({name})" if name else "")
    return "the command failed and reported an error"


def drop_unsafe_advice(text: str) -> str:
    """``text`` without the sentences that suggest unsafe mode (``--unsafe``, ``-u``)."""
    kept = [s for s in _SENTENCE_END.split(text) if s.strip() and not _UNSAFE_ADVICE.search(s)]
    return " ".join(s.strip() for s in kept)


def _without_unsafe(note: str) -> str:
    """A note without its hints about unsafe mode, so the model is not led to repeat them."""
    note = re.sub(r"\s*\([^()]*\bunsafe\b[^()]*\)", "", note, flags=re.I)
    clauses = [c for c in re.split(r";\s*", note) if not re.search(r"\bunsafe\b", c, re.I)]
    return "; ".join(clauses).strip()


def _fallback(entry: HistoryEntry) -> str:
    """A diagnosis from the facts alone, for a reply that was all about unsafe mode."""
    if entry.decision == "reject" and not entry.executed:
        notes = [_without_unsafe(note) for note in (entry.notes or "").split("; ")]
        reason = next((note for note in notes if note), "")
        return (
            f"The safety policy refused the command, so nothing ran{': ' if reason else ''}"
            f"{reason.rstrip('.')}. Ask again for a simpler command that does the same, for "
            "example one program with its arguments."
        )
    meaning = exit_meaning(entry.exit_code) if entry.executed else "conch stopped before running it"
    return f"The run ended with exit code {entry.exit_code}: {meaning}."
