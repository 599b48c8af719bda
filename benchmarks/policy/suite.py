"""The policy corpus by attack class, the everyday commands, and their train / held-out split.

Pure: every command here only ever reaches a verdict function (``conch.policy.assess`` by
default), which runs nothing.

Attacks come from ``benchmarks/policy/data/attacks-*.yaml`` (one file per attack class, the
class named in the file) and from the older bypass corpus ``tests/policy/bypass_corpus.yaml``,
imported whole as the class ``existing`` (``deny`` entries are catastrophic, ``safe`` ones
harmful). Severity says what the policy owes an attack:

- ``catastrophic``: rejected and denylisted in every context (safe and unsafe, restricted,
  full-autonomous and interactive);
- ``harmful``: never allowed outright in the default context (safe mode, restricted-autonomous);
- ``leak``: prints a credential without sending it anywhere; recorded apart, not a goal of
  the policy (containment keeps secrets out of the environment).

Everyday commands are what people really ask for: the accuracy benchmark's reference commands,
the shipped few-shot examples' commands and the agent benchmark's commands, deduplicated.

Both are split by a stable hash of the command text: a quarter is held out. The held-out part
is not to be tuned on: a fix is judged on the training part, the held-out part says whether it
generalises.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml

from benchmarks.policy.corpus import CORPUS, DENY_CONTEXTS, load_attacks, load_benign
from conch.policy import Decision, ExecutionMode, PolicyContext, Verdict

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
EXAMPLES = ROOT / "src" / "conch" / "command" / "data"
EXAMPLE_FILES = ("examples.tsv", "examples-more.tsv", "shared-examples.tsv")

SEVERITIES = ("catastrophic", "harmful", "leak")
SPLITS = ("train", "heldout")
EXISTING = "existing"
HELDOUT_PERCENT = 25

DEFAULT = PolicyContext()
# Where a catastrophic attack must be rejected as denylisted: every mode, unsafe or not.
CONTEXTS: dict[str, PolicyContext] = {
    **DENY_CONTEXTS,
    "unsafe/interactive": PolicyContext(unsafe=True, mode=ExecutionMode.INTERACTIVE),
}

VerdictFunction = Callable[[str, PolicyContext], Verdict]


def split_of(command: str) -> str:
    """``heldout`` for a stable quarter of all command texts, ``train`` for the rest."""
    digest = hashlib.sha256(command.encode("utf-8", "surrogatepass")).digest()
    return "heldout" if int.from_bytes(digest[:8], "big") % 100 < HELDOUT_PERCENT else "train"


@dataclass(frozen=True, slots=True)
class Attack:
    """One attack: the command, its class, its severity and what it tries."""

    cmd: str
    cls: str
    severity: str
    note: str

    @property
    def split(self) -> str:
        return split_of(self.cmd)


@dataclass(frozen=True, slots=True)
class Everyday:
    """A command people really ask for, and where it comes from."""

    command: str
    source: str

    @property
    def split(self) -> str:
        return split_of(self.command)


def load_new_attacks(directory: Path = DATA) -> list[Attack]:
    """The attacks written by class (``attacks-*.yaml``), in file order, first of each text."""
    attacks: list[Attack] = []
    for path in sorted(directory.glob("attacks-*.yaml")):
        attacks += _read_class_file(path)
    return _first_of_each(attacks)


def _read_class_file(path: Path) -> list[Attack]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    cls = str(data["class"])
    found: list[Attack] = []
    for entry in data["attacks"]:
        severity = str(entry["severity"])
        if severity not in SEVERITIES:
            raise ValueError(f"{path.name}: unknown severity {severity!r} for {entry['cmd']!r}")
        found.append(
            Attack(str(entry["cmd"]), str(entry.get("class", cls)), severity, entry["note"])
        )
    return found


def import_existing(path: Path = CORPUS) -> list[Attack]:
    """The older bypass corpus as one class: ``deny`` -> catastrophic, ``safe`` -> harmful."""
    return [
        Attack(
            a.command,
            EXISTING,
            "catastrophic" if a.level == "deny" else "harmful",
            f"[{a.category}] {a.note}",
        )
        for a in load_attacks(path)
    ]


def load_all_attacks() -> list[Attack]:
    """The new attacks that are not in the existing corpus, then the existing corpus (an
    entry in both stays in ``existing``, so the new classes count only new commands)."""
    existing = import_existing()
    known = {a.cmd for a in existing}
    return _first_of_each([*(a for a in load_new_attacks() if a.cmd not in known), *existing])


def _first_of_each(attacks: Iterable[Attack]) -> list[Attack]:
    seen: dict[str, Attack] = {}
    for attack in attacks:
        seen.setdefault(attack.cmd, attack)
    return list(seen.values())


def example_commands(directory: Path = EXAMPLES) -> list[tuple[str, str]]:
    """``(command, file name)`` for every shipped few-shot example (the last TSV column)."""
    found: list[tuple[str, str]] = []
    for name in EXAMPLE_FILES:
        for line in (directory / name).read_text(encoding="utf-8").splitlines():
            if not line.strip() or line.startswith("#") or "\t" not in line:
                continue
            command = line.rsplit("\t", 1)[1].strip()
            if command:
                found.append((command, name))
    return found


def load_everyday() -> list[Everyday]:
    """The accuracy benchmark's and agent benchmark's commands, then the shipped examples'
    commands, deduplicated, in that order."""
    found: dict[str, str] = {}
    for benign in load_benign():
        found.setdefault(benign.command, benign.source)
    for command, name in example_commands():
        found.setdefault(command, name)
    return [Everyday(command, source) for command, source in found.items()]


@dataclass(frozen=True, slots=True)
class AttackOutcome:
    """One attack's verdicts: in the default context, and in every context for a
    catastrophic attack."""

    attack: Attack
    default: Verdict
    contexts: dict[str, Verdict]

    @property
    def allowed(self) -> bool:
        """Runs without anyone asked in the default context."""
        return self.default.decision is Decision.ALLOW

    @property
    def allowed_somewhere(self) -> list[str]:
        """The contexts that allow it outright."""
        return [name for name, v in self.contexts.items() if v.decision is Decision.ALLOW]

    @property
    def not_denylisted(self) -> list[str]:
        """For a catastrophic attack, the contexts that do not reject it as denylisted."""
        if self.attack.severity != "catastrophic":
            return []
        return [
            name
            for name, v in self.contexts.items()
            if v.decision is not Decision.REJECT or not v.denylisted
        ]


def judge_attack(attack: Attack, verdict: VerdictFunction) -> AttackOutcome:
    """``attack`` through ``verdict``: the default context, and every context when it is
    catastrophic."""
    default = verdict(attack.cmd, DEFAULT)
    contexts: dict[str, Verdict] = {}
    if attack.severity == "catastrophic":
        contexts = {
            name: (default if context == DEFAULT else verdict(attack.cmd, context))
            for name, context in CONTEXTS.items()
        }
    return AttackOutcome(attack, default, contexts)


@dataclass(frozen=True, slots=True)
class EverydayOutcome:
    """One everyday command's verdict in the default context."""

    everyday: Everyday
    verdict: Verdict

    @property
    def refused(self) -> bool:
        return self.verdict.decision is Decision.REJECT

    @property
    def refusal_kind(self) -> str:
        """Why it was refused: ``needs a shell``, ``denylist`` or ``other``; empty if not."""
        if not self.refused:
            return ""
        if self.verdict.denylisted:
            return "denylist"
        return "needs a shell" if self.verdict.needs_unsafe else "other"


def judge_everyday(everyday: Everyday, verdict: VerdictFunction) -> EverydayOutcome:
    """``everyday`` through ``verdict`` in the default context."""
    return EverydayOutcome(everyday, verdict(everyday.command, DEFAULT))
