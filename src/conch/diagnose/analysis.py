"""A diagnosis of the latest run, grounded in what the history log recorded about it.

A run the safety policy refused is explained from the policy's own reasons, with what to ask
instead, without the model: the reasons are exact, and a small model asked for a way around
a refusal offers the refused command again or a worse one. Any other run is diagnosed by the
model from the facts, not the whole record: the request, the command, whether it ran, its
exit code and what that code means, the policy's decision and the notes (errors). It answers
in a few sentences (``ANALYSIS_MAX_TOKENS``).

Switching the safety checks off is never the fix: hints about unsafe mode are taken out of
the facts, and any sentence of the reply that still suggests it is dropped
(``drop_unsafe_advice``).
"""

from __future__ import annotations

import re

from conch.errors import ModelOutputError
from conch.messages import GenerationOptions, Message
from conch.providers.base import EventCallback, Provider, complete
from conch.storage.history import History, HistoryEntry

ANALYZER_PROMPT = (
    "You diagnose the latest run of conch, a tool that turns a request in plain language into "
    "one shell command, checks it with a safety policy and runs it after confirmation. From "
    "the facts given, say in two to four short sentences what happened and why, citing the "
    "exit code or the error, then give one concrete next step: a corrected command, or a "
    "clearer way to word the request. Never suggest turning safety checks off. Plain text, no "
    "headings, no lists."
)

# Two to four sentences; the cap keeps the diagnosis to seconds on a small CPU.
ANALYSIS_MAX_TOKENS = 160

# What to ask instead of a refused command, by the kind of refusal.
NARROWER = "Ask for something narrower that names exactly which files or directories to change."
ALLOWED_TOOLS = (
    "Ask for a command that uses only the allowed tools, or leave out the prompt file to allow "
    "any program."
)
SIMPLER = (
    "Ask for a simpler command that does the same, for example one program with its arguments."
)

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
# How a refusal is worded in the notes before its reason.
_REFUSAL_LEAD = re.compile(
    r"^(?:not running it|the safety policy rejects this command|rejected by the safety policy)"
    r":\s*",
    re.I,
)


def last_analysable(history: History) -> HistoryEntry | None:
    """The newest entry that is not itself an analysis: analysing an analysis helps nobody."""
    return history.latest(lambda entry: "--analyze" not in entry.argv)


def analyze(
    provider: Provider,
    entry: HistoryEntry,
    on_event: EventCallback | None = None,
    outcome: str | None = None,
) -> str:
    """A short diagnosis of one history entry, never suggesting unsafe mode. Runs nothing.

    ``outcome`` says what the entry's exit code means when conch itself chose it (the
    front end's exit statuses); without it, the code is read as the command's own. A run
    the policy refused is diagnosed without asking the model (``refusal_diagnosis``).
    """
    refused = refusal_diagnosis(entry)
    if refused is not None:
        return refused
    messages = [Message("system", ANALYZER_PROMPT), Message("user", analysis_facts(entry, outcome))]
    options = GenerationOptions(temperature=0.0, max_tokens=ANALYSIS_MAX_TOKENS)
    reply = complete(provider, messages, options, on_event=on_event).text.strip()
    if not reply:
        raise ModelOutputError("the model returned an empty analysis; retry")
    text = drop_unsafe_advice(reply)
    if text:
        return text
    meaning = exit_meaning(entry.exit_code) if entry.executed else outcome
    return f"The run ended with exit code {entry.exit_code}" + (f": {meaning}." if meaning else ".")


def refusal_diagnosis(entry: HistoryEntry) -> str | None:
    """Why the safety policy refused the entry's command, from its own reasons, and what to
    ask instead; None when the entry is not a refusal."""
    if entry.decision != "reject" or entry.executed:
        return None
    notes = policy_notes(entry)
    # The refusal's own line names its first reason; other notes are about other things.
    reasons = [_REFUSAL_LEAD.sub("", note) for note in notes if _REFUSAL_LEAD.match(note)]
    reasons = [r.rstrip(".") + "." for r in reasons or notes[:1] if r]
    command = f"`{entry.generated_command}`" if entry.generated_command else "the command"
    text = " ".join([f"The safety policy refused {command}, so nothing ran.", *reasons[:1]])
    notes_text = " ".join(notes)
    if "Denylisted" in notes_text:
        return f"{text} {NARROWER}"
    if "Allowed tools" in notes_text or "Disallowed command" in notes_text:
        return f"{text} {ALLOWED_TOOLS}"
    return f"{text} {SIMPLER}"


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
    notes = policy_notes(entry)
    if notes:
        lines.append("Notes:")
        lines += [f"- {note}" for note in notes]
    return "\n".join(lines)


def policy_notes(entry: HistoryEntry) -> list[str]:
    """The entry's notes without what they say about unsafe mode, so that the model is not
    led to repeat it."""
    notes: list[str] = []
    for note in (entry.notes or "").split("; "):
        note = re.sub(r"\s*\([^()]*\bunsafe\b[^()]*\)", "", note, flags=re.I)
        note = re.sub(r",?\s*not even in unsafe mode", "", note, flags=re.I)
        kept = [s for s in _sentences(note) if not re.search(r"\bunsafe\b", s, re.I)]
        if kept:
            notes.append(" ".join(kept))
    return notes


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
    return " ".join(s for s in _sentences(text) if not _UNSAFE_ADVICE.search(s))


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]
