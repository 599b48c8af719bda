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
    "vgremove": None,
    "pvremove": None,
    "blkdiscard": None,
    "cryptsetup": frozenset({"luksFormat", "erase", "luksErase"}),
    "zpool": frozenset({"destroy", "labelclear"}),
    "zfs": frozenset({"destroy"}),
    "dmsetup": frozenset({"remove_all", "wipe_table"}),
}
# Options naming the directory a wrapper runs its command in.
_CHDIR = {"env": ("-C", "--chdir"), "sudo": ("-D", "--chdir")}
# In-place editors: what they edit is their operands.
_IN_PLACE = {"sed": ("-i", "--in-place"), "perl": ("-i",), "ruby": ("-i",)}


def _arg(text: str | None) -> Arg:
    return Arg(text or "", text, path_text=text)


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
    operands = reading.operands
    if limit is not None and reading.table.beyond is Risk.WRITES:
        found += [_arg(text) for text in operands[limit:]]
    editing = _IN_PLACE.get(inv.name or "", ())
    if editing and reading.names() & set(editing):
        found += [_arg(text) for text in operands]
    return found


def synced_with_delete(inv: Invocation) -> Arg | None:
    """The destination of ``rsync --delete`` (and its kin): what the source lacks is deleted
    there, so an empty source empties it."""
    reading = _reading(inv) if inv.name == "rsync" else None
    if reading is None or not reading.operands:
        return None
    if any(option.risk is Risk.DESTRUCTIVE for option, _value in reading.options):
        return _arg(reading.operands[-1])
    return None


def archived_and_removed(inv: Invocation) -> list[Arg]:
    """What ``tar --remove-files`` and ``zip -m`` delete once archived: their operands."""
    reading = _reading(inv) if inv.name in ("tar", "zip") else None
    if reading is None:
        return []
    removes = {"--remove-files"} if inv.name == "tar" else {"-m", "--move"}
    if not reading.names() & removes:
        return []
    operands = reading.operands[1:] if inv.name == "zip" else reading.operands
    return [_arg(text) for text in operands]


def volume_destroyed(inv: Invocation) -> str | None:
    """Why ``inv`` destroys a logical volume, a pool or an encrypted disk, or None."""
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
        text = texts[j]
        if text is None or text.startswith(("-", "(", "!", ")")):
            return j
    return len(texts)


def find_starts(inv: Invocation) -> list[Arg]:
    """The start points of ``find``."""
    end = find_start(inv)
    skipped = [a for a in inv.args[:end] if a.text is not None]
    starts = []
    i = 0
    while i < len(skipped):
        text = skipped[i].text or ""
        if text == "-D":
            i += 2
            continue
        if text not in ("-H", "-L", "-P", "--") and not re.fullmatch(r"-O[0-9]*", text):
            starts.append(skipped[i])
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
