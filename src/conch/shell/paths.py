"""The files a suggested command reads, and whether they exist where it would run.

``missing_paths`` finds the operands that programs which read files are given (``cat``,
``tail``, ``grep`` after its pattern, ``cd``, a script for ``python``...) and the files
redirected into it (``< data.json``), and says which of
them do not exist, relative to the shell's directory, with the files of that name found
nearby (``tail -n 3 app.log`` when ``app.log`` is in ``logs/``: "there is logs/app.log").

Only words that look like paths are checked: a word with a ``/``, one starting with ``~`` or
``.``, or a name with a file extension (``app.log``); a count such as the ``3`` of
``tail -n 3`` never is. A file the command itself creates first (a redirection's target,
``mkdir``, ``touch``, the last operand of ``cp``) is not missing, and after a program that may
create files unseen (anything but a known reader) nothing further is checked. What this
cannot see, the dry run among the real files catches (``conch.shell.check``).
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
from dataclasses import dataclass
from pathlib import Path

from conch.policy.commands import analyse
from conch.policy.model import Arg, Invocation

__all__ = ["MissingPath", "missing_paths", "nearby"]

# Programs whose operands are files to read: (operands before the files, how many files
# there are, None for all of them).
_READERS: dict[str, tuple[int, int | None]] = {
    **dict.fromkeys(
        (
            *("cat", "tac", "head", "tail", "less", "more", "wc", "sort", "cut", "paste"),
            *("nl", "od", "xxd", "hexdump", "strings", "file", "stat", "du", "ls", "tree"),
            *("diff", "cmp", "comm", "md5sum", "sha1sum", "sha256sum", "sha512sum"),
            *("column", "fold", "fmt", "pr", "base64", "zcat", "zless", "bzcat", "xzcat"),
            *("rm", "rmdir", "realpath", "readlink", "shuf", "tr", "expand", "unexpand"),
        ),
        (0, None),
    ),
    **dict.fromkeys(
        ("grep", "egrep", "fgrep", "zgrep", "rg", "sed", "awk", "gawk", "mawk", "nawk", "jq"),
        (1, None),
    ),
    **dict.fromkeys(("chmod", "chown", "chgrp"), (1, None)),
    **dict.fromkeys(("uniq", "unzip", "source", "."), (0, 1)),
    **dict.fromkeys(
        ("bash", "sh", "zsh", "dash", "python", "python3", "node", "ruby", "perl", "php"),
        (0, 1),
    ),
}
_PATTERNS = frozenset({"grep", "egrep", "fgrep", "zgrep", "rg", "sed", "awk", "gawk", "mawk"})
_PATTERNS |= {"nawk", "jq"}
_INTERPRETERS = frozenset({"bash", "sh", "zsh", "dash", "python", "python3", "node", "ruby"})
_INTERPRETERS |= {"perl", "php"}
# Options whose next word is their value (a count, a pattern, an output), by program; any
# other option is taken for a flag.
_VALUES: dict[str, frozenset[str]] = {
    name: frozenset(options.split())
    for name, options in {
        "head": "-n -c --lines --bytes",
        "tail": "-n -c --lines --bytes -s --pid",
        "grep": "-e -f -m -A -B -C -d -D --regexp --file --include --exclude --exclude-dir",
        "egrep": "-e -f -m -A -B -C --regexp --file --include --exclude --exclude-dir",
        "fgrep": "-e -f -m -A -B -C --regexp --file --include --exclude --exclude-dir",
        "zgrep": "-e -f -m -A -B -C --regexp --file",
        "rg": "-e -f -g -t -T -m -A -B -C --regexp --file --glob --type",
        "sed": "-e -f -l --expression --file",
        "awk": "-F -v -f",
        "gawk": "-F -v -f",
        "mawk": "-F -v -f",
        "nawk": "-F -v -f",
        "jq": "-f --from-file --indent --arg --argjson --slurpfile --rawfile",
        "sort": "-k -t -o -T -S --key --field-separator --output --parallel",
        "cut": "-d -f -c -b --delimiter --fields --characters --bytes",
        "ls": "-I -w -T --ignore --hide --width",
        "du": "-d -B --max-depth --exclude",
        "tree": "-L -I -P",
        "diff": "-U -C",
        "uniq": "-f -s -w",
        "xxd": "-l -s -c",
        "od": "-A -t -N -j",
        "fold": "-w",
        "fmt": "-w",
        "nl": "-b -s -w",
        "shuf": "-n -o -i",
        "column": "-s -c",
        "pr": "-w -l",
        "chmod": "--reference",
        "chown": "--reference",
    }.items()
}
# The values that name files to read.
_FILE_VALUES = frozenset({"-f", "--file", "--from-file", "--slurpfile", "--rawfile"})
# A pattern program given its pattern by an option has no pattern operand.
_PATTERN_OPTIONS = frozenset({"-e", "--regexp", "--expression", "-f", "--file"})
# Options that stop an interpreter's operands from being a script (``python -c CODE``).
_CODE_OPTIONS = frozenset({"-c", "-e", "-m", "--eval", "-E"})
# Programs that create what they are given (so it need not exist beforehand).
_CREATORS = frozenset({"mkdir", "touch", "tee", "mktemp", "mkfifo", "truncate"})
_COPIERS = frozenset({"cp", "mv", "ln", "install", "rsync", "scp"})
# Programs that create no files: reading on after them is safe.
_NO_FILES = frozenset(
    {"echo", "printf", "true", "false", "pwd", "date", "whoami", "id", "uname", "hostname"}
    | {"which", "type", "env", "printenv", "seq", "expr", "basename", "dirname", "sleep"}
    | {"test", "[", "xargs", "cd", "pushd"}
)
_EXTENSION = re.compile(r"[\w+-][\w.+-]*\.[A-Za-z][A-Za-z0-9]{0,7}")
_GLOB = frozenset("*?[")
# Directories never searched for a file of the same name.
_SKIPPED = frozenset({"node_modules", "__pycache__", "venv", "site-packages", "target"})
_NEARBY_DEPTH = 3
_NEARBY_ENTRIES = 4000
_NEARBY_SHOWN = 3


@dataclass(frozen=True, slots=True)
class MissingPath:
    """A path a command reads that does not exist: the ``word`` as written, where it was
    looked for (``base``, relative to the shell's directory, ``""`` for the directory itself),
    and files of the same name ``near`` it (relative paths)."""

    word: str
    base: str = ""
    near: tuple[str, ...] = ()

    @property
    def problem(self) -> str:
        """One sentence for the user and the model."""
        where = ""
        if not self.word.startswith(("/", "~")):
            where = f" in {self.base}" if self.base else " in the current directory"
        text = f"'{self.word}' does not exist{where}"
        if _GLOB & set(self.word):
            text = f"'{self.word}' matches nothing{where}"
        if self.near:
            text += f" (there is {', '.join(self.near)})"
        return text


def missing_paths(command: str, cwd: str | Path, home: str | None = None) -> list[MissingPath]:
    """The files and directories ``command`` reads that do not exist when it runs in ``cwd``
    (``home`` for ``~``), in order, each once."""
    try:
        analysis = analyse(command)
    except RecursionError:
        return []
    root = Path(cwd)
    base = root
    created = {_resolve(r.target.path_text, base, home) for r in analysis.redirects if r.writes}
    for inv in analysis.invocations:
        created.update(_resolve(text, base, home) for text in _created(inv))
    found: list[MissingPath] = []
    moves = any(inv.name in ("cd", "pushd") for inv in analysis.invocations)
    for redirect in analysis.redirects:  # ``< file``: read from the shell's directory
        text = redirect.target.path_text
        reads = redirect.operator.lstrip("0123456789") == "<"
        if reads and text and not moves and not redirect.target.brace:
            path = _resolve(text, root, home)
            if path is not None and not _exists(path, text) and not _made(path, created):
                found.append(MissingPath(text, "", _near(root, root, text)))
    for inv in analysis.invocations:
        name = inv.name
        if name is None:
            break
        for text in _reads(inv):
            path = _resolve(text, base, home)
            if path is None or _exists(path, text) or _made(path, created):
                continue
            missing = MissingPath(text, _relative(base, root), _near(root, base, text))
            if missing not in found:
                found.append(missing)
        if name in ("cd", "pushd"):
            target = _cd_target(inv, base, home)
            if target is None:
                break
            base = target
        elif name not in _READERS and name not in _NO_FILES:
            break  # it may create files the rest reads
    return found


def nearby(root: Path, name: str) -> list[str]:
    """Files or directories named ``name`` (a glob pattern when it has one) under ``root``,
    nearest first, as relative paths; hidden and dependency directories are skipped and the
    search is bounded."""
    matches: list[tuple[int, str]] = []
    seen = 0
    for top, dirs, files in os.walk(root):
        depth = len(Path(top).relative_to(root).parts)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED)
        if depth >= _NEARBY_DEPTH:
            dirs[:] = []
        for entry in sorted([*dirs, *files]):
            seen += 1
            if fnmatch.fnmatch(entry, name) if _GLOB & set(name) else entry == name:
                relative = os.path.relpath(os.path.join(top, entry), root)
                matches.append((depth, relative))
        if seen > _NEARBY_ENTRIES:
            break
    return [path for _, path in sorted(matches)]


def _near(root: Path, base: Path, word: str) -> tuple[str, ...]:
    if word.startswith(("/", "~")):
        return ()
    name = os.path.basename(word.rstrip("/"))
    if not name:
        return ()
    try:
        found = nearby(root, name)
    except OSError:
        return ()
    here = os.path.relpath(base / word, root)
    return tuple(path for path in found if path != here)[:_NEARBY_SHOWN]


def _reads(inv: Invocation) -> list[str]:
    """The words of ``inv`` that name files it reads, when they look like paths."""
    name = inv.name or ""
    words = [arg.path_text if _literal(arg) else None for arg in inv.args]
    texts = [arg.text for arg in inv.args]
    if name == "find":  # its starting points are paths, whatever they look like
        return [w for w in _leading(words, texts) if w]
    if name in ("cd", "pushd"):
        operands = _operands(name, words, texts)[:1]
        return [w for w in operands if w and w != "-"]
    if name in _COPIERS:
        if name not in ("cp", "mv") or any(t in ("-t", "--target-directory") for t in texts):
            return []
        operands = _operands(name, words, texts)
        return [w for w in operands[:-1] if w is not None and _path_like(w)]
    if name not in _READERS:
        return []
    if name == "rm" and any(t and _is_flag(t, "f", "--force") for t in texts):
        return []
    if name in _INTERPRETERS and any(t in _CODE_OPTIONS for t in texts):
        return []
    skip, count = _READERS[name]
    if name in _PATTERNS and any(t in _PATTERN_OPTIONS for t in texts):
        skip = 0
    operands = _operands(name, words, texts)[skip:]
    if count is not None:
        operands = operands[:count]
    values = (
        [words[i + 1] for i, text in enumerate(texts[:-1]) if text in _FILE_VALUES]
        if name in _VALUES
        else []
    )
    return [w for w in [*values, *operands] if w is not None and _path_like(w)]


def _operands(name: str, words: list[str | None], texts: list[str | None]) -> list[str | None]:
    """The operands (not options, nor the values of the options that take one)."""
    takes_value = _VALUES.get(name, frozenset())
    out: list[str | None] = []
    options = True
    skip_next = False
    for word, text in zip(words, texts, strict=True):
        if skip_next:
            skip_next = False
            continue
        if options and text == "--":
            options = False
            continue
        if options and text is not None and text.startswith("-") and text != "-":
            skip_next = text in takes_value
            continue
        out.append(word)
    return out


def _leading(words: list[str | None], texts: list[str | None]) -> list[str | None]:
    """``find``'s starting points: the words before its first expression."""
    out: list[str | None] = []
    for word, text in zip(words, texts, strict=True):
        if text is None or text.startswith(("-", "(", "!", ")")):
            break
        out.append(word)
    return out


def _created(inv: Invocation) -> list[str]:
    """What ``inv`` creates, so it need not exist before it runs."""
    name = inv.name or ""
    words = [arg.path_text for arg in inv.args if _literal(arg)]
    texts = [arg.text for arg in inv.args]
    made: list[str] = []
    for i, text in enumerate(texts[:-1]):
        if text in ("-o", "--output") and inv.args[i + 1].path_text:
            made.append(inv.args[i + 1].path_text or "")
    if name in _CREATORS:
        made += [w for w in words if w and not w.startswith("-")]
    elif name in _COPIERS:
        operands = [w for w in _operands(name, list(words), list(words)) if w]
        made += operands[-1:]
    return made


def _cd_target(inv: Invocation, base: Path, home: str | None) -> Path | None:
    """Where ``cd`` goes when it is known and exists; None otherwise."""
    operands = _operands(inv.name or "", [a.path_text for a in inv.args], inv.texts())
    if not operands:
        return Path(home) if home else None
    word = operands[0]
    if word is None or word == "-":
        return None
    path = _resolve(word, base, home)
    return path if path is not None and path.is_dir() else None


def _literal(arg: Arg) -> bool:
    return arg.path_text is not None and not arg.brace


def _path_like(word: str) -> bool:
    if not word or "://" in word or "=" in word or word.startswith("-"):
        return False
    if "/" in word or word.startswith(("~", ".")):
        return True
    return _EXTENSION.fullmatch(re.sub(r"[*?]", "x", word)) is not None


def _is_flag(text: str, letter: str, long: str) -> bool:
    return text == long or (text.startswith("-") and not text.startswith("--") and letter in text)


def _resolve(text: str | None, base: Path, home: str | None) -> Path | None:
    if not text:
        return None
    if text == "~" or text.startswith("~/"):
        if not home:
            return None
        text = home + text[1:]
    elif text.startswith("~"):
        text = os.path.expanduser(text)
    return Path(os.path.normpath(base / text))


def _exists(path: Path, word: str) -> bool:
    if _GLOB & set(word):
        return bool(glob.glob(str(path)))
    return os.path.lexists(path)


def _made(path: Path, created: set[Path | None]) -> bool:
    return any(made is not None and path.is_relative_to(made) for made in created)


def _relative(base: Path, root: Path) -> str:
    if base == root:
        return ""
    try:
        return os.path.relpath(base, root) + "/"
    except ValueError:
        return str(base)
