"""What a program's options say it reaches, for the denylist: the files it writes, what it
deletes besides its operands, the directory it runs in, and the volumes it destroys.

Read with the option tables (conch.policy.options), so abbreviations (``--outp=``), clustered
options (``zip -rm``) and options before operands count the way the program reads them.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re

from conch.policy import options
from conch.policy.model import Arg, Invocation
from conch.policy.parse import GLOB_CHARS, expand_braces
from conch.policy.risk import Risk

# Programs that destroy a volume, a pool or an encrypted disk's keys, by subcommand (None: any).
_VOLUME_DESTROYERS: dict[str, frozenset[str] | None] = {
    "lvremove": None,
    "lvreduce": None,
    "vgremove": None,
    "pvremove": None,
    "blkdiscard": None,
    "cryptsetup": frozenset({"luksFormat", "erase", "luksErase", "luksKillSlot"}),
    "zpool": frozenset({"destroy", "labelclear"}),
    "zfs": frozenset({"destroy"}),
    "dmsetup": frozenset({"remove_all", "wipe_table"}),
    "mdadm": frozenset({"--zero-superblock"}),
    "nvme": frozenset({"format", "sanitize"}),
    "hdparm": frozenset({"--security-erase", "--security-erase-enhanced", "--trim-sector-ranges"}),
    "sg_format": frozenset({"--format", "-F"}),
    "sg_sanitize": frozenset({"--block", "--crypto", "--overwrite", "-B", "-C", "-O"}),
}
# Options naming the directory a wrapper runs its command in.
_CHDIR = {"env": ("-C", "--chdir"), "sudo": ("-D", "--chdir")}
# In-place editors: what they edit is their operands.
_IN_PLACE = {"sed": ("-i", "--in-place"), "perl": ("-i",), "ruby": ("-i",)}


def _arg(text: str | None) -> Arg:
    return Arg(text or "", text, path_text=text)


def _operand_args(inv: Invocation, operands: list[str | None]) -> list[Arg]:
    """The words of ``inv`` that ``operands`` were read from, matched from the end (operands
    close the command line), so a word only known at run time (``$HOME/``) keeps its raw form
    for the target checks; a text that cannot be matched is rebuilt from itself."""
    found: list[Arg] = []
    args = list(inv.args)
    for text in reversed(operands):
        while args and args[-1].text != text:
            args.pop()
        found.append(args.pop() if args else _arg(text))
    return found[::-1]


def _reading(inv: Invocation) -> options.Reading | None:
    table = options.table(inv.name) if inv.name else None
    return options.read(table, inv.texts()) if table is not None else None


def written_files(inv: Invocation) -> list[Arg]:
    """Files the program writes by its options (``sort -o F``, ``iconv --output=F``,
    ``find -fprint F``) or by its operands past the ones it reads (``uniq IN OUT``,
    ``xxd IN OUT``); an in-place editor's operands (``sed -i``)."""
    reading = _reading(inv)
    if reading is None:
        return []
    found = [
        _arg(value)
        for option, value in reading.options
        if option.risk is Risk.WRITES
        and option.takes in (options.Takes.VALUE, options.Takes.ATTACHED)
        and not (inv.name in _IN_PLACE and option.name in _IN_PLACE[inv.name])
    ]
    limit = reading.table.operands
    operands = _operand_args(inv, reading.operands)
    if limit is not None and reading.table.beyond is Risk.WRITES:
        found += operands[limit:]
    editing = _IN_PLACE.get(inv.name or "", ())
    if editing and reading.names() & set(editing):
        found += operands
    if set(reading.values("-i", "--include")) & {"inplace", "inplace.awk"}:
        found += operands  # gawk -i inplace
    return found


def deleted_trees(inv: Invocation) -> list[Arg]:
    """What a sync deletes: the destination of ``rsync --delete`` (and its kin) and of
    ``rclone sync``, where what the source lacks is deleted, so an empty source empties it;
    the sources of ``rsync --remove-source-files``; what ``rclone purge``/``delete`` and
    ``btrfs subvolume delete`` name."""
    texts = [t for t in inv.texts() if t is not None]
    if inv.name == "btrfs":
        words = [t for t in texts if not t.startswith("-")]
        deletes = words[:2] in (["subvolume", "delete"], ["subvolume", "del"])
        return [_arg(w) for w in words[2:]] if deletes else []
    if inv.name == "rclone":
        words = [t for t in texts if not t.startswith("-")]
        if words[:1] == ["sync"] and len(words) >= 3:
            return [_arg(words[-1])]
        if words[:1] and words[0] in ("purge", "delete", "rmdirs", "deletefile"):
            return [_arg(w) for w in words[1:]]
        return []
    reading = _reading(inv) if inv.name == "rsync" else None
    if reading is None or not reading.operands:
        return []
    names = reading.names()
    found = []
    operands = _operand_args(inv, reading.operands)
    if "--remove-source-files" in names:
        found += operands[:-1]
    if any(
        o.risk is Risk.DESTRUCTIVE and o.name != "--remove-source-files" for o, _ in reading.options
    ):
        found.append(operands[-1])
    return found


def archived_and_removed(inv: Invocation) -> list[Arg]:
    """What ``tar --remove-files``, ``zip -m`` and ``7z -sdel`` delete once archived: their
    operands (read from tar's ``-C DIR``)."""
    if inv.name == "7z":
        texts = [t for t in inv.texts() if t is not None]
        words = [t for t in texts if not t.startswith("-")]
        return [_arg(w) for w in words[2:]] if "-sdel" in texts else []
    reading = _reading(inv) if inv.name in ("tar", "zip") else None
    if reading is None:
        return []
    removes = {"--remove-files"} if inv.name == "tar" else {"-m", "--move"}
    if not reading.names() & removes:
        return []
    operands = reading.operands[1:] if inv.name == "zip" else reading.operands
    directory = next(iter(reading.values("-C", "--directory")[-1:]), None)
    if directory is None:
        return _operand_args(inv, operands)
    return [_arg(posixpath.join(directory, text) if text else text) for text in operands]


def volume_destroyed(inv: Invocation) -> str | None:
    """Why ``inv`` destroys a logical volume, a pool, an array, an encrypted disk's keys or
    a whole disk's data, or None."""
    if inv.name == "badblocks":
        writes = any(re.fullmatch(r"-[a-zA-Z]*w[a-zA-Z]*", t or "") for t in inv.texts())
        return "badblocks -w overwrites the whole disk" if writes else None
    if inv.name not in _VOLUME_DESTROYERS:
        return None
    words = _VOLUME_DESTROYERS[inv.name]
    texts = [t for t in inv.texts() if t is not None]
    if words is None:
        return f"{inv.name} destroys a volume or a disk's data" if texts else None
    hit = next((t for t in texts if t in words), None)
    return f"{inv.name} {hit} destroys a volume or a disk's data" if hit else None


def chdir(inv: Invocation) -> str | None:
    """The directory ``env -C DIR`` / ``sudo -D DIR`` runs its command in."""
    names = _CHDIR.get(inv.name or "")
    reading = _reading(inv) if names else None
    if reading is None or names is None:
        return None
    values = reading.values(*names)
    return values[-1] if values else None


def find_start(inv: Invocation) -> int:
    """Index of find's first expression word: after ``-H -L -P -D opts -Olevel --`` and the
    start points."""
    texts = inv.texts()
    i = 0
    while i < len(texts):
        text = texts[i]
        if text in ("-H", "-L", "-P"):
            i += 1
        elif text == "-D":
            i += 2
        elif text is not None and re.fullmatch(r"-O[0-9]*", text):
            i += 1
        elif text == "--":
            i += 1
            break
        else:
            break
    for j in range(i, len(texts)):
        text = texts[j] if texts[j] is not None else inv.args[j].path_text
        if text is None or text.startswith(("-", "(", "!", ")")):
            return j
    return len(texts)


def target_directory(inv: Invocation) -> Arg | None:
    """The directory ``cp``/``mv``/``ln``/``install -t DIR`` put every operand in (the word
    of ``inv`` naming it; ``--target-directory`` and its abbreviations included)."""
    if inv.name not in ("cp", "mv", "ln", "install"):
        return None
    found = None
    args = list(inv.args)
    for i, arg in enumerate(args):
        text = arg.text or ""
        if text == "--":
            break
        key, eq, value = text.partition("=")
        if len(key) > 3 and "--target-directory".startswith(key):
            found = (
                Arg(arg.raw, value, path_text=value)
                if eq
                else next(iter(args[i + 1 : i + 2]), None)
            )
        elif text.startswith("-") and not text.startswith("--") and "t" in text[1:]:
            # `-t DIR`, `-tDIR`, `-vt DIR`: t takes the rest of the word, or the next word.
            rest = text[text.index("t", 1) + 1 :]
            found = (
                Arg(arg.raw, rest, path_text=rest)
                if rest
                else next(iter(args[i + 1 : i + 2]), None)
            )
    return found


def find_starts(inv: Invocation) -> list[Arg]:
    """The start points of ``find`` (``$HOME`` included: its words may be known only as
    paths)."""
    args = inv.args[: find_start(inv)]
    starts = []
    i = 0
    while i < len(args):
        text = args[i].text
        if text == "-D":
            i += 2
            continue
        if text not in ("-H", "-L", "-P", "--") and not re.fullmatch(r"-O[0-9]*", text or "-"):
            starts.append(args[i])
        i += 1
    return starts


def named(inv: Invocation, programs: frozenset[str]) -> list[str]:
    """The programs of ``programs`` a name built by a glob or braces may run
    (``/???/r?``, ``/bin/r[m]``, ``r{m,x}``); empty for a plain name."""
    raw = inv.raw_name
    if not raw or not (set(raw) & GLOB_CHARS or "{" in raw):
        return []
    found: list[str] = []
    for text in expand_braces(raw):
        base = posixpath.basename(text.rstrip("/")) or text
        found += [p for p in sorted(programs) if p != base and fnmatch.fnmatchcase(p, base)]
    return list(dict.fromkeys(found))
