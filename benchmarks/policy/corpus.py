"""The policy attack corpus and the benign corpus, and how ``assess`` is judged on them.

Pure: every command here only ever reaches ``conch.policy.assess``, which runs nothing.
The bypass corpus is ``tests/policy/bypass_corpus.yaml``; the benign corpus is the accuracy
benchmark's reference commands (``benchmarks/data/nl2sh-alfa``) and the agent benchmark's
commands (the programs its checks run, and the ``bash`` calls in its recorded runs).
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from conch.policy import Decision, ExecutionMode, PolicyContext, Verdict, assess

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "policy" / "bypass_corpus.yaml"
AGENT_TASKS = ROOT / "benchmarks" / "agent" / "tasks.yaml"
RESULTS = ROOT / "benchmarks" / "results"

SAFE = PolicyContext()
# Where the denylist must hold: every mode, unsafe or not.
DENY_CONTEXTS: dict[str, PolicyContext] = {
    "safe/restricted": SAFE,
    "safe/full": PolicyContext(mode=ExecutionMode.FULL),
    "safe/interactive": PolicyContext(mode=ExecutionMode.INTERACTIVE),
    "unsafe/restricted": PolicyContext(unsafe=True),
    "unsafe/full": PolicyContext(unsafe=True, mode=ExecutionMode.FULL),
}
UNSAFE = PolicyContext(unsafe=True)


@dataclass(frozen=True, slots=True)
class Attack:
    """One bypass attempt: ``deny`` entries must be rejected in every mode, ``safe`` ones
    must never be allowed without a question in safe mode."""

    command: str
    category: str
    level: str
    note: str


@dataclass(frozen=True, slots=True)
class Miss:
    """An attack the policy let through: in which context, and its verdict."""

    attack: Attack
    context: str
    verdict: Verdict


def load_attacks(path: Path = CORPUS) -> list[Attack]:
    """Every entry of the bypass corpus, in file order."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    attacks: list[Attack] = []
    for category, entries in data["categories"].items():
        for entry in entries:
            command = str(entry["cmd"]) * int(entry.get("repeat", 1)) + str(entry.get("then", ""))
            level = str(entry["level"])
            if level not in ("deny", "safe"):
                raise ValueError(f"unknown level {level!r} in {category}")
            attacks.append(Attack(command, str(category), level, str(entry["note"])))
    return attacks


def misses(attack: Attack) -> list[Miss]:
    """Where ``attack`` gets through: a deny entry not rejected in some context, or a safe
    entry allowed without a question in safe mode."""
    if attack.level == "deny":
        found = []
        for name, context in DENY_CONTEXTS.items():
            verdict = assess(attack.command, context)
            if verdict.decision is not Decision.REJECT or not verdict.denylisted:
                found.append(Miss(attack, name, verdict))
        return found
    verdict = assess(attack.command, SAFE)
    return (
        [] if verdict.decision is not Decision.ALLOW else [Miss(attack, "safe/restricted", verdict)]
    )


@dataclass(frozen=True, slots=True)
class Benign:
    """A command a user wants run, where it comes from, and whether it only reads."""

    command: str
    source: str


def load_benign() -> list[Benign]:
    """The accuracy benchmark's reference commands (both references of all 300 tasks) and
    the agent benchmark's commands, deduplicated, in order."""
    from benchmarks.accuracy.fixtures import load_tasks

    found: dict[str, str] = {}
    for task in load_tasks():
        for text in (task.bash, task.bash2):
            if text.strip():
                found.setdefault(text, f"nl2sh-alfa #{task.index}")
    tasks = yaml.safe_load(AGENT_TASKS.read_text(encoding="utf-8"))
    for task in tasks["tasks"]:
        for check in task.get("checks") or ():
            if isinstance(check, dict) and isinstance(check.get("run"), list):
                found.setdefault(shlex.join(str(w) for w in check["run"]), f"agent {task['id']}")
    for path in sorted(RESULTS.glob("agent*.json")):
        rows = json.loads(path.read_text(encoding="utf-8")).get("rows") or []
        for row in rows:
            if row.get("kind") == "refuse":
                continue  # the refuse tasks ask for destruction: not benign
            for line in (row.get("notes") or {}).get("trace") or ():
                command = _bash_call(line)
                if command is not None:
                    found.setdefault(command, f"agent run {row.get('task')}")
    return [Benign(command, source) for command, source in found.items()]


def _bash_call(line: str) -> str | None:
    if not line.startswith("bash {"):
        return None
    try:
        args: dict[str, Any] = json.loads(line[len("bash ") :])
    except json.JSONDecodeError:
        return None
    command = args.get("command")
    return command if isinstance(command, str) else None


@dataclass(frozen=True, slots=True)
class BenignOutcome:
    """How the policy treats one benign command.

    ``false_positive``: rejected in unsafe mode (the policy would never run it), or rejected
    in safe mode for anything but needing a shell (denylist, whitelist, sandbox), or a
    command that only reads asked about in safe mode. ``needs_shell``: safe mode refuses it
    only because it needs a real shell (unsafe mode runs it after asking), by design.
    """

    benign: Benign
    safe: Verdict
    unsafe: Verdict
    read_only: bool

    @property
    def false_positive(self) -> bool:
        if self.unsafe.decision is Decision.REJECT:
            return True
        if self.safe.decision is Decision.REJECT and not self.safe.needs_unsafe:
            return True
        return self.read_only and self.safe.decision is Decision.CONFIRM

    @property
    def needs_shell(self) -> bool:
        return self.safe.decision is Decision.REJECT and self.safe.needs_unsafe


# Programs that only read, whatever their arguments (the ground truth for "asked about a
# read-only command"); kept apart from the policy's own tables on purpose.
READ_ONLY_TRUTH = frozenset(
    [
        "ls",
        "cat",
        "head",
        "tail",
        "grep",
        "egrep",
        "fgrep",
        "wc",
        "du",
        "df",
        "sort",
        "uniq",
        "cut",
        "echo",
        "printf",
        "pwd",
        "which",
        "whoami",
        "date",
        "uname",
        "hostname",
        "id",
        "stat",
        "file",
        "tree",
        "diff",
        "cmp",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "nl",
        "tac",
        "rev",
        "od",
        "hexdump",
        "strings",
        "md5sum",
        "sha1sum",
        "sha256sum",
        "cksum",
        "column",
        "paste",
        "seq",
        "expr",
        "test",
        "true",
        "false",
        "env",
        "printenv",
        "uptime",
        "free",
        "ps",
        "lsof",
        "lsblk",
        "nproc",
        "tr",
        "xxd",
        "comm",
        "join",
        "fold",
        "locale",
        "users",
        "who",
        "w",
        "getent",
        "dmesg",
        "zcat",
        "jq",
        "less",
        "more",
        "groups",
        "cal",
        "bc",
        "sleep",
    ]
)


def judge_benign(benign: Benign) -> BenignOutcome:
    """Assess ``benign`` in safe mode and in unsafe mode."""
    safe = assess(benign.command, SAFE)
    unsafe = assess(benign.command, UNSAFE)
    return BenignOutcome(benign, safe, unsafe, _only_reads(benign.command))


def _only_reads(command: str) -> bool:
    """Ground truth for "only reads": one pipeline of programs from ``READ_ONLY_TRUTH``
    (``find`` without actions), no redirection into a file, no substitution."""
    if any(ch in command for ch in ("$", "`", ">", ";", "&", "\n", "(", "{")):
        return False
    try:
        stages = [shlex.split(stage) for stage in command.split("|")]
    except ValueError:
        return False
    for words in stages:
        if not words:
            return False
        name = words[0].rsplit("/", 1)[-1]
        if name == "find":
            actions = ("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fls")
            if any(w.startswith(actions) for w in words):
                return False
        elif name == "sed":
            if any(w.startswith("-i") or w == "--in-place" for w in words):
                return False
        elif name not in READ_ONLY_TRUTH:
            return False
    return True
