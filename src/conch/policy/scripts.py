"""Checks the option tables name for what options alone cannot tell: the code ``sed``, ``awk``
and ``dc`` are given, and operands that change what a program does.

Each check takes a program's Reading (conch.policy.options) and returns the risks it finds,
with why. A script the scanner cannot follow is ``unknown``: default-deny holds inside the
languages too.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from conch.policy.options import ENV_ASSIGNMENT, Reading
from conch.policy.risk import Risk

Found = list[tuple[Risk, str]]
_CONSOLE = frozenset({"/dev/stdout", "/dev/stderr", "-"})


# sed -------------------------------------------------------------------------------------

_SED_SIMPLE = frozenset("=dDgGhHnNpPxzF")
_SED_NUMBER = frozenset("lLqQ")
_SED_FLAGS = frozenset("gpiImM0123456789")


def _sed_delimited(script: str, i: int, delimiter: str) -> int | None:
    """Index just past the ``delimiter`` that closes the part starting at ``i``."""
    while i < len(script):
        ch = script[i]
        if ch == "\\":
            i += 2
            continue
        if ch == delimiter:
            return i + 1
        if ch == "\n" and delimiter != "\n":
            return None
        i += 1
    return None


def _line_end(script: str, i: int) -> int:
    end = script.find("\n", i)
    return len(script) if end < 0 else end


def _file_operand(script: str, i: int) -> tuple[str, int]:
    """The file name a ``w``/``r`` command or flag takes: the rest of the line."""
    end = _line_end(script, i)
    return script[i:end].strip(), end


def _sed_address(script: str, i: int) -> int | None:
    """Skip an address (``3``, ``$``, ``/re/I``, ``\\%re%``, ``1~2``, ``+3``); None if bad."""
    if i < len(script) and script[i] in "/\\":
        delimiter = "/"
        if script[i] == "\\":
            if i + 1 >= len(script):
                return None
            delimiter, i = script[i + 1], i + 1
        end = _sed_delimited(script, i + 1, delimiter)
        if end is None:
            return None
        i = end
        while i < len(script) and script[i] in "IM":
            i += 1
        return i
    match = re.compile(r"[0-9]+(~[0-9]+)?|\$|[+~][0-9]+").match(script, i)
    return match.end() if match else i


def sed_script(script: str) -> Found:
    """What a sed script may do besides printing: ``e`` and ``s///e`` run commands, ``w``,
    ``W`` and ``s///w`` write files. A script the scanner cannot read is unknown."""
    found: Found = []
    i = 0
    n = len(script)
    while i < n:
        ch = script[i]
        if ch in " \t\n;}{" or ch == "!":
            i += 1
            continue
        if ch == "#":
            i = _line_end(script, i)
            continue
        start = i
        after = _sed_address(script, i)
        if after is not None and after != start and after < n and script[after] == ",":
            after = _sed_address(script, after + 1)
        if after is None:
            return [(Risk.UNKNOWN, "a sed address that cannot be read")]
        i = after
        while i < n and script[i] in " \t!":
            i += 1
        if i >= n:
            break
        command = script[i]
        i += 1
        if command in "{};\n":
            continue
        if command in _SED_SIMPLE:
            continue
        if command in _SED_NUMBER:
            while i < n and (script[i].isdigit() or script[i] in " \t"):
                i += 1
        elif command in ":btTv":
            while i < n and script[i] not in ";\n":
                i += 1
        elif command in "aic":
            while i < n and script[i] != "\n":
                i += 2 if script[i] == "\\" else 1
        elif command in "rR":
            _name, i = _file_operand(script, i)
        elif command in "wW":
            name, i = _file_operand(script, i)
            if name not in _CONSOLE:
                found.append((Risk.WRITES, f"sed's {command} command writes {name!r}"))
        elif command == "e":
            found.append((Risk.UNKNOWN, "sed's e command runs a shell command"))
            i = _line_end(script, i)
        elif command in "sy":
            if i >= n or script[i] in "\\\n":
                return [(Risk.UNKNOWN, f"a sed {command} command that cannot be read")]
            delimiter = script[i]
            middle = _sed_delimited(script, i + 1, delimiter)
            end = _sed_delimited(script, middle, delimiter) if middle is not None else None
            if end is None:
                return [(Risk.UNKNOWN, f"a sed {command} command that cannot be read")]
            i = end
            while command == "s" and i < n and script[i] not in ";\n}# \t":
                flag = script[i]
                if flag == "e":
                    found.append((Risk.UNKNOWN, "sed's s///e runs the result as a command"))
                elif flag == "w":
                    name, i = _file_operand(script, i + 1)
                    if name not in _CONSOLE:
                        found.append((Risk.WRITES, f"sed's s///w writes {name!r}"))
                    break
                elif flag not in _SED_FLAGS:
                    return [(Risk.UNKNOWN, f"the sed flag {flag!r} is not a known one")]
                i += 1
        else:
            return [(Risk.UNKNOWN, f"the sed command {command!r} is not a known one")]
    return found


# awk -------------------------------------------------------------------------------------

_AWK_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_AWK_KEYWORDS_BEFORE_VALUE = frozenset(
    {"print", "printf", "return", "in", "case", "if", "while", "for", "do", "else"}
)


def _awk_string(program: str, i: int) -> tuple[str, int]:
    """The body of the string literal opening at ``i``, and the index after it."""
    j = i + 1
    while j < len(program) and program[j] != '"':
        j += 2 if program[j] == "\\" else 1
    return program[i + 1 : j], j + 1


def _awk_regex_end(program: str, i: int) -> int:
    j = i + 1
    in_class = False
    while j < len(program) and program[j] != "\n":
        ch = program[j]
        if ch == "\\":
            j += 2
            continue
        if ch == "[":
            in_class = True
        elif ch == "]":
            in_class = False
        elif ch == "/" and not in_class:
            return j + 1
        j += 1
    return j


def awk_program(program: str) -> Found:
    """What an awk program may do besides printing: ``system()``, pipes (``print | "cmd"``,
    ``"cmd" | getline``), ``print > file``, indirect calls and ``@include``/``@load``
    (``@f()``), and gawk's ``/inet`` network files."""
    found: Found = []
    i = 0
    n = len(program)
    depth = 0
    printing: int | None = None  # paren depth of the print statement being read
    value_before = False  # the previous token ends a value (so `/` divides)
    while i < n:
        ch = program[i]
        if ch == "#":
            i = _line_end(program, i)
            continue
        if ch == '"':
            body, i = _awk_string(program, i)
            if body.startswith("/inet"):
                found.append((Risk.NETWORK, "awk opens a network connection (/inet)"))
            value_before = True
            continue
        if ch == "/" and not value_before:
            i = _awk_regex_end(program, i)
            value_before = True
            continue
        match = _AWK_WORD.match(program, i)
        if match:
            word = match.group()
            i = match.end()
            if word == "system":
                found.append((Risk.UNKNOWN, "awk's system() runs a shell command"))
            if word in ("print", "printf"):
                printing = depth
            value_before = word not in _AWK_KEYWORDS_BEFORE_VALUE
            continue
        i += 1
        if ch.isdigit() or ch in ".$":
            value_before = ch != "$"
            continue
        if ch in " \t":
            continue
        value_before = ch in ")]"
        if ch == "@":
            found.append((Risk.UNKNOWN, "awk's @ (indirect call, @include or @load)"))
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch in ";\n{}":
            if printing is not None and depth <= printing:
                printing = None
        elif ch == "|":
            if i < n and program[i] == "|":
                i += 1
            else:
                found.append((Risk.UNKNOWN, "awk pipes to or from a shell command"))
        elif ch == ">" and printing is not None and depth == printing:
            if i < n and program[i] == ">":
                i += 1
            while i < n and program[i] in " \t":
                i += 1
            target = _awk_string(program, i)[0] if i < n and program[i] == '"' else None
            if target is None or target not in _CONSOLE:
                found.append((Risk.WRITES, "awk's print > writes a file"))
    return found


# checks by name ----------------------------------------------------------------------------


def _scripts(reading: Reading, scan: Callable[[str], Found], language: str) -> Found:
    found: Found = []
    for script in reading.scripts:
        if script is None:
            found.append((Risk.UNKNOWN, f"{language} code only known at run time"))
        else:
            found += scan(script)
    return found


def _sed(reading: Reading) -> Found:
    return _scripts(reading, sed_script, "sed")


def _awk(reading: Reading) -> Found:
    found = _scripts(reading, awk_program, "awk")
    for library in reading.values("-i", "--include"):
        if library in ("inplace", "inplace.awk"):
            found.append((Risk.WRITES, "gawk -i inplace rewrites its input files"))
        else:
            found.append((Risk.UNKNOWN, f"gawk -i {library} loads awk code from a file"))
    return found


def _dc(reading: Reading) -> Found:
    found: Found = []
    for script in reading.scripts:
        if script is None or "!" in script:
            found.append((Risk.UNKNOWN, "dc's ! runs a shell command"))
    if not reading.scripts and not reading.operands:
        found.append((Risk.UNKNOWN, "dc reads its program from stdin"))
    return found


def _remote_archive(reading: Reading) -> Found:
    """``tar -f host:file`` reads or writes the archive on another machine."""
    if "--force-local" in reading.names():
        return []
    for value in reading.values("-f", "--file"):
        if value is None or re.match(r"[^/]*:", value):
            return [(Risk.NETWORK, f"the archive {value!r} is on another machine")]
    return []


def _discard(reading: Reading) -> Found:
    """``git checkout -- file`` and ``git checkout .`` throw local changes away."""
    if "." in reading.operands or reading.separator:
        return [(Risk.DESTRUCTIVE, "it discards local changes")]
    return []


def _remote_operands(reading: Reading) -> Found:
    """``rsync host:path``: a copy to or from another machine."""
    if any(o is None or ":" in o for o in reading.operands):
        return [(Risk.NETWORK, "it copies to or from another machine")]
    return []


def _settings(reading: Reading) -> Found:
    """``sysctl name=value`` sets a kernel parameter."""
    if any(o is None or "=" in o for o in reading.operands):
        return [(Risk.PRIVILEGED, "it sets a kernel parameter")]
    return []


def _exports(reading: Reading) -> Found:
    """``export NAME=value``: judged as the environment it sets, by ``environment``."""
    reading.assignments += [
        o.split("=", 1)[0] for o in reading.operands if o is not None and ENV_ASSIGNMENT.match(o)
    ]
    return []


CHECKS: dict[str, Callable[[Reading], Found]] = {
    "sed": _sed,
    "awk": _awk,
    "dc": _dc,
    "remote-archive": _remote_archive,
    "discard": _discard,
    "remote-operands": _remote_operands,
    "settings": _settings,
    "exports": _exports,
}
