"""Option tables: which argument forms of a program are known, and what each form risks.

The tables are data (``data/programs.yaml``, described in docs/policy.md). ``read`` parses a
program's arguments against its table the way the program would: GNU long options resolved
by unique prefix against the full list (``--in-pl`` is ``--in-place``; an ambiguous prefix
counts as its most dangerous candidate), ``--opt=value``, clustered short options (``-rn``),
attached values (``-n5``), ``--``, ``+`` words, options that take a value (so the value is not
read as an operand or as the command a wrapper runs), and subcommands (``git log``).
Everything the table does not list is recorded as unlisted, which the caller judges as at
least a write.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import cache
from importlib import resources
from typing import Any

import yaml

from conch.policy.risk import RISK_ORDER, Risk, highest

ENV_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_RISKS = {str(r): r for r in Risk}
_NUMERIC = re.compile(r"-[0-9]+")


class Takes(Enum):
    """What an option takes after it."""

    NOTHING = "nothing"
    VALUE = "value"  # the rest of the word, ``=value``, or the next word
    ATTACHED = "attached"  # an optional value, only in the same word (``-i.bak``, ``--color=x``)
    BLOCK = "block"  # words up to ``;`` or ``+`` (``find -exec ... ;``)


@dataclass(frozen=True, slots=True)
class Option:
    """One option of a program: its name, its risk and what it takes."""

    name: str
    risk: Risk
    takes: Takes = Takes.NOTHING
    script: bool = False  # the value is code in the program's language (``sed -e``)


@dataclass(frozen=True, slots=True)
class Table:
    """The known forms of one program, or of one subcommand of it."""

    name: str
    risk: Risk = Risk.READ_ONLY  # of a form made only of listed options and operands
    unlisted: Risk = Risk.WRITES  # of an option the table does not list
    style: str = "gnu"  # gnu | words (``find -name``) | initial (``xxd -cols``: first letter)
    abbreviate: bool = True
    short: Mapping[str, Option] = field(default_factory=dict)
    long: Mapping[str, Option] = field(default_factory=dict)
    numeric: Option | None = None  # ``-5`` for ``-n 5``
    operands: int | None = None  # how many operands keep ``risk`` (None: any number)
    beyond: Risk = Risk.WRITES  # of the operands after that many (output files)
    plus: Risk | None = None  # of a ``+word`` (None: a ``+word`` is an operand)
    plus_ok: re.Pattern[str] | None = None  # ``+words`` that are read-only all the same
    script: bool = False  # the first operand is code unless an option gave it
    command: int | None = None  # after this many operands the rest is a command it runs
    assignments: bool = False  # NAME=value words before the command (``env``)
    permute: bool = True  # options may follow operands (GNU getopt)
    old_style: bool = False  # a first word without a dash is a cluster (``tar czf x``)
    reads_with: frozenset[str] = frozenset()  # options that make a ``risk`` form read-only
    checks: tuple[str, ...] = ()  # extra checks by name (conch.policy.scripts)
    subcommands: Mapping[str, Table] = field(default_factory=dict)
    subcommand_unlisted: Risk = Risk.WRITES
    subcommand_prefixes: bool = False  # ``ip a s``: a subcommand by unique prefix


@dataclass(slots=True)
class Reading:
    """A program's arguments read against its table."""

    table: Table  # the innermost table used (a subcommand's, when there is one)
    path: list[str]  # the program and its subcommands
    options: list[tuple[Option, str | None]] = field(default_factory=list)
    operands: list[str | None] = field(default_factory=list)
    plus: list[str] = field(default_factory=list)
    scripts: list[str | None] = field(default_factory=list)
    assignments: list[str] = field(default_factory=list)
    risks: list[tuple[Risk, str]] = field(default_factory=list)
    command_at: int | None = None  # index of the first word of the command it runs
    separator: bool = False  # ``--`` ended the options

    def names(self) -> set[str]:
        """The canonical names of the options given."""
        return {option.name for option, _value in self.options}

    def values(self, *names: str) -> list[str | None]:
        """The values given to the options ``names``."""
        return [value for option, value in self.options if option.name in names]

    def risk(self) -> Risk:
        """The highest risk found, with the table's own (a table with read-only modes adds
        its own risk only when no such mode was given, see ``read``)."""
        base = Risk.READ_ONLY if self.table.reads_with else self.table.risk
        return highest([base, *(risk for risk, _why in self.risks)])


def _risk(text: str) -> Risk:
    if text not in _RISKS:
        raise ValueError(f"unknown risk {text!r} in the option tables")
    return _RISKS[text]


def _option(spec: str, risk: Risk, scripts: set[str]) -> Option:
    takes = Takes.NOTHING
    name = spec
    if spec.endswith("?="):
        name, takes = spec[:-2], Takes.ATTACHED
    elif spec.endswith("=..."):
        name, takes = spec[:-4], Takes.BLOCK
    elif spec.endswith("="):
        name, takes = spec[:-1], Takes.VALUE
    if not name.startswith("-") or name in ("-", "--"):
        raise ValueError(f"bad option {spec!r} in the option tables")
    return Option(name, risk, takes, name in scripts)


_KEYS = frozenset(
    {"risk", "unlisted", "style", "abbreviate", "operands", "beyond", "plus", "plus-ok"}
    | {"script", "scripts", "command", "assignments", "permute", "old-style", "reads-with"}
    | {"checks", "subcommands", "subcommand-unlisted", "subcommand-prefixes", "inherit"}
    | {"same-as"}
    | set(_RISKS)
)


def _table(name: str, data: Any, parent: Table | None = None) -> Table:
    if isinstance(data, str):
        return Table(name, risk=_risk(data), unlisted=_risk(data), operands=None)
    if not isinstance(data, dict):
        raise ValueError(f"the option table of {name!r} is not a mapping")
    unknown = set(data) - _KEYS
    if unknown:
        raise ValueError(f"unknown keys {sorted(unknown)} in the option table of {name!r}")
    inherit = parent is not None and bool(data.get("inherit", False))
    short: dict[str, Option] = dict(parent.short) if inherit and parent else {}
    long: dict[str, Option] = dict(parent.long) if inherit and parent else {}
    numeric = parent.numeric if inherit and parent else None
    scripts = set(str(data.get("scripts", "")).split())
    style = str(data.get("style", "gnu"))
    if style not in ("gnu", "words", "initial"):
        raise ValueError(f"unknown style {style!r} in the option table of {name!r}")
    for risk in RISK_ORDER:  # later (more severe) groups win for an option listed twice
        for spec in str(data.get(str(risk), "")).split():
            option = _option(spec, risk, scripts)
            if option.name == "-#":
                numeric = option
            elif style == "gnu" and not option.name.startswith("--"):
                if len(option.name) != 2:
                    raise ValueError(f"bad short option {spec!r} in the table of {name!r}")
                short[option.name[1]] = option
            elif style == "initial":
                short[option.name[1]] = option
            else:
                long[option.name] = option
    table = Table(
        name=name,
        risk=_risk(str(data.get("risk", "read-only"))),
        unlisted=_risk(str(data.get("unlisted", "writes"))),
        style=style,
        abbreviate=bool(data.get("abbreviate", style == "gnu")),
        short=short,
        long=long,
        numeric=numeric,
        operands=data.get("operands"),
        beyond=_risk(str(data.get("beyond", "writes"))),
        plus=_risk(str(data["plus"])) if "plus" in data else None,
        plus_ok=re.compile(str(data["plus-ok"])) if "plus-ok" in data else None,
        script=bool(data.get("script", False)),
        command=data.get("command"),
        assignments=bool(data.get("assignments", False)),
        permute=bool(data.get("permute", data.get("command") is None)),
        old_style=bool(data.get("old-style", False)),
        reads_with=frozenset(str(data.get("reads-with", "")).split()),
        checks=tuple(str(data.get("checks", "")).split()),
        subcommand_unlisted=_risk(str(data.get("subcommand-unlisted", "writes"))),
        subcommand_prefixes=bool(data.get("subcommand-prefixes", False)),
    )
    if any(not isinstance(sub, str) for sub in data.get("subcommands") or {}):
        raise ValueError(f"a subcommand of {name!r} in the option tables is not a string")
    subcommands = {
        str(sub): _table(f"{name} {sub}", body, table)
        for sub, body in (data.get("subcommands") or {}).items()
    }
    return dataclasses.replace(table, subcommands=subcommands)


@dataclass(frozen=True, slots=True)
class Tables:
    """Every program's table, the programs whose risk never depends on their arguments, and
    the environment variables a command may set for itself without changing its risk."""

    programs: Mapping[str, Table]
    fixed: Mapping[str, Risk]
    harmless_environment: tuple[str, ...]

    def harmless(self, variable: str) -> bool:
        """Whether setting ``variable`` for a command leaves its risk as it is."""
        return any(
            variable == pattern or (pattern.endswith("*") and variable.startswith(pattern[:-1]))
            for pattern in self.harmless_environment
        )


def load(text: str) -> Tables:
    """Build the tables from the YAML ``text`` (raises ValueError on a malformed table)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data = yaml.load(text, Loader=loader)
    programs: dict[str, Table] = {}
    aliases: dict[str, str] = {}
    for name, body in (data.get("programs") or {}).items():
        if not isinstance(name, str):  # `yes:` and `true:` read as booleans unless quoted
            raise ValueError(f"the program name {name!r} in the option tables is not a string")
        if isinstance(body, dict) and "same-as" in body:
            aliases[str(name)] = str(body["same-as"])
            continue
        programs[str(name)] = _table(str(name), body)
    for name, target in aliases.items():
        programs[name] = programs[target]
    fixed: dict[str, Risk] = {}
    for risk, names in (data.get("fixed") or {}).items():
        for program in str(names).split():
            if program in programs or program in fixed:
                raise ValueError(f"{program!r} is listed twice in the option tables")
            fixed[program] = _risk(str(risk))
    harmless = tuple(str(data.get("harmless-environment", "")).split())
    return Tables(programs, fixed, harmless)


@cache
def tables() -> Tables:
    """The tables shipped with conch."""
    path = resources.files("conch.policy") / "data" / "programs.yaml"
    return load(path.read_text(encoding="utf-8"))


def table(name: str) -> Table | None:
    """The option table of the program ``name``, if it has one."""
    return tables().programs.get(name)


# Reading ---------------------------------------------------------------------------------


def _candidates(table: Table, name: str) -> list[Option]:
    """The options a long name may stand for: itself, or every option it abbreviates."""
    if name in table.long:
        return [table.long[name]]
    if not table.abbreviate:
        return []
    found = [option for key, option in table.long.items() if key.startswith(name)]
    return list({id(o): o for o in found}.values())


def _most_dangerous(options: list[Option]) -> Option:
    option = max(options, key=lambda o: RISK_ORDER.index(o.risk))
    takes = next((o.takes for o in options if o.takes is Takes.VALUE), option.takes)
    return Option(option.name, option.risk, takes, any(o.script for o in options))


class _Reader:
    """Reads one word list against one table; subcommands are read by a reader of their own."""

    def __init__(self, table: Table, texts: list[str | None], reading: Reading) -> None:
        self.table = table
        self.texts = texts
        self.r = reading
        self.i = 0

    def word(self) -> str | None:
        return self.texts[self.i] if self.i < len(self.texts) else None

    def take_value(self) -> str | None:
        """The next word, as the value of an option (consumed)."""
        if self.i + 1 < len(self.texts):
            self.i += 1
            return self.texts[self.i]
        return None

    def given(self, option: Option, value: str | None) -> None:
        self.r.options.append((option, value))
        if option.risk is not Risk.READ_ONLY:
            self.r.risks.append((option.risk, f"option {option.name}"))
        if option.script:
            self.r.scripts.append(value)

    def unlisted(self, text: str) -> None:
        self.r.risks.append((self.table.unlisted, f"option {text} is not a known read-only one"))

    def long_option(self, text: str) -> None:
        name, eq, value = text.partition("=")
        found = _candidates(self.table, name)
        if not found and self.table.style == "words":
            # `find -O3`: a word-style option with its value attached
            found = [
                o
                for key, o in self.table.long.items()
                if o.takes is Takes.ATTACHED and text.startswith(key)
            ]
            if found:
                self.given(found[0], text[len(found[0].name) :] or None)
                return
        if not found:
            self.unlisted(text)
            return
        option = found[0] if len(found) == 1 else _most_dangerous(found)
        if eq:
            self.given(option, value)
        elif option.takes is Takes.VALUE:
            self.given(option, self.take_value())
        elif option.takes is Takes.BLOCK:
            self.block(option)
        else:
            self.given(option, None)

    def block(self, option: Option) -> None:
        start = self.i + 1
        while self.i + 1 < len(self.texts) and self.texts[self.i + 1] not in (";", "+"):
            self.i += 1
        words = self.texts[start : self.i + 1]
        self.i += 1  # the terminator
        self.given(option, " ".join(w if w is not None else "$?" for w in words))

    def cluster(self, letters: str, separate_values: bool = False) -> None:
        """Short options in one word (``-rn``, ``-n5``; ``tar czf X`` when ``separate_values``)."""
        for pos, letter in enumerate(letters):
            option = self.table.short.get(letter)
            if option is None:
                self.unlisted("-" + letter)
                continue
            rest = letters[pos + 1 :]
            if option.takes is Takes.NOTHING:
                self.given(option, None)
                continue
            if separate_values and option.takes is Takes.VALUE:
                self.given(option, self.take_value())
                continue
            if rest:
                self.given(option, rest)
                return
            self.given(option, self.take_value() if option.takes is Takes.VALUE else None)
            return

    def initial(self, text: str) -> None:
        """``xxd -cols 8``, ``xxd -c8``: an option is known by its first letter."""
        option = self.table.short.get(text[1])
        if option is None:
            self.unlisted(text)
        elif option.takes is Takes.NOTHING:
            self.given(option, None)
        elif text[2:].isdigit():
            self.given(option, text[2:])
        else:
            self.given(option, self.take_value())

    def option(self, text: str) -> None:
        if self.table.numeric is not None and _NUMERIC.fullmatch(text):
            self.given(self.table.numeric, text[1:])
        elif self.table.style == "initial":
            self.initial(text)
        elif self.table.style == "words" or text.startswith("--"):
            self.long_option(text)
        else:
            self.cluster(text[1:])

    def run(self) -> None:
        table = self.table
        ended = False
        options_end = False  # a wrapper's options stop at its first operand
        while self.i < len(self.texts):
            text = self.word()
            if text is None:
                if table.command is not None and len(self.r.operands) >= table.command:
                    self.r.command_at = self.i
                    return
                self.r.operands.append(None)
                self.r.risks.append((table.unlisted, "an argument only known at run time"))
            elif not (ended or options_end) and text == "--":
                ended = self.r.separator = True
            elif not (ended or options_end) and text.startswith("-") and text != "-":
                self.option(text)
            elif table.old_style and self.i == 0:
                self.cluster(text, separate_values=True)
            elif not ended and table.plus is not None and text.startswith("+") and text != "+":
                self.r.plus.append(text)
                if table.plus_ok is None or not table.plus_ok.fullmatch(text):
                    self.r.risks.append((table.plus, f"the command {text!r}"))
            elif (
                table.assignments
                and not self.r.operands
                and table.command is not None
                and ENV_ASSIGNMENT.match(text)
            ):
                self.r.assignments.append(text.split("=", 1)[0])
            elif table.command is not None and len(self.r.operands) >= table.command:
                self.r.command_at = self.i
                return
            elif table.subcommands and not self.r.operands and not ended:
                self.subcommand(text)
                return
            else:
                self.r.operands.append(text)
                if not table.permute:
                    options_end = True
            self.i += 1

    def subcommand(self, text: str) -> None:
        table = self.table
        found = table.subcommands.get(text)
        if found is None and table.subcommand_prefixes:
            matches = [t for key, t in table.subcommands.items() if key.startswith(text)]
            if len(matches) == 1:
                found = matches[0]
            elif matches:
                worst = max(matches, key=lambda t: RISK_ORDER.index(t.risk))
                self.r.risks.append((worst.risk, f"the ambiguous subcommand {text!r}"))
                found = worst
        if found is None:
            # Not a subcommand the table knows: an operand, and the rest is read on.
            self.r.operands.append(text)
            self.r.risks.append((table.subcommand_unlisted, f"the subcommand {text!r}"))
            self.i += 1
            self.run()
            return
        self.r.path.append(text)
        self.r.table = found
        _Reader(found, self.texts[self.i + 1 :], self.r).run()
        if self.r.command_at is not None:
            self.r.command_at += self.i + 1


def read(table: Table, texts: list[str | None]) -> Reading:
    """Read ``texts`` (a program's arguments, None where not literal) against ``table``."""
    reading = Reading(table=table, path=[table.name])
    _Reader(table, texts, reading).run()
    final = reading.table
    limit = final.operands
    if final.script and not reading.scripts and reading.operands:
        reading.scripts.append(reading.operands.pop(0))  # the code, not a file
    operands = reading.operands
    if limit is not None and len(operands) > limit:
        reading.risks.append((final.beyond, f"operands after the first {limit}"))
    if final.reads_with and not (reading.names() & final.reads_with):
        reading.risks.append((final.risk, f"{final.name} without a read-only mode"))
    return reading


def command_start(
    name: str, texts: list[str | None]
) -> tuple[int | None, set[str], Reading] | None:
    """Where the command a wrapper runs begins in ``texts`` (None: it runs none), the
    canonical names of the wrapper's options, and the whole reading; None when ``name`` has
    no table or runs no command."""
    found = table(name)
    if found is None or found.command is None:
        return None
    reading = read(found, texts)
    return reading.command_at, reading.names(), reading
