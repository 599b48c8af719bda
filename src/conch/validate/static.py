"""Checks that need no model: does each program exist here, and does it document each option?

Unknown is not wrong: a program with no usable documentation has its options left unchecked,
and so do arguments that only look like options to a program that takes a command or script.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from conch.policy.commands import analyse
from conch.policy.model import Invocation
from conch.policy.parse import ParseFailure, parse_tree
from conch.policy.wrappers import SHELLS, WRAPPERS, is_interpreter, unwrap
from conch.validate.helptext import CommandHelp, locate_program

# `-5` (head, tail, fmt, uniq, diff), `kill -9`, `xargs -0`, `find -mtime -7`, `date -d -1day`:
# a dash followed by a digit is a count, a signal, a negative value or a digit flag that help
# texts rarely list in that form, so it is accepted rather than flagged.
_NUMERIC = re.compile(r"-\d")
_CHMOD_MODE = re.compile(r"-[rwxXst]+(?:,[ugoa]*[-+=][rwxXst]*)*")
# Programs whose options are whole words after one dash (`find -name`, `java -jar`).
_SINGLE_DASH_LONG = frozenset({"find", "expr", "java", "javaw"})
_JAVA_PREFIXES = ("-D", "-X", "-agentlib", "-javaagent", "-verbose", "-ea", "-da")
# awk's short options all take a value, often attached: `-F:`, `-vOFS=,`.
_AWKS = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
# Compilers and media tools accept far more options than their help lists.
_UNCHECKED = frozenset(
    {"gcc", "g++", "cc", "c++", "clang", "clang++", "ld", "as", "rustc", "go", "ffmpeg"}
    | {"ffprobe", "ffplay", "convert", "magick", "mogrify", "identify", "composite", "test", "["}
)
# awk's `print "%.2f\n", x` prints the format text itself, then x: `printf` was meant.
_AWK_PRINT_FORMAT = re.compile(
    r'(?<![\w])print\s*\(?\s*"[^"]*%[-+#0]*\d*(?:\.\d+)?[diouxXeEfgGcs](?![A-Za-z])[^"]*"\s*,'
)
# Programs whose later arguments belong to a subcommand: only options before it are checked.
_SUBCOMMAND_TOOLS = frozenset(
    {"git", "docker", "podman", "kubectl", "helm", "apt", "apt-get", "apt-cache", "dnf", "yum"}
    | {"zypper", "pacman", "brew", "port", "npm", "pnpm", "yarn", "pip", "pip3", "pipx", "uv"}
    | {"cargo", "go", "gh", "aws", "gcloud", "az", "systemctl", "ip", "openssl", "conda"}
    | {"snap", "flatpak", "terraform", "make", "poetry", "rustup", "ssh", "nmcli", "tmux"}
)


def programs(command: str) -> list[str]:
    """The programs to check, in order: base names, or the path as written for ``./tool``;
    functions defined in the command itself are left out."""
    analysis = analyse(command)
    defined = {f.name for f in analysis.functions if f.name}
    out: list[str] = []
    for inv in analysis.invocations:
        key = _key(inv)
        if key is not None and key not in defined and key not in out:
            out.append(key)
    return out


def _key(inv: Invocation) -> str | None:
    if inv.name is None:
        return None
    return inv.raw_name if "/" in inv.raw_name else inv.name


def static_check(command: str, helps: Mapping[str, CommandHelp]) -> list[str]:
    """Issues found without a model: syntax, programs not installed, undocumented options."""
    issues: list[str] = []
    try:
        if parse_tree(command).has_error:
            issues.append("the command is not valid shell syntax (it does not parse)")
    except ParseFailure as exc:
        issues.append(f"the command cannot be parsed: {exc}")
    analysis = analyse(command)
    defined = {f.name for f in analysis.functions if f.name}
    for inv in analysis.invocations:
        key = _key(inv)
        if key is None or key in defined:
            continue
        help_ = helps.get(key) or locate_program(key)
        if not help_.exists:
            issue = (
                f"program '{key}' does not exist or is not executable"
                if "/" in key
                else f"program '{key}' is not installed (not on PATH)"
            )
            issues.append(issue)
            continue
        issues.extend(_option_issues(inv, help_))
        if inv.name in _AWKS and any(a.text and _AWK_PRINT_FORMAT.search(a.text) for a in inv.args):
            issues.append(
                f"'{inv.name}' print does not format: it prints a \"%...\" string as it is, "
                "followed by the values; use printf for a format"
            )
    return list(dict.fromkeys(issues))


def used_options(command: str) -> dict[str, list[str]]:
    """Option words each program is given (to pick the relevant lines of its help)."""
    out: dict[str, list[str]] = {}
    for inv in analyse(command).invocations:
        key = _key(inv)
        if key is None:
            continue
        words = [w for w in inv.texts() if w and w.startswith("-") and w != "-"]
        out.setdefault(key, []).extend(w.split("=", 1)[0] for w in words)
    return out


def _own_args(inv: Invocation) -> list[str | None]:
    """The arguments meant for ``inv`` itself, not for a command it runs."""
    args = list(inv.args)
    name = inv.name or ""
    if name == "find":
        own: list[str | None] = []
        skipping = False
        for arg in args:
            if arg.text in ("-exec", "-execdir", "-ok", "-okdir") and not skipping:
                own.append(arg.text)
                skipping = True
            elif skipping:
                skipping = arg.text not in (";", "+")
            else:
                own.append(arg.text)
        return own
    if name in WRAPPERS:
        inner = unwrap(name, args).argv
        if (
            inner
            and len(inner) <= len(args)
            and all(a is b for a, b in zip(inner, args[len(args) - len(inner) :], strict=True))
        ):
            args = args[: len(args) - len(inner)]
    return [a.text for a in args]


def _option_issues(inv: Invocation, help_: CommandHelp) -> list[str]:
    name = inv.name or ""
    if help_.builtin or not help_.documented or name in _UNCHECKED:
        return []
    known = frozenset(help_.options)
    values = frozenset(help_.value_options)
    stops_at_operand = (
        help_.takes_command
        or name in _SUBCOMMAND_TOOLS
        or name in WRAPPERS
        or name in SHELLS
        or is_interpreter(name)
    )
    stops_at_operand = stops_at_operand and name != "find"
    has_long = any(o.startswith("--") and o not in ("--help", "--version") for o in known)
    issues: list[str] = []
    words = _own_args(inv)
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if word is None or not word.startswith("-") or word == "-":
            if stops_at_operand:
                break
            continue
        if word == "--":
            break
        if _NUMERIC.match(word) or word in known:
            continue
        if name == "chmod" and _CHMOD_MODE.fullmatch(word):
            continue  # `chmod -x file` removes a permission: a mode, not an option
        if word.startswith("--"):
            flag = word.split("=", 1)[0]
            if _long_known(flag, known):
                if flag in values and "=" not in word:
                    i += 1
                continue
            hint = (
                "" if has_long else f" ('{name}' here documents no long options, as BSD tools do)"
            )
            issues.append(f"'{name}' does not document the option {flag}{hint}")
        elif name in _SINGLE_DASH_LONG:
            if not (name.startswith("java") and word.startswith(_JAVA_PREFIXES)):
                issues.append(f"'{name}' does not document the option {word}")
        elif name in _AWKS:
            if f"-{word[1]}" not in known and f"-{word[1]}" != "-W":
                issues.append(f"'{name}' does not document the option -{word[1]}")
        else:
            unknown, skip_next = _cluster(word, known, values)
            i += skip_next
            issues.extend(
                f"'{name}' does not document the option -{letter}"
                + (f" (in {word})" if len(word) > 2 else "")
                for letter in unknown
            )
    return issues


def _long_known(flag: str, known: frozenset[str]) -> bool:
    if flag in known:
        return True
    # getopt_long accepts any unambiguous prefix (--all as --al); --no-X negates a --X option.
    if any(option.startswith(flag) for option in known if option.startswith("--")):
        return True
    return flag.startswith("--no-") and f"--{flag[5:]}" in known


def _cluster(word: str, known: frozenset[str], values: frozenset[str]) -> tuple[list[str], int]:
    """Unknown letters in a short-option cluster like ``-lah``, and whether the next word is
    the last option's value. An attached value (``-d:``, ``-n5``, ``-I{}``) ends the cluster."""
    unknown: list[str] = []
    letters = word[1:]
    for pos, letter in enumerate(letters):
        if not (letter.isascii() and (letter.isalpha() or (letter.isdigit() and pos == 0))):
            break
        option = f"-{letter}"
        if option not in known:
            unknown.append(letter)
        if option in values:
            return unknown, 1 if pos == len(letters) - 1 else 0
    return unknown, 0


__all__ = ["programs", "static_check", "used_options"]
