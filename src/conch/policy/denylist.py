"""Catastrophic commands: rejected in every mode, unsafe mode included."""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Iterable

from conch.policy import reach
from conch.policy.classify import Risk, classify, names
from conch.policy.code_deletes import deletes_guarded_tree
from conch.policy.model import Analysis, Arg, Invocation
from conch.policy.targets import (
    CRITICAL_FILES,
    SYSTEM_DIRS,
    catastrophic_path,
    is_block_device,
    through_proc,
)
from conch.policy.wrappers import SHELLS, WRAPPERS, is_interpreter, reads_code_from_stdin

# Options that name the file a program writes its output to (`curl -o`, `sort -o`, `dd of=`).
_OUTPUT_OPTIONS = frozenset({"-o", "-O", "--output", "--output-document", "--outfile"})
_FETCHERS = frozenset(
    {"curl", "wget", "fetch", "aria2c", "http", "https", "httpie", "xh", "nc", "ncat", "netcat"}
    | {"socat", "ftp", "tftp", "lynx", "links", "w3m", "ssh", "scp", "telnet", "lwp-request"}
)
_DECODERS = frozenset(
    {"xxd", "uudecode", "openssl", "gunzip", "zcat", "bzcat", "xzcat", "unxz", "zstdcat", "rev"}
    | {"gpg", "tr", "base32", "basenc", "base64"}
)
_MKFS = re.compile(r"mkfs(\..*)?|mke2fs|mkswap|wipefs|mkdosfs|mkntfs|newfs(_.*)?")
_PARTITIONERS = frozenset({"fdisk", "sfdisk", "cfdisk", "parted", "sgdisk", "gdisk", "blkdiscard"})
_FIND_DESTROYERS = frozenset({"rm", "shred", "unlink", "rmdir", "truncate", "dd", "chmod"}) | {
    "chown",
    "chgrp",
    "mv",
    "wipefs",
}
_DEST_WRITERS = frozenset({"cp", "install", "ln", "rsync", "ddrescue"})
# Programs that delete a file or change who may read it: never the accounts, sudo or boot files.
_CRITICAL_CHANGERS = frozenset(
    {"rm", "unlink", "shred", "srm", "wipe", "truncate", "chmod", "chown", "chgrp", "chattr"}
)
# PowerShell's deleters, as they come out of `pwsh -c '...'` (names compared lowercased).
_REMOVE_ITEM = frozenset({"remove-item", "ri", "del", "erase", "rd"})
_ALL_WRITERS = frozenset({"tee", "truncate", "shred", "mv"})


def _options_and_operands(inv: Invocation) -> tuple[list[str], list[Arg]]:
    options: list[str] = []
    operands: list[Arg] = []
    ended = False
    for arg in inv.args:
        if not ended and arg.text == "--":
            ended = True
        elif not ended and arg.text is not None and arg.text.startswith("-") and arg.text != "-":
            options.append(arg.text)
        else:
            operands.append(arg)
    return options, operands


def _mv_sources(inv: Invocation) -> list[Arg]:
    """What ``mv`` moves: its operands but the destination, which is the last operand or the
    directory named by ``-t DIR`` / ``--target-directory DIR`` (``-tDIR``, ``--target-directory=DIR``
    name it in the same word)."""
    options, operands = _options_and_operands(inv)
    args = list(inv.args)
    end = next((i for i, a in enumerate(args) if a.text == "--"), len(args))
    for i, arg in enumerate(args[: end - 1]):
        text = arg.text or ""
        if text == "--target-directory" or (
            text.startswith("-") and not text.startswith("--") and text.endswith("t")
        ):
            return [a for a in operands if a is not args[i + 1]]
    if any(
        o.startswith("--target-directory=") or (not o.startswith("--") and "t" in o)
        for o in options
    ):
        return operands
    return operands[:-1]


def _recursive(options: list[str]) -> bool:
    return any(
        o in ("--recursive", "--no-preserve-root")
        or (not o.startswith("--") and ("r" in o or "R" in o))
        for o in options
    )


def _fed_words(inv: Invocation, analysis: Analysis) -> list[Arg]:
    """Words that may reach ``inv`` through stdin (what ``xargs`` turns into arguments)."""
    words: list[Arg] = []
    for feed in analysis.feeds:
        if any(c is inv for c in feed.consumers):
            for arg in (a for p in feed.producers for a in p.args):
                words.append(arg)
                # `printf '/\n'`: the escapes a producer prints become separators.
                pieces = re.split(r"\s+|\\[nt0]", arg.path_text or "")
                words.extend(Arg(w, w, path_text=w) for w in pieces if w and w != arg.path_text)
            words.extend(Arg(w, w, path_text=w) for w in (feed.text or "").split())
    return words


def _is_fetcher(inv: Invocation) -> bool:
    if inv.name in _FETCHERS:
        return True
    texts = [t for t in inv.texts() if t is not None]
    if inv.name in ("base64", "base32", "basenc"):
        return any(t in ("-d", "-D", "--decode") or re.fullmatch(r"-\w*d\w*", t) for t in texts)
    if inv.name == "printf":
        return bool(texts) and "\\" in texts[0]
    if inv.name == "echo":
        return any(re.fullmatch(r"-[nE]*e[nE]*", t) for t in texts)
    return inv.name in _DECODERS


def _fetches(invocations: Iterable[Invocation]) -> bool:
    return any(_is_fetcher(inv) or any(_fetches(a.inner) for a in inv.args) for inv in invocations)


def _runs_code(inv: Invocation) -> bool:
    return inv.name in SHELLS or is_interpreter(inv.name) or inv.name in ("eval", "source", ".")


def _check(inv: Invocation, analysis: Analysis, depth: int = 0) -> str | None:
    """Why ``inv`` is catastrophic, or None."""
    name = inv.name
    options, operands = _options_and_operands(inv)
    if name is None:
        if any(catastrophic_path(a) or is_block_device(a.path_text) for a in inv.args):
            return "a command whose name is only known at run time is aimed at a system path"
        if _fetches(inv.name_inner):
            return "a command built from text that is downloaded or decoded at run time"
        return None
    why = _check_named(inv, analysis, options, operands)
    if why is None and depth < _MAX_DEPTH:
        why = _interpreter_strings(inv, depth) or _handed_over(inv, analysis, depth)
    return why


_MAX_DEPTH = 4
# Code that runs shell commands from a string: system("..."), os.system, backticks, exec.
_STRING_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|`([^`]*)`')


def _program_word(word: str) -> bool:
    """A word naming a program that changes something (what an unknown program may run)."""
    changers = names(Risk.DESTRUCTIVE) | names(Risk.PRIVILEGED) | names(Risk.WRITES)
    return word in changers or word in WRAPPERS or word in SHELLS or word in ("dd", "find")


def _interpreter_strings(inv: Invocation, depth: int) -> str | None:
    """Shell commands written as string literals in interpreter code (``python -c
    'os.system("...")'``, ``awk 'BEGIN{system("...")}'``, ``perl -e '`...`'``), and library
    calls deleting a guarded tree (``conch.policy.code_deletes``)."""
    if not is_interpreter(inv.name):
        return None
    for arg in inv.args:
        tree = deletes_guarded_tree(arg.text or "")
        if tree is not None:
            return f"{inv.name} code deleting a guarded tree: {tree}"
        for match in _STRING_LITERAL.finditer(arg.text or ""):
            literal = next(g for g in match.groups() if g is not None)
            if " " in literal and catastrophes(_analyse_text(literal), depth + 1):
                return f"{inv.name} code running the shell command {literal[:40]!r}"
    return None


def _handed_over(inv: Invocation, analysis: Analysis, depth: int) -> str | None:
    """An unknown program handed a known one with its arguments (``strace rm -rf /``,
    ``mywrapper sh -c '...'``): judged as if the known program ran."""
    if inv.name in WRAPPERS or inv.name in names(Risk.READ_ONLY):
        return None
    if classify(inv) is not Risk.UNKNOWN:
        return None
    if is_interpreter(inv.name):
        return None
    texts = inv.texts()
    for i, text in enumerate(texts):
        if text is None:
            return None
        if _program_word(posixpath.basename(text)) or _MKFS.fullmatch(posixpath.basename(text)):
            rest = [t for t in texts[i:] if t is not None]
            found = catastrophes(_analyse_text(" ".join(_quote(t) for t in rest)), depth + 1)
            return f"{inv.name} running {text!r}: {found[0]}" if found else None
    return None


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _analyse_text(text: str) -> Analysis:
    from conch.policy.commands import analyse  # the walker; imported late (it imports us not)

    try:
        return analyse(text)
    except RecursionError:
        return Analysis()


def _check_named(
    inv: Invocation, analysis: Analysis, options: list[str], operands: list[Arg]
) -> str | None:
    name = inv.name
    assert name is not None
    if name == "rm" and "--no-preserve-root" in options:
        return "rm --no-preserve-root"
    # Flags that are only known at run time (`rm $(echo -rf) /`) may well be -r.
    hidden_flags = any(a.text is None and a.path_text is None for a in inv.args)
    if name == "rm" and (_recursive(options) or hidden_flags):
        targets = operands + (_fed_words(inv, analysis) if inv.stdin_args else [])
        hit = next((a for a in targets if catastrophic_path(a)), None)
        if hit is not None:
            return f"recursive delete of {hit.raw!r}"
    if name == "find":
        starts = [a for a in reach.find_starts(inv) if catastrophic_path(a)]
        texts = inv.texts()
        destroys = "-delete" in texts or any(
            t in ("-exec", "-execdir", "-ok", "-okdir") and _destroys(texts[i + 1 :])
            for i, t in enumerate(texts)
        )
        if starts and destroys:
            return f"find deleting or rewriting everything under {starts[0].raw!r}"
    if _MKFS.fullmatch(name):
        return f"{name} erases a filesystem"
    if name in _PARTITIONERS and any(is_block_device(a.text) for a in operands):
        return f"{name} rewrites a disk's partitions"
    if name == "shred" and any((a.text or "").startswith("/dev/") for a in operands):
        return "shred of a device"
    if name == "dd":
        for arg in operands:
            if arg.text and arg.text.startswith("of=") and is_block_device(arg.text[3:]):
                return f"dd writing to the disk {arg.text[3:]!r}"
            if arg.text and arg.text.startswith("of=") and _critical(arg.text[3:]):
                return f"dd overwriting {arg.text[3:]!r}"
    why = reach.volume_destroyed(inv)
    if why is not None:
        return why
    hit = next((a for a in reach.deleted_trees(inv) if catastrophic_path(a)), None)
    if hit is not None:
        return f"{name} deleting what a sync removes from {hit.raw!r}"
    hit = next((a for a in reach.archived_and_removed(inv) if catastrophic_path(a)), None)
    if hit is not None:
        return f"{name} removing {hit.raw!r} once archived"
    if name in _CRITICAL_CHANGERS or name.lower() in _REMOVE_ITEM:
        hit = next((a for a in operands if _critical(a.path_text)), None)
        if hit is not None:
            return f"{name} of {hit.raw!r}"
    if name.lower() in _REMOVE_ITEM and any(o.lower().startswith("-r") for o in options):
        hit = next((a for a in operands if catastrophic_path(a)), None)
        if hit is not None:
            return f"recursive {name} of {hit.raw!r}"
    if name in ("chmod", "chown", "chgrp") and _recursive(options):
        hit = next((a for a in operands if catastrophic_path(a, home=False)), None)
        if hit is not None:
            return f"recursive {name} of {hit.raw!r}"
    if name == "mv":
        hit = next((a for a in _mv_sources(inv) if catastrophic_path(a)), None)
        if hit is not None:
            return f"moving {hit.raw!r}"
    written = operands if name in _ALL_WRITERS else operands[-1:] if name in _DEST_WRITERS else []
    if name in _DEST_WRITERS | {"mv"} and len(operands) > 1:
        written += _into_directory(operands)
    written += _outputs(inv) + reach.written_files(inv)
    for arg in written:
        if is_block_device(arg.text) or _critical(arg.text):
            return f"{name} overwriting {arg.raw!r}"
    if _runs_code(inv) and any(_fetches(a.inner) for a in inv.args):
        return f"{name} running code that is downloaded or decoded at run time"
    return None


def _into_directory(operands: list[Arg]) -> list[Arg]:
    """``cp passwd /etc/``: the files a copy into a directory writes (the destination is
    read as a directory when it ends with ``/`` or is a system directory)."""
    target = operands[-1].path_text
    if target is None:
        return []
    if not (target.endswith("/") or posixpath.normpath(target) in SYSTEM_DIRS):
        return []
    return [
        Arg(a.raw, joined, path_text=joined)
        for a in operands[:-1]
        if a.path_text is not None
        for joined in [posixpath.join(target, posixpath.basename(a.path_text.rstrip("/")))]
    ]


def _destroys(words: list[str | None]) -> bool:
    """Whether the command ``find -exec`` runs (up to ``;`` or ``+``) destroys: a destroyer,
    or a wrapper or shell whose words name one (``sh -c 'rm -r "$1"'``, ``sudo rm``)."""
    end = next((i for i, w in enumerate(words) if w in (";", "+")), len(words))
    block = [w for w in words[:end] if w is not None]
    if not block:
        return False
    first = posixpath.basename(block[0])
    if first in _FIND_DESTROYERS:
        return True
    if first not in WRAPPERS and first not in SHELLS:
        return False
    tokens = {posixpath.basename(t) for w in block[1:] for t in _TEXT_SPLIT.split(w) if t}
    return bool(tokens & _FIND_DESTROYERS)


def _outputs(inv: Invocation) -> list[Arg]:
    """The files named by output options (``-o FILE``, ``--output=FILE``, ``tar -cf FILE``)."""
    found: list[Arg] = []
    args = inv.args
    tar_writes = inv.name == "tar" and classify(inv) is not Risk.READ_ONLY
    for i, arg in enumerate(args):
        text = arg.text or ""
        takes = text in _OUTPUT_OPTIONS or (tar_writes and text in ("--file", "-f"))
        if not takes and tar_writes and re.fullmatch(r"-?[A-Za-z]*f", text) and i == 0:
            takes = True  # `tar -cf FILE`, `tar cf FILE`
        if takes and i + 1 < len(args):
            found.append(args[i + 1])
        elif "=" in text and text.split("=", 1)[0] in _OUTPUT_OPTIONS | {"--file"}:
            value = text.split("=", 1)[1]
            found.append(Arg(value, value))
    return found


def _critical(text: str | None) -> bool:
    """The accounts and sudo files, ``/etc/sudoers.d/*``, and everything under ``/boot``
    (kernels, initrds, the boot loader), however the path is spelled (``//etc//shadow``,
    ``/proc/self/root/etc/shadow``)."""
    if text is None or not text.startswith("/"):
        return False
    path = through_proc(text)
    return path in CRITICAL_FILES or path.startswith(_CRITICAL_TREES) or path == "/boot"


_CRITICAL_TREES = ("/etc/sudoers.d/", "/boot/")


def catastrophes(analysis: Analysis, depth: int = 0) -> list[str]:
    """One sentence per catastrophic thing the command would do."""
    found: list[str] = []
    base: str | None = None
    wrapped: str | None = None  # `env -C DIR cmd`: the directory of the next command only
    for inv in analysis.invocations:
        if inv.name in ("cd", "pushd"):
            base = _cd_target(inv, base)
        here = base
        if wrapped is not None:
            here = (
                wrapped
                if wrapped.startswith(("/", "~")) or base is None
                else (posixpath.join(base, wrapped))
            )
        wrapped = reach.chdir(inv)
        for candidate in [inv, *_glob_named(inv)]:
            checked = candidate if here is None else _rebased(candidate, here)
            why = _check(checked, analysis, depth) or (
                _check(candidate, analysis, depth) if checked is not candidate else None
            )
            if why is not None:
                found.append(why)
                break
    for redirect in analysis.redirects:
        target = redirect.target.text
        if redirect.writes and (is_block_device(target) or _critical(target)):
            found.append(f"redirect {redirect.operator!r} overwriting {target!r}")
    for function in analysis.functions:
        if function.name in function.calls and {"|", "&"} & set(function.operators):
            found.append(f"fork bomb: function {function.name!r} spawns copies of itself")
    for feed in analysis.feeds:
        if any(_runs_stdin(c) for c in feed.consumers) and _fetches(feed.producers):
            found.append("downloaded or decoded text piped into a shell or interpreter")
    return [
        f"Denylisted: {why}. This is never allowed, not even in unsafe mode."
        for why in dict.fromkeys(found)
    ]


def _glob_named(inv: Invocation) -> list[Invocation]:
    """``/???/r? -rf /``: a name built by a glob or braces, read as each dangerous program
    it may match."""
    dangerous = names(Risk.DESTRUCTIVE) | names(Risk.PRIVILEGED) | names(Risk.WRITES)
    programs = dangerous | WRAPPERS | SHELLS | {"dd", "find"}
    return [dataclasses.replace(inv, name=p) for p in reach.named(inv, frozenset(programs))]


def _runs_stdin(inv: Invocation) -> bool:
    """A shell or interpreter taking its program from stdin, directly or through a
    substitution in its code (``bash -c "$(cat)"``)."""
    return reads_code_from_stdin(inv) or (_runs_code(inv) and any(a.inner for a in inv.args))


def _cd_target(inv: Invocation, base: str | None) -> str | None:
    """Where ``cd``/``pushd`` goes, when the policy can tell (home without an argument)."""
    texts = [t for t in inv.texts() if t is None or t == "-" or not t.startswith("-")]
    if not texts:
        return "~"
    if texts[-1] == "-":
        return None
    path = inv.args[-1].path_text
    if path is None:
        return None
    if path.startswith(("/", "~")):
        return path
    return posixpath.join(base, path) if base is not None else None


def _rebased(inv: Invocation, base: str) -> Invocation:
    """``inv`` with its relative path arguments read from ``base`` (after ``cd /``)."""
    args = []
    for arg in inv.args:
        path = arg.path_text
        if path and not path.startswith(("/", "~", "-")) and "=" not in path:
            joined = posixpath.join(base, path)
            arg = dataclasses.replace(arg, path_text=joined)
        args.append(arg)
    return dataclasses.replace(inv, args=tuple(args))


_TEXT_SPLIT = re.compile(r"[\s;|&()<>{}`$'\"]+")


def textual_catastrophe(command: str) -> bool:
    """A crude scan used only when the command does not parse, so broken syntax cannot hide
    ``rm -rf /`` from the denylist."""
    words = [w for w in _TEXT_SPLIT.split(re.sub(r"[\"'\\]", "", command)) if w]
    names = {posixpath.basename(w) for w in words}
    if any(_MKFS.fullmatch(n) for n in names) or any(is_block_device(w) for w in words):
        return True
    if "rm" in names and _recursive([w for w in words if w.startswith("-")]):
        return any(catastrophic_path(w) for w in words)
    return False


_IFS = re.compile(r"\$\{IFS[^}]*\}|\$IFS\b")
_EMPTY = re.compile(r"\$\{?[@*]\}?|\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Za-z_][A-Za-z0-9_]*")
_BRACE_WORD = re.compile(r"(?<![^\s;&|(])\{([^{}\s'\"]*,[^{}\s'\"]*)\}(?![^\s;&|)])")


def readings(command: str, analysis: Analysis) -> list[str]:
    """Other ways the shell may read ``command`` that the grammar does not model, for the
    denylist only: a backslash-newline removed (``r\\<newline>m``), ``$IFS`` as a space
    (``rm${IFS}-rf${IFS}/``), a brace list as separate words (``{rm,-rf,/}``), and, when a
    program's name is only known at run time, unset variables as empty (``r${x}m``)."""
    found: list[str] = []
    if "\\\n" in command:
        found.append(command.replace("\\\n", ""))
    if _IFS.search(command):
        found.append(_IFS.sub(" ", command))
    if _BRACE_WORD.search(command):
        found.append(_BRACE_WORD.sub(lambda m: " ".join(m.group(1).split(",")), command))
    if any(inv.name is None for inv in analysis.invocations):
        found.append(_EMPTY.sub("", _IFS.sub(" ", command)))
    return [text for text in dict.fromkeys(found) if text != command]
