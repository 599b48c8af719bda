"""Does what a dry run printed fit what the request asked for?

A command can run cleanly and still answer another question: ``ls -lS | head -n 5`` for "the
five largest files" prints ls's ``total`` line and directories; ``du -ah .`` for "the disk
usage of each directory" prints every file; a frequency count whose last stage drops the
counts. ``mismatch`` reads the request for three asks that its output can be held to, and
the dry run's output (and the working directory it ran in) for their breach:

- *files* by size (*the largest files*, *the 3 smallest files*, *only files*; not
  directories, folders or entries): no line is ls's ``total N`` header, a long-listing line
  of a directory, or the name of a directory here (a plain "list the files" may mean every
  entry, so it is not held to this);
- *each directory* / *each folder* / *the directories*: no line names a regular file here;
- *count* / *frequency* / *how many times* / *occurrences*, over several lines: some line
  holds a count (a number standing alone).

A command that wrote files is judged by what it wrote in its scratch copy
(``written_mismatch``): an in-place edit that changed nothing, a file created with a name
not in the case the request asks names to be in ("lower case"), a line of a file the request
names that is not of the form the request gives in quotes (``line_form``: "NAME COUNT",
"Hello, NAME!"), a file holding more than the number asked for alone, or a printf format
written out as it stands (``format_literal``, which also judges what a command printed).

The pipeline asks the model once for a repair, with the reason, and prefers a command that
fits (``conch.command.propose``); a mismatch ranks with a warning, below a clean run. Only words and
output are read: no model call, microseconds.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

_FILES = re.compile(
    r"\b(?:largest|biggest|smallest|heaviest|tiniest|size|sizes|regular|only)\b.*\bfiles?\b"
    r"|\bfiles?\b.*\b(?:only|by size)\b"
)
_NOT_ONLY_FILES = re.compile(
    r"\b(?:director(?:y|ies)|folders?|dirs?|entries|entry|everything|files? and|and files?"
    r"|files? or|or files?|tree|subdirector(?:y|ies)|inodes?|count|how many|number of)\b"
)
_DIRECTORIES = re.compile(
    r"\b(?:each|every|per|all|the|which) (?:sub)?(?:director(?:y|ies)|folders?)\b"
    r"|\b(?:director(?:y|ies)|folders?) sizes?\b"
)
_NOT_ONLY_DIRECTORIES = re.compile(r"\bfiles?\b|\bentries\b|\beverything\b")
_COUNTS = re.compile(
    r"\b(?:count|counts|counted|frequency|frequencies|how many times|occurrences|tally)\b"
)

# "in this directory", "under the folder": where to look, not what to list.
_PLACE = re.compile(
    r"\b(?:in|under|inside|within|from|at) (?:this |the |that |my |your )?(?:current |working )?"
    r"(?:director(?:y|ies)|folders?|dir)\b"
)

_LS_TOTAL = re.compile(r"^total \d+(?:[.,]\d+)?[KMGT]?$")
_LS_DIRECTORY = re.compile(r"^d[rwxsStT-]{9}[.+@]?\s")
_NUMBER = re.compile(r"(?<![\w.:/-])\d+(?:[.,]\d+)?[KMGTkmgt]?(?![\w.:/-])")


def mismatch(request: str, output: bytes, cwd: Path | None) -> str | None:
    """Why ``output`` (what a dry run printed in ``cwd``) does not fit ``request``, in words
    for the model; None when nothing is wrong that conch can see."""
    asked = " ".join(request.lower().split())
    lines = [line.strip() for line in output.decode("utf-8", "replace").splitlines()]
    lines = [line for line in lines if line]
    if not lines:
        return None
    if _FILES.search(asked) and not _NOT_ONLY_FILES.search(_PLACE.sub(" ", asked)):
        total = any(_LS_TOTAL.match(line) for line in lines)
        directories = any(_LS_DIRECTORY.match(line) for line in lines) or _names(lines, cwd, "dir")
        if total or directories:
            # Both kinds named, whichever showed: a repair that drops one leaves the other.
            return (
                "printed lines that are not files (ls -l's 'total' line, directories); "
                "the request asks for files only"
            )
    directories_only = _DIRECTORIES.search(asked) and not _NOT_ONLY_DIRECTORIES.search(asked)
    if directories_only and _names(lines, cwd, "file"):
        return "printed lines that are files; the request asks for directories only, one each"
    if _COUNTS.search(asked) and len(lines) > 1 and not any(_NUMBER.search(x) for x in lines):
        return "printed no counts; the request asks for them"
    return None


# Requests that a command leaving every file as it was can still fulfil.
_NO_CHANGE_NEEDED = re.compile(
    r"\b(?:touch|timestamps?|modification times?|mtime|if (?:it |they )?(?:is|are) not|unless"
    r"|make sure|ensure)\b"
)
# Commands that edit a file in place: sed -i, perl -i / -pi, awk -i inplace.
_IN_PLACE = re.compile(r"\b(?:sed|perl)\s+(?:-\S+\s+)*-\w*i|\bawk\s+-i\s*inplace\b")
# "only the number", "just the count", "the total and nothing else".
_NUMBER_ALONE = re.compile(
    r"\b(?:only|just)\b(?: the)? (?:number|count|total|sum|average|mean|result)\b"
    r"|\b(?:number|count|total|sum|average|mean)\b[^.;]{0,60}\b(?:nothing else|and nothing more"
    r"|alone|by itself)\b"
)
_LONE_NUMBER = re.compile(r"^-?\d+(?:[.,]\d+)?$")
# A printf conversion awk's or the shell's print writes out as it stands.
_FORMAT = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?[diouxXeEfgGs]")


def in_place_edit(command: str) -> bool:
    """Whether ``command`` edits a file in place (``sed -i``, ``perl -pi``, ``awk -i
    inplace``)."""
    return _IN_PLACE.search(command) is not None


def written_mismatch(
    request: str, command: str, changes: tuple[str, ...], written: tuple[tuple[str, bytes], ...]
) -> str | None:
    """Why a command that ran in a scratch copy and exited 0 did not do what ``request``
    asked, judged from ``changes`` (what it created, changed or deleted) and the start of the
    files it wrote (``written``); None when nothing is wrong that conch can see."""
    asked = " ".join(request.lower().split())
    if not changes:
        # Only an in-place edit that changed nothing is known to have missed: its pattern
        # matched nothing. chmod, mkdir -p or cp may find the work already done.
        if _NO_CHANGE_NEEDED.search(asked) or not _IN_PLACE.search(command):
            return None
        return "left every file as it was"
    found = _NAME_CASE.search(asked)
    if found is not None:
        case = found.group(1) or found.group(2)
        lower = case.startswith("lower")
        gone = {
            os.path.basename(p.rstrip("/"))
            for v, _, p in (c.partition(" ") for c in changes)
            if v == "deleted"
        }
        renamed = {n.lower() if lower else n.upper() for n in gone}
        for line in changes:
            verb, _, path = line.partition(" ")
            name = os.path.basename(path.rstrip("/"))
            wanted = name.lower() if lower else name.upper()
            if verb == "created" and name != wanted:
                return f"created {path}, whose name is not in {case}"
            if verb == "created" and gone and name not in renamed:
                return f"created {path}, which is not the name of a file it renamed, in {case}"
    form = line_form(request)
    for path, data in written:
        text = data.decode("utf-8", "replace")
        shown = " ".join(text.split())[:80]
        if form is not None and os.path.basename(path) in request:
            if not text.strip():
                return f"{path} is empty; the request asks for lines of the form {form[0]!r}"
            off = next((x for x in text.splitlines() if x.strip() and not form[1].match(x)), None)
            if off is not None:
                return f"{path} holds the line {off.strip()[:80]!r}, not of the form {form[0]!r}"
        shape = file_shape(path, data)
        if shape is not None:
            return shape
        if _BARE_NAMES.search(asked) and os.path.basename(path) in request:
            with_dir = next((x for x in text.splitlines() if "/" in x.strip().rstrip("/")), None)
            if with_dir is not None:
                return (
                    f"{path} holds {with_dir.strip()[:80]!r}, with its directory; the request "
                    "asks for the names alone"
                )
        literal = format_literal(command, text)
        if literal is not None:
            return f"wrote {literal} into {path} ({shown!r}): print does not format; printf does"
        if _NUMBER_ALONE.search(asked) and text.strip() and not _LONE_NUMBER.match(text.strip()):
            return f"{path} holds {shown!r}; the request asks for the number alone"
    return None


# "names only, without the directory", "just the file names": no path in the lines written.
_BARE_NAMES = re.compile(
    r"\bwithout (?:the|their|its|any) (?:directory|directories|dir|folder|path|paths)\b"
    r"|\b(?:file ?)?names only\b|\bonly (?:the|their) (?:file ?)?names\b|\bbase ?names\b"
)
# "rename the files so their names are lower case", "make the file names uppercase".
_NAME_CASE = re.compile(
    r"\bnames?\b.{0,60}?\b((?:lower|upper) ?case)\b|\b((?:lower|upper) ?case)\b.{0,30}?\bnames?\b"
)
# A quoted line format whose placeholders are words in capitals that the request explains
# elsewhere: "Hello, NAME!" ... where NAME is; "NAME COUNT"; "- [TITLE](FILE)".
_QUOTED = re.compile(r"\"([^\"\n]{3,80})\"")
_PLACEHOLDER = re.compile(r"\b[A-Z][A-Z_]{2,}\b")


def line_form(request: str) -> tuple[str, re.Pattern[str]] | None:
    """The line format ``request`` gives in quotes, with a pattern each line written in that
    form matches (a placeholder stands for any text, a space for spaces); None when it gives
    none. A placeholder counts only when the request names it outside the quotes too, so a
    quoted literal in capitals ("ERROR") is not taken for one."""
    for quoted in _QUOTED.finditer(request):
        text = quoted.group(1)
        outside = request[: quoted.start()] + request[quoted.end() :]
        holders = list(_PLACEHOLDER.finditer(text))
        if not holders or not any(re.search(rf"\b{h.group(0)}\b", outside) for h in holders):
            continue
        parts: list[str] = []
        at = 0
        for holder in holders:
            parts.append(re.escape(text[at : holder.start()]))
            parts.append(r".+?")
            at = holder.end()
        parts.append(re.escape(text[at:]))
        pattern = "".join(parts).replace(r"\ ", r"[ \t]+")
        return text, re.compile(rf"^[ \t]*{pattern}[ \t]*$")
    return None


def file_shape(path: str, data: bytes) -> str | None:
    """Why the start of the file ``path`` (``data``) is not what its extension says: CSV
    lines with different numbers of fields, or a ``.json`` file, read whole, that is not
    JSON. None when it fits, or for any other kind of file."""
    import csv
    import json

    from conch.execute.scratch import WRITTEN_BYTES

    whole = len(data) < WRITTEN_BYTES
    text = data.decode("utf-8", "replace")
    suffix = os.path.splitext(path)[1].lower()
    if suffix == ".csv":
        lines = text.splitlines() if whole else text.splitlines()[:-1]
        rows = [(n, r) for n, r in enumerate(csv.reader(lines), start=1) if r]
        if len(rows) > 1:
            first = len(rows[0][1])
            odd = next(((n, len(r)) for n, r in rows if len(r) != first), None)
            if odd is not None:
                return (
                    f"{path} is not CSV: its line 1 has {first} fields, its line {odd[0]} has "
                    f"{odd[1]} ({' '.join(text.split())[:80]!r})"
                )
    elif suffix == ".json" and whole and text.strip():
        try:
            json.loads(text)
        except ValueError as exc:
            return f"{path} is not JSON ({exc}; {' '.join(text.split())[:80]!r})"
    return None


def format_literal(command: str, text: str) -> str | None:
    """The printf conversion (``%.2f``) in a ``print`` or ``echo`` string of ``command`` that
    its output ``text`` holds as it stands, quoted, when there is one: awk's
    ``print "%.2f", x`` prints the format (a ``grep '%s'`` or ``printf`` is not judged)."""
    for spec in dict.fromkeys(_FORMAT.findall(text)):
        printed = re.compile(r"\b(?:print|echo)\s+[\"'][^\"']*" + re.escape(spec))
        if printed.search(command):
            return f"the format {spec!r} as it stands"
    return None


def _names(lines: list[str], cwd: Path | None, kind: str) -> bool:
    """Whether some line ends in the name of a directory (``kind`` "dir") or a regular file
    ("file") that exists under ``cwd``."""
    if cwd is None:
        return False
    for line in lines:
        name = line.split("\t")[-1] if "\t" in line else line.split()[-1]
        name = name.removeprefix("./")
        if not name or name in (".", "..") or name.startswith("/"):
            continue
        path = cwd / name
        try:
            found = path.is_dir() if kind == "dir" else path.is_file()
        except OSError:
            continue
        if found and not path.is_symlink():
            return True
    return False
