"""The paths a destructive command must never reach: the root, system directories, a home
directory, disks and the files of accounts and sudo, however they are spelled (through
``/proc/*/root``, ``//``, ``..``, globs), and paths only known at run time that stand for one."""

from __future__ import annotations

import fnmatch
import posixpath
import re

from conch.policy.model import Arg
from conch.policy.parse import GLOB_CHARS, expand_braces

SYSTEM_DIRS = frozenset(
    {"/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/opt"}
    | {"/proc", "/root", "/sbin", "/srv", "/sys", "/usr", "/var", "/snap"}
    | {"/System", "/Library", "/Applications", "/Users", "/private"}
)
# Children of system directories that are scratch space rather than the system itself.
_SCRATCH = frozenset({"/var/tmp", "/var/cache"})
_HOME = "/home/~"  # stands for a home directory: it is a direct child of a system dir
CRITICAL_FILES = frozenset(
    {"/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow", "/etc/sudoers"}
)
_BLOCK_DEVICE = re.compile(
    r"/dev/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|r?disk\d|dm-\d|md\d|mapper/|loop\d"
    r"|sr\d|mtdblock\d|nbd\d|root\b|block/|disk/)"
)


def is_block_device(text: str | None) -> bool:
    """True for paths of disks and partitions (``/dev/sda``, ``/dev/nvme0n1p1``...), and for
    globs that may match one (``/dev/sd?``)."""
    if text is None:
        return False
    path = through_proc(text) if text.startswith("/") else posixpath.normpath(text)
    if any(ch in GLOB_CHARS for ch in path):
        return any(
            _BLOCK_DEVICE.match(re.sub(r"\[[^]]*\]|[*?\[]", fill, path)) is not None
            for fill in ("a", "0")
        )
    return _BLOCK_DEVICE.match(path) is not None


def _strip_globs(path: str) -> str:
    """A glob stands for its whole directory: ``/usr/*`` is as bad as ``/usr``."""
    parts = path.split("/")
    for i, part in enumerate(parts):
        if any(ch in GLOB_CHARS for ch in part):
            return "/".join(parts[:i]) or "/"
    return path


def _absolute(text: str) -> str | None:
    if text.startswith("~"):
        user, _, rest = text[1:].partition("/")
        return _HOME + (user or "") + "/" + rest
    return through_proc(text) if text.startswith("/") else None


_PROC_ROOT = re.compile(r"/proc/[^/]+/root(?=/|$)")
_PROC_CWD_UP = re.compile(r"/proc/[^/]+/cwd/\.\.(?=/|$)")


def through_proc(path: str) -> str:
    """``/proc/PID/root`` is ``/`` seen from that process; ``/proc/PID/cwd/..`` is the parent
    of its working directory, which may be anything (read as ``/``)."""
    for _ in range(8):
        path = "/" + posixpath.normpath(path).lstrip("/")
        if _PROC_CWD_UP.match(path):
            return "/"
        stripped = _PROC_ROOT.sub("", path, count=1) if _PROC_ROOT.match(path) else path
        if stripped == path:
            return path
        path = stripped or "/"
    return "/"


def catastrophic_path(arg: Arg | str | None, *, home: bool = True) -> bool:
    """``/``, ``~`` (when ``home``), a system directory or a direct child like ``/usr/bin``."""
    if arg is None:
        return False
    if isinstance(arg, Arg):
        texts = expand_braces(arg.path_text) if arg.brace and arg.path_text else [arg.path_text]
        if arg.path_text is None:
            texts = [_runtime_path(arg)]
    else:
        texts = [arg]
    for text in texts:
        absolute = _absolute(text.strip()) if text else None
        if absolute is None:
            if text and _climbs(text.strip()):
                return True
            continue
        path = posixpath.normpath(_strip_globs(absolute))
        path = "/" + path.lstrip("/")
        if path == "/":
            return True
        parts = path.strip("/").split("/")
        if path.startswith(_HOME):
            if home and (len(parts) <= 2):
                return True
            continue
        if "/" + parts[0] in SYSTEM_DIRS and (
            len(parts) == 1 or (len(parts) == 2 and path not in _SCRATCH)
        ):
            return True
    return False


# Programs whose output, substituted into a path, may well be `/` or a home directory.
_PATH_PRINTERS = frozenset(
    {"dirname", "printf", "echo", "pwd", "realpath", "readlink", "getent", "cut", "awk"}
)
_LISTERS = frozenset({"ls", "find", "fd", "du", "stat", "tree", "locate"})
_DEFAULT = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*:?[-=](.*)\}", re.DOTALL)
_EXPANSION = re.compile(r"\$\{[^}]*\}|\$\(.*?\)|`[^`]*`|\$[A-Za-z_][A-Za-z0-9_]*|\$[$#?!@*0-9-]")


def _runtime_path(arg: Arg) -> str | None:
    """What a word only known at run time may be, as a path pattern: ``$PWD`` is an absolute
    directory, ``${HOME...}`` with an operator (``${HOME:0:1}``, ``${HOME%/*}``) and the
    output of a program that prints paths (``$(dirname ~)``, ``$(printf '\x2f')``) may be
    ``/``, ``${NAME:-WORD}`` may be WORD, any other expansion may be anything
    (``/home/$USER`` is any home)."""
    raw = arg.raw
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        raw = raw[1:-1]
    printers = {inv.name for inv in arg.inner} & _PATH_PRINTERS
    # `$(ls -d /*)`, `$(find ~ -maxdepth 1)`: a lister of a guarded tree prints its paths.
    printers |= {
        inv.name or ""
        for inv in arg.inner
        if inv.name in _LISTERS and any(catastrophic_path(a) for a in inv.args)
    }

    def pattern(match: re.Match[str]) -> str:
        text = match.group()
        if text in ("$HOME", "${HOME}"):
            return "~"
        if text in ("$PWD", "${PWD}", "$OLDPWD", "${OLDPWD}"):
            return "/*"
        if re.match(r"\$\{(HOME|PWD|OLDPWD)\W", text):
            return "/"
        default = _DEFAULT.fullmatch(text)
        if default is not None:  # `${UNSET:-/}`: the default is what an unset name gives
            word = default.group(1)
            return "/" if not word else _EXPANSION.sub(pattern, word.strip('"'))
        if text.startswith(("$(", "`")) and printers:
            return "/"
        return "*"

    return _EXPANSION.sub(pattern, raw)


def _climbs(text: str) -> bool:
    """A relative path that only climbs, two levels or more (``../..``): from a working
    directory that is not known, it may be a home directory or ``/``."""
    parts = posixpath.normpath(text).split("/")
    while len(parts) > 2 and set(parts[-1]) <= set("*?.[]!"):
        parts.pop()  # `../../*`: everything in it
    return len(parts) >= 2 and all(part == ".." for part in parts)


def critical_file(text: str | None) -> bool:
    """The accounts and sudo files, ``/etc/sudoers.d/*``, everything under ``/boot``
    (kernels, initrds, the boot loader) and the kernel's reboot-and-crash trigger, however
    the path is spelled (``//etc//shadow``, ``/proc/self/root/etc/shadow``, a brace list or a
    glob that may name one: ``/etc/passwd{,.bak}``, ``/etc/pass??``)."""
    if text is None or not text.startswith("/"):
        return False
    for spelled in expand_braces(text) if "{" in text else [text]:
        path = through_proc(spelled)
        if set(path) & GLOB_CHARS:
            if any(fnmatch.fnmatchcase(name, path) for name in _CRITICAL_NAMES):
                return True
            continue
        if path in _CRITICAL_NAMES or path.startswith(_CRITICAL_TREES):
            return True
    return False


_CRITICAL_NAMES = CRITICAL_FILES | {"/boot", "/proc/sysrq-trigger"}
_CRITICAL_TREES = ("/etc/sudoers.d/", "/boot/")
