"""Collecting each program's documentation on this machine: ``--help``, man page, tldr, version.

Only programs found on ``PATH`` are ever run, only with documentation flags, only when the
safety policy accepts ``NAME --help``, and never the few whose ``-h`` or ``--help`` could act
(``shutdown -h`` halts). Results are cached per binary (path, mtime, size) for a few days.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shlex
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from conch.storage.files import atomic_write_text
from conch.validate.config import ValidationSettings, coerce_settings
from conch.validate.options import build_index
from conch.validate.probe import PROBE_TIMEOUT_S, ProbeResult, probe_env, run_probe
from conch.validate.tldr import tldr_page

PolicyCheck = Callable[[str], bool]

_CACHE_VERSION = 1
_MAN_LINES = 100
# The option index must see a big tool's whole help (GNU ls --help is 8 KB, curl's man page
# 250 KB), so reads are capped higher than the text kept for the model.
_INDEX_READ_BYTES = 262144
_MAX_WORKERS = 8
_TRUNCATION_NOTE = "\n[... truncated by conch]"

#: Shell builtins and keywords (POSIX, bash, zsh): they exist without being on PATH.
SHELL_BUILTINS = frozenset(
    {".", ":", "[", "[[", "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command"}
    | {"compgen", "complete", "continue", "declare", "dirs", "disown", "echo", "enable", "eval"}
    | {"exec", "exit", "export", "false", "fc", "fg", "getopts", "hash", "help", "history"}
    | {"jobs", "kill", "let", "local", "logout", "mapfile", "popd", "printf", "pushd", "pwd"}
    | {"read", "readarray", "readonly", "return", "set", "shift", "shopt", "source", "suspend"}
    | {"test", "time", "times", "trap", "true", "type", "typeset", "ulimit", "umask", "unalias"}
    | {"unset", "wait", "function", "select", "coproc", "setopt", "unsetopt", "autoload"}
    | {"whence", "where", "which", "rehash", "bindkey", "noglob", "print", "zmodload"}
)

#: Never run, even for help: on some systems their help flags act (``shutdown -h`` halts).
NEVER_PROBE = frozenset(
    {"shutdown", "reboot", "halt", "poweroff", "init", "telinit", "runlevel", "systemd"}
    | {"mkfs", "fdisk", "sfdisk", "parted", "wipefs", "mkswap", "format", "diskpart"}
    | {"login", "su", "passwd", "logout", "kexec", "rtcwake", "pm-suspend", "pm-hibernate"}
)

_ERROR_LINE = re.compile(
    r"illegal option|unrecognized option|invalid option|unknown option|not an option|usage:",
    re.IGNORECASE,
)
_HELP_ALL = re.compile(r"--help (?:all|<category>)")
_USEFUL = re.compile(r"usage|options?:|^\s*-\w", re.IGNORECASE | re.MULTILINE)


@dataclass(slots=True)
class CommandHelp:
    """What this machine says about one program. ``options`` indexes the full documentation;
    the texts are truncated to ``max_help_text_size`` for the model."""

    command: str
    exists: bool
    path: str | None = None
    help_text: str | None = None
    man_page: str | None = None
    tldr_summary: str | None = None
    version: str | None = None
    builtin: bool = False
    options: tuple[str, ...] = ()
    value_options: tuple[str, ...] = ()
    takes_command: bool = False
    note: str | None = None  # why documentation is missing (not probed, timed out)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the option index is left out: it is internal)."""
        out = asdict(self)
        for internal in ("options", "value_options", "takes_command"):
            out.pop(internal)
        return out

    @property
    def documented(self) -> bool:
        """True when the option index knows enough to judge options by."""
        return bool(self.options)


def default_policy_check(name: str) -> bool:
    """True when the safety policy does not reject ``NAME --help`` nor ``NAME -h``."""
    from conch.policy import Decision, assess

    quoted = shlex.quote(name)
    return all(
        assess(f"{quoted} {flag}").decision is not Decision.REJECT for flag in ("--help", "-h")
    )


def collect_help(
    names: Sequence[str],
    settings: ValidationSettings | Mapping[str, Any] | None = None,
    cache_dir: Path | None = None,
    policy_check: PolicyCheck | None = None,
) -> dict[str, CommandHelp]:
    """Documentation for each of ``names``, collected in parallel within the validation timeout.

    ``cache_dir`` None disables the disk cache. A program still being probed when the timeout
    ends is reported as found (or not) with no documentation.
    """
    opts = coerce_settings(settings)
    check = policy_check or default_policy_check
    unique = list(dict.fromkeys(n for n in names if n))
    deadline = time.monotonic() + opts.validation_timeout_ms / 1000
    env = probe_env()
    results: dict[str, CommandHelp] = {}
    if not unique:
        return results
    # The policy's tree-sitter parser is shared module state, so it is asked here, not in the
    # worker threads; paths and builtins are never probed, so it is not asked about them.
    allowed = {
        name: name not in NEVER_PROBE
        and "/" not in name
        and name not in SHELL_BUILTINS
        and check(name)
        for name in unique
    }
    pool = ThreadPoolExecutor(max_workers=min(_MAX_WORKERS, len(unique)))
    try:
        futures = {
            pool.submit(_collect_one, name, opts, cache_dir, allowed[name], deadline, env): name
            for name in unique
        }
        # Probes honour the deadline themselves; the margin covers reaping killed ones.
        wait_futures(futures, timeout=max(0.0, deadline - time.monotonic()) + 1.5)
        for future, name in futures.items():
            if future.done() and future.exception() is None:
                results[name] = future.result()
            else:
                results[name] = locate_program(name, note="documentation timed out")
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return {name: results[name] for name in unique}


def locate_program(name: str, note: str | None = None) -> CommandHelp:
    """Existence only: a builtin, a path, or nothing."""
    if "/" in name:
        # A path (./script) is never looked up on PATH nor run; only its presence is checked.
        ok = os.path.isfile(name) and os.access(name, os.X_OK)
        return CommandHelp(name, ok, name if ok else None, note="not on PATH: not probed")
    path = shutil.which(name)
    if name in SHELL_BUILTINS:
        return CommandHelp(name, True, path, builtin=True, note=note)
    return CommandHelp(name, path is not None, path, note=note)


def _collect_one(
    name: str,
    settings: ValidationSettings,
    cache_dir: Path | None,
    allowed: bool,
    deadline: float,
    env: Mapping[str, str],
) -> CommandHelp:
    found = locate_program(name)
    if not found.exists or found.path is None or "/" in name or not settings.collect_help_text:
        return found
    if found.builtin:
        return found  # the shell's own version runs, whatever a same-named binary documents
    cache_file, key = _cache_key(name, found.path, settings, cache_dir)
    if cache_file is not None:
        cached = _load(cache_file, key, settings.help_cache_ttl_days)
        if cached is not None:
            return cached
    if not allowed:
        found.note = "not probed: running it for help is not allowed (safety policy)"
        return found
    _probe_all(found, settings, deadline, env)
    if cache_file is not None:
        _save(cache_file, key, found)
    return found


def _probe_all(
    found: CommandHelp, settings: ValidationSettings, deadline: float, env: Mapping[str, str]
) -> None:
    assert found.path is not None
    cap = max(settings.max_help_text_size * 2, _INDEX_READ_BYTES)
    size = settings.max_help_text_size

    def run(argv: list[str], merge: bool = True) -> ProbeResult:
        timeout = min(PROBE_TIMEOUT_S, deadline - time.monotonic())
        return run_probe(argv, env, timeout=timeout, cap=cap, merge_stderr=merge)

    full_help = ""
    result = run([found.path, "--help"])
    hung = result.timed_out
    if not hung and _USEFUL.search(result.text):
        full_help = result.text
    elif not hung:
        retry = run([found.path, "-h"])
        hung = retry.timed_out
        if not hung and _USEFUL.search(retry.text):
            full_help = retry.text
    index_help = full_help
    if _HELP_ALL.search(full_help):
        # curl's --help lists a few "important" options; `--help all` lists them all.
        index_help += "\n" + run([found.path, "--help", "all"]).text
    if hung:
        # A program that hangs on --help likely hangs on anything: probe it no further.
        found.note = "help probe timed out"
    full_man = ""
    # A name starting with "-" would reach man as an option.
    if settings.collect_man_pages and shutil.which("man") and not found.command.startswith("-"):
        full_man = run(["man", "-P", "cat", found.command], merge=False).text
    if settings.collect_tldr:
        found.tldr_summary = tldr_page(found.command, env)
    if not hung:
        version = run([found.path, "--version"])
        found.version = _first_line(version.text) if not version.timed_out else None
    found.help_text = truncate(full_help, size) or None
    found.man_page = truncate("\n".join(full_man.split("\n")[:_MAN_LINES]), size) or None
    index = build_index(index_help, full_man)
    if index is not None:
        found.options = tuple(sorted(index.options))
        found.value_options = tuple(sorted(index.value_options))
        found.takes_command = index.takes_command


def _first_line(text: str) -> str | None:
    for line in text.split("\n"):
        if line.strip():
            return None if _ERROR_LINE.search(line) else line.strip()[:200]
    return None


def truncate(text: str, size: int) -> str:
    """``text`` cut to ``size`` characters, with a note saying so."""
    if len(text) <= size:
        return text
    return text[: max(0, size - len(_TRUNCATION_NOTE))].rstrip() + _TRUNCATION_NOTE


# cache -------------------------------------------------------------------------------------


def _cache_key(
    name: str, path: str, settings: ValidationSettings, cache_dir: Path | None
) -> tuple[Path | None, dict[str, Any]]:
    try:
        real = os.path.realpath(path)
        st = os.stat(real)
    except OSError:
        return None, {}
    key = {
        "version": _CACHE_VERSION,
        "name": name,
        "path": path,
        "real": real,
        "mtime_ns": st.st_mtime_ns,
        "size": st.st_size,
        # Settings that change what is collected are part of the key.
        "max": settings.max_help_text_size,
        "man": settings.collect_man_pages,
        "tldr": settings.collect_tldr,
    }
    if cache_dir is None or settings.help_cache_ttl_days <= 0:
        return None, key
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    safe = re.sub(r"[^A-Za-z0-9._+-]", "_", name)[:64]
    return cache_dir / "help" / f"{safe}-{digest}.json", key


def _load(path: Path, key: dict[str, Any], ttl_days: float) -> CommandHelp | None:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != key:
        return None
    created = data.get("created")
    now = time.time()
    if not isinstance(created, (int, float)) or not (now - ttl_days * 86400 < created <= now + 60):
        return None
    return _from_json(data.get("help"))


def _from_json(raw: Any) -> CommandHelp | None:
    if not isinstance(raw, dict):
        return None
    values: dict[str, Any] = {}
    for spec in fields(CommandHelp):
        value = raw.get(spec.name)
        if spec.name in ("options", "value_options"):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                return None
            value = tuple(value)
        elif spec.name in ("exists", "builtin", "takes_command"):
            if not isinstance(value, bool):
                return None
        elif spec.name == "command":
            if not isinstance(value, str):
                return None
        elif value is not None and not isinstance(value, str):
            return None
        values[spec.name] = value
    return CommandHelp(**values)


def _save(path: Path, key: dict[str, Any], help_: CommandHelp) -> None:
    payload = {"key": key, "created": time.time(), "help": asdict(help_)}
    # An unwritable cache only costs probing again next time.
    with contextlib.suppress(OSError):
        atomic_write_text(path, json.dumps(payload, sort_keys=True) + "\n")
