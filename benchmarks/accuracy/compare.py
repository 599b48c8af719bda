"""Judging a candidate's run against the references' runs, at three levels.

1. strict: same tree state and byte-identical stdout;
2. normalised: same tree state and stdout equal after stripping colour codes and trailing
   spaces, collapsing runs of spaces, dropping blank lines and sorting lines;
3. judged: same tree state and a model judge (one fixed model, temperature 0), shown the
   request and both commands with their outputs, says the candidate's output holds the same
   information as the reference's (format, order and detail may differ).

A candidate passes a level when it matches either reference. Each level includes the ones
before it, so the judge is asked only when the state matches and the normalised outputs differ.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from benchmarks.accuracy.candidate import Task
from benchmarks.accuracy.sandbox import RunResult
from conch.messages import GenerationOptions, Message
from conch.providers.base import Provider, complete

_ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]")
_SPACES = re.compile(r"[ \t]+")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ufffd]")
JUDGE_EXCERPT = 600
JUDGE_LINES = 25
JUDGE_SYSTEM = (
    "You check whether two command outputs give the same result. Output A is a correct result "
    "for the request. Answer yes only if output B holds the same information as output A (the "
    "same files, names, lines, numbers or text), though it may be formatted, ordered or more or "
    "less detailed. Answer no if B shows different items, numbers or text, or misses some. "
    "Reply with one word: yes or no."
)
JUDGE_GRAMMAR = 'root ::= "yes" | "no"'


def normalise(stdout: bytes) -> list[str]:
    """stdout without colour codes, trailing or repeated spaces and blank lines, lines sorted."""
    text = _ANSI.sub(b"", stdout).decode("utf-8", errors="replace")
    lines = [_SPACES.sub(" ", line.rstrip()) for line in text.splitlines()]
    return sorted(line for line in lines if line.strip())


@dataclass(frozen=True, slots=True)
class Levels:
    """Which levels a candidate passed; ``judged`` is None when no judge was used."""

    strict: bool
    normalised: bool
    judged: bool | None
    matched: str | None = None  # "bash" or "bash2": the reference it matched at its best level

    def to_json(self) -> dict[str, object]:
        return {
            "strict": self.strict,
            "normalised": self.normalised,
            "judged": self.judged,
            "matched": self.matched,
        }


FAILED = Levels(False, False, False)
FAILED_NO_JUDGE = Levels(False, False, None)


def _excerpt(data: bytes, limit: int = JUDGE_EXCERPT, lines: int = JUDGE_LINES) -> str:
    """Output as the judge sees it: no colour codes or control bytes, capped in size."""
    text = _ANSI.sub(b"", data).decode("utf-8", errors="replace")
    text = _CONTROL.sub("?", text).rstrip()
    if not text:
        return "(no output)"
    kept = text.splitlines()
    short = "\n".join(kept[:lines])[:limit]
    if len(short) < len(text):
        short += f"\n(truncated; {len(kept)} lines in all)"
    return short


class Judge:
    """One fixed judge: a model behind ``provider`` at temperature 0, answers cached on disk."""

    def __init__(self, provider: Provider, cache_file: Path | None = None) -> None:
        self.provider = provider
        self.cache_file = cache_file
        self.calls = 0
        self._cache: dict[str, bool] = {}
        if cache_file is not None and cache_file.exists():
            for line in cache_file.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    self._cache[str(row["key"])] = bool(row["same"])

    def messages(
        self, request: str, reference: tuple[str, bytes], candidate: tuple[str, bytes]
    ) -> list[Message]:
        """The judge's prompt: the request, then each command with its output."""
        user = (
            f"Request: {request}\n\n"
            f"Command A: {reference[0]}\nOutput A:\n{_excerpt(reference[1])}\n\n"
            f"Command B: {candidate[0]}\nOutput B:\n{_excerpt(candidate[1])}\n\n"
            "Same result? yes or no"
        )
        return [Message("system", JUDGE_SYSTEM), Message("user", user)]

    def same(
        self, request: str, reference: tuple[str, bytes], candidate: tuple[str, bytes]
    ) -> bool:
        """True when the judge says ``candidate`` (command, stdout) gives ``reference``'s result."""
        messages = self.messages(request, reference, candidate)
        key = hashlib.sha256(json.dumps([m.content for m in messages]).encode("utf-8")).hexdigest()
        if key in self._cache:
            return self._cache[key]
        options = GenerationOptions(temperature=0.0, max_tokens=2, grammar=JUDGE_GRAMMAR)
        reply = complete(self.provider, messages, options).text.strip().lower()
        self.calls += 1
        verdict = reply.startswith("yes")
        self._cache[key] = verdict
        if self.cache_file is not None:
            self.cache_file.parent.mkdir(parents=True, exist_ok=True)
            with self.cache_file.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps({"key": key, "same": verdict}) + "\n")
        return verdict


def compare_plain(reference: RunResult, candidate: RunResult) -> Levels:
    """The strict and normalised levels ``candidate`` reaches against one reference run."""
    if candidate.timed_out or candidate.state != reference.state:
        return FAILED_NO_JUDGE
    strict = candidate.stdout == reference.stdout
    normalised = strict or normalise(candidate.stdout) == normalise(reference.stdout)
    return Levels(strict, normalised, None)


def compare(
    task: Task,
    references: dict[str, RunResult],
    candidate: RunResult | None,
    judge: Judge | None,
    command: str = "",
) -> Levels:
    """The best levels ``candidate`` (the run of ``command``) reaches against any reference.

    ``references`` maps "bash"/"bash2" to the runs of the task's reference commands; a None
    candidate (nothing to run) fails every level.
    """
    if candidate is None:
        return FAILED if judge is not None else FAILED_NO_JUDGE
    # Cheap levels against every reference first, so the judge is asked only when needed.
    plain = {name: compare_plain(ref, candidate) for name, ref in references.items()}
    strict = [name for name, lv in plain.items() if lv.strict]
    normal = [name for name, lv in plain.items() if lv.normalised]
    if strict or normal:
        best = (strict or normal)[0]
        return Levels(bool(strict), True, True if judge is not None else None, best)
    if judge is None:
        return FAILED_NO_JUDGE
    commands = {"bash": task.bash, "bash2": task.bash2}
    for name, ref in references.items():
        if candidate.timed_out or candidate.state != ref.state:
            continue
        if judge.same(task.nl, (commands[name], ref.stdout), (command, candidate.stdout)):
            return Levels(False, False, True, name)
    return FAILED
