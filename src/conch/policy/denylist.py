"""Catastrophic commands: rejected in every mode, unsafe mode included."""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Iterable

from conch.policy import carried, reach
from conch.policy.carried import MKFS
from conch.policy.classify import Risk, classify, names
from conch.policy.model import Analysis, Arg, Invocation
from conch.policy.targets import (
    SYSTEM_DIRS,
    catastrophic_path,
    critical_file,
    is_block_device,
)
from conch.policy.wrappers import SHELLS, WRAPPERS, is_interpreter, reads_code_from_stdin

# Options that name the file a program writes its output to (`curl -o`, `sort -o`, `dd of=`).
_OUTPUT_OPTIONS = frozenset(
    {"-o", "-O", "--output", "--output-document", "--outfile", "-out", "--out", "--output-file"}
)
_FETCHERS = frozenset(
    {"curl", "wget", "fetch", "aria2c", "http", "https", "httpie", "xh", "nc", "ncat", "netcat"}
    | {"socat", "ftp", "tftp", "lynx", "links", "w3m", "ssh", "scp", "telnet", "lwp-request"}
)
_DECODERS = frozenset(
    {"xxd", "uudecode", "openssl", "gunzip", "zcat", "bzcat", "xzcat", "unxz", "zstdcat", "rev"}
    | {"gpg", "tr", "base32", "basenc", "base64"}
)
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
TEXT_SPLIT = re.compile(r"[\s;|&()<>{}`$'\"]+")
_ALL_WRITERS = frozenset({"tee", "truncate", "shred", "mv", "sponge"})
# Compressors that replace the file they compress, unless told to keep it or to only read.
_COMPRESSORS = frozenset({"gzip", "pigz", "xz", "lzma", "bzip2", "lzip", "compress", "lzop"})
_KEEPS = frozenset({"-c", "-k", "--keep", "--stdout", "--to-stdout", "-d", "-t", "-l", "--test"})
_FD_EXEC = frozenset({"-x", "-X", "--exec", "--exec-batch"})
# Programs that destroy the contents of the files they are given.
_FILE_DESTROYERS = frozenset({"shred", "truncate", "srm", "wipe"})
# Deleters taking -r: rm and the secure deleters.
_RECURSIVE_DELETERS = frozenset({"rm", "srm", "wipe"})


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
    directory named by ``-t DIR`` (``reach.target_directory``)."""
    _options, operands = _options_and_operands(inv)
    into = reach.target_directory(inv)
    if into is not None:
        return [a for a in operands if a is not into]
    return operands[:-1]


def recursive(options: list[str]) -> bool:
    """``-r``/``-R`` in a cluster, ``--recursive`` or a GNU abbreviation of it (``--rec``)."""
    return any(
        o == "--no-preserve-root"
        or (o.startswith("--") and len(o) > 2 and "--recursive".startswith(o.split("=")[0]))
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

        def judge(text: str) -> str | None:
            found = catastrophes(_analyse_text(text), depth + 1)
            return found[0] if found else None

        why = carried.interpreter_strings(inv, judge) or carried.handed_over(inv, judge)
        why = why or carried.carried(inv, judge)
    return why


_MAX_DEPTH = 4


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
    if name in _RECURSIVE_DELETERS and (recursive(options) or hidden_flags):
        targets = operands + (_fed_words(inv, analysis) if inv.stdin_args else [])
        hit = next((a for a in targets if catastrophic_path(a)), None)
        if hit is not None:
            return f"recursive delete of {hit.raw!r}"
    if name in _FILE_DESTROYERS:
        # `shred -u ~/*`, `find ~ -type f | xargs truncate -s0`: every file of a guarded tree.
        fed = _fed_words(inv, analysis) if inv.stdin_args else []
        hit = next((a for a in [*_globbed(operands), *fed] if catastrophic_path(a)), None)
        if hit is not None:
            return f"{name} destroying every file in {hit.raw!r}"
    if name == "find":
        starts = [a for a in reach.find_starts(inv) if catastrophic_path(a)]
        texts = inv.texts()
        destroys = "-delete" in texts or any(
            t in ("-exec", "-execdir", "-ok", "-okdir") and _destroys(texts[i + 1 :])
            for i, t in enumerate(texts)
        )
        if starts and destroys:
            return f"find deleting or rewriting everything under {starts[0].raw!r}"
    if name in _COMPRESSORS and not set(options) & _KEEPS:
        # `gzip /etc/passwd` replaces the file by passwd.gz; `-r` does it to a whole tree.
        hit = next((a for a in operands if critical_file(a.path_text)), None)
        if hit is None and recursive(options):
            hit = next((a for a in operands if catastrophic_path(a)), None)
        if hit is not None:
            return f"{name} replacing {hit.raw!r} by its compressed copy"
    if name == "find" and _hidden_action(inv):
        starts = [a for a in reach.find_starts(inv) if catastrophic_path(a)]
        if starts:
            return f"find over {starts[0].raw!r} with an action only known at run time"
    if name in ("fd", "fdfind"):
        # `fd . / -x rm -rf {}`: fd's search paths are its operands after the pattern.
        texts = inv.texts()
        runs = next((i for i, t in enumerate(texts) if t in _FD_EXEC), None)
        if runs is not None and _destroys(texts[runs + 1 :]):
            words = [a for a in inv.args[:runs] if not (a.text or "-").startswith("-")]
            hit = next((a for a in words[1:] if catastrophic_path(a)), None)
            if hit is not None:
                return f"{name} deleting or rewriting everything under {hit.raw!r}"
    if MKFS.fullmatch(name):
        return f"{name} erases a filesystem"
    if name in _PARTITIONERS and any(is_block_device(a.text) for a in operands):
        return f"{name} rewrites a disk's partitions"
    if name == "shred" and any((a.text or "").startswith("/dev/") for a in operands):
        return "shred of a device"
    if name == "dd":
        for arg in operands:
            if arg.text and arg.text.startswith("of=") and is_block_device(arg.text[3:]):
                return f"dd writing to the disk {arg.text[3:]!r}"
            if arg.text and arg.text.startswith("of=") and critical_file(arg.text[3:]):
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
        hit = next((a for a in operands if critical_file(a.path_text)), None)
        if hit is not None:
            return f"{name} of {hit.raw!r}"
    if name.lower() in _REMOVE_ITEM and any(o.lower().startswith("-r") for o in options):
        hit = next((a for a in operands if catastrophic_path(a)), None)
        if hit is not None:
            return f"recursive {name} of {hit.raw!r}"
    if name in ("chmod", "chown", "chgrp", "chattr", "setfacl") and recursive(options):
        hit = next((a for a in operands if catastrophic_path(a, home=False)), None)
        if hit is not None:
            return f"recursive {name} of {hit.raw!r}"
    if name == "mv":
        hit = next((a for a in _mv_sources(inv) if catastrophic_path(a)), None)
        if hit is not None:
            return f"moving {hit.raw!r}"
    into = reach.target_directory(inv)
    written = operands if name in _ALL_WRITERS else operands[-1:] if name in _DEST_WRITERS else []
    if into is not None:  # `cp -t DIR FILE...`: every operand is a source
        written = _into_directory([*(a for a in operands if a is not into), into])
    elif name in _DEST_WRITERS | {"mv"} and len(operands) > 1:
        written += _into_directory(operands)
    written += _outputs(inv) + reach.written_files(inv)
    for arg in written:
        target = arg.path_text or arg.text  # read from the directory `cd` went to, if known
        if is_block_device(target) or critical_file(target):
            return f"{name} overwriting {arg.raw!r}"
    if _runs_code(inv) and any(_fetches(a.inner) for a in inv.args):
        return f"{name} running code that is downloaded or decoded at run time"
    return None


def _hidden_action(inv: Invocation) -> bool:
    """A word of find's expression only known at run time where an action may stand
    (``find / $x``, ``find / $(echo -delete)``), not as a test's value (``-name "$x"``)."""
    texts = inv.texts()
    for i in range(reach.find_start(inv), len(texts)):
        if texts[i] is not None:
            continue
        before = texts[i - 1] if i > 0 else None
        if before is None or not before.startswith("-") or before in _FIND_ACTIONS_ALONE:
            return True
    return False


# find words that take no value: a word after them stands alone.
_FIND_ACTIONS_ALONE = frozenset(
    {"-print", "-print0", "-ls", "-delete", "-prune", "-quit", "-depth", "-xdev", "-mount"}
    | {"-empty", "-true", "-false", "-readable", "-writable", "-executable", "-nouser"}
    | {"-nogroup", "-daystart", "-follow", "-noleaf", "-ignore_readdir_race", "-o", "-a"}
    | {"-or", "-and", "-not", "!", "(", ")", ","}
)


def _globbed(operands: list[Arg]) -> list[Arg]:
    """The directories whose every file a glob operand names (``~/*`` names all of ``~``)."""
    found = []
    for arg in operands:
        path = arg.path_text
        if (
            arg.glob
            and path
            and posixpath.basename(path)
            and set(posixpath.basename(path)) <= set("*?.[]!")
        ):
            directory = posixpath.dirname(path) or "."
            found.append(Arg(directory, directory, path_text=directory))
    return found


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
    tokens = {posixpath.basename(t) for w in block[1:] for t in TEXT_SPLIT.split(w) if t}
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
        if redirect.writes and (is_block_device(target) or critical_file(target)):
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
    if base is None:
        # From a directory that is not known, only climbing stays known: `cd ..; cd ..`.
        return path if set(posixpath.normpath(path).split("/")) == {".."} else None
    return posixpath.normpath(posixpath.join(base, path))


def _rebased(inv: Invocation, base: str) -> Invocation:
    """``inv`` with its relative path arguments read from ``base`` (after ``cd /``)."""
    args = []
    given = list(inv.args)
    if inv.name == "find" and not reach.find_starts(inv):  # no start point: `.`
        given.insert(reach.find_start(inv), Arg(".", ".", path_text="."))
    for arg in given:
        path = arg.path_text
        if path and not path.startswith(("/", "~", "-")) and "=" not in path:
            joined = posixpath.join(base, path)
            arg = dataclasses.replace(arg, path_text=joined)
        args.append(arg)
    return dataclasses.replace(inv, args=tuple(args))
