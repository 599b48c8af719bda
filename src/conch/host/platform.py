"""What machine conch runs on: OS, shell, userland flavour and tools, for the model's prompt.

Detection runs a few short subprocess probes, so its result is cached in ``platform.json`` and
reused while a cheap fingerprint (kernel release, shell, ``PATH``) stays the same.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform as _stdlib_platform
import pwd
import re
import shutil
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from conch.host.process import ProcessResult, run_process
from conch.storage.files import atomic_write_text

CACHE_FILE = "platform.json"
_CACHE_VERSION = 2
PROBE_TIMEOUT_S = 2.0
PROBE_CAP = 64 * 1024

#: Tools worth telling the model about; the value in ``tools`` is where ``PATH`` finds each.
KNOWN_TOOLS: tuple[str, ...] = (
    "grep", "sed", "awk", "gawk", "find", "xargs", "sort", "uniq", "cut", "tr", "head", "tail",
    "wc", "du", "df", "stat", "file", "tar", "gzip", "bzip2", "xz", "zstd", "zip", "unzip", "7z",
    "curl", "wget", "jq", "yq", "git", "python3", "perl", "ruby", "node", "rg", "fd", "fdfind",
    "bat", "batcat", "fzf", "tree", "rsync", "ssh", "scp", "make", "gcc", "docker", "podman",
    "kubectl", "systemctl", "journalctl", "lsof", "ps", "ss", "netstat", "ip", "ffmpeg", "convert",
    "sqlite3",
)  # fmt: skip

#: Tools whose version changes which options exist; their ``--version`` is probed once.
VERSIONED_TOOLS: tuple[str, ...] = (
    "grep", "sed", "awk", "find", "tar", "sort", "date", "git", "python3", "curl", "jq",
)  # fmt: skip

# Distro-renamed or alternative builds: present under either name means "installed".
_ALIASES = {"fdfind": "fd", "batcat": "bat", "gawk": "awk"}
_BSD_SYSTEMS = frozenset({"Darwin", "FreeBSD", "OpenBSD", "NetBSD", "DragonFly"})
_VERSIONED_SHELLS = frozenset({"bash", "zsh", "fish"})
_USERLAND_HINTS = {
    "GNU": "GNU coreutils (use GNU option syntax)",
    "BSD": "BSD (use BSD option syntax; no GNU long options)",
    "busybox": "BusyBox (applets accept only basic options)",
    "unknown": "unknown (prefer POSIX options)",
}


@dataclass(frozen=True, slots=True)
class PlatformContext:
    """The facts about this machine that change which command is right."""

    os_name: str
    os_version: str
    distro: str
    arch: str
    shell: str
    shell_name: str
    shell_version: str
    userland: str
    tools: dict[str, str] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        """A compact block for the model's system prompt."""
        os_line = f"OS: {self.os_name} {self.os_version}".rstrip()
        if self.distro:
            os_line += f" ({self.distro})"
        if self.arch:
            os_line += f", arch {self.arch}"
        shell = " ".join(part for part in (self.shell_name, self.shell_version) if part)
        lines = [
            os_line,
            f"Shell: {shell} ({self.shell})",
            f"Userland: {_USERLAND_HINTS.get(self.userland, self.userland)}",
            f"Available tools: {', '.join(sorted(self.tools)) or 'none detected'}",
        ]
        if self.versions:
            lines.append(
                "Versions: " + ", ".join(f"{k} {v}" for k, v in sorted(self.versions.items()))
            )
        present = set(self.tools) | {_ALIASES[name] for name in self.tools if name in _ALIASES}
        missing = [n for n in KNOWN_TOOLS if n not in present and n not in _ALIASES]
        if missing:
            # Naming absent tools keeps the model from reaching for rg or jq where they are not.
            lines.append(f"Not installed: {', '.join(missing)}")
        return "\n".join(lines)


# Runs one probe; ``run_process`` is the real one (called with argv, env, timeout and caps).
ProbeRunner = Callable[..., ProcessResult]
# One probe's text: stdout then stderr, or "" when it cannot run or hangs.
_Probe = Callable[[list[str]], str]


def detect_platform(
    cache_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    run: ProbeRunner = run_process,
) -> PlatformContext:
    """Detect this machine, or reuse ``cache_dir/platform.json`` when its fingerprint matches.

    Never raises for a failed probe or an unusable cache: the field falls back to "" or
    "unknown", and a corrupt cache is rewritten. ``run`` runs the probes (``--version`` of the
    shell and of a few tools), each with a ``PROBE_TIMEOUT_S`` timeout and capped output.
    """
    env = dict(os.environ if environ is None else environ)
    shell = _user_shell(env)
    fingerprint = _fingerprint(shell, env)
    cache_path = cache_dir / CACHE_FILE if cache_dir is not None else None
    if cache_path is not None:
        cached = _load_cache(cache_path, fingerprint)
        if cached is not None:
            return cached
    context = _detect(shell, env, run)
    if cache_path is not None:
        payload = {"fingerprint": fingerprint, "platform": asdict(context)}
        # A read-only cache dir only costs re-detection next time.
        with contextlib.suppress(OSError):
            atomic_write_text(cache_path, json.dumps(payload, indent=1, sort_keys=True) + "\n")
    return context


def _user_shell(env: Mapping[str, str]) -> str:
    if env.get("SHELL"):
        return env["SHELL"]
    try:
        login_shell = pwd.getpwuid(os.getuid()).pw_shell
    except KeyError:
        login_shell = ""
    return login_shell or "/bin/sh"


def _fingerprint(shell: str, env: Mapping[str, str]) -> str:
    uname = os.uname()
    parts = [str(_CACHE_VERSION), uname.sysname, uname.release, uname.machine, shell]
    parts.append(env.get("PATH", ""))
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


def _load_cache(path: Path, fingerprint: str) -> PlatformContext | None:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("fingerprint") != fingerprint:
        return None
    fields = data.get("platform")
    if not isinstance(fields, dict):
        return None
    mappings: dict[str, dict[str, str]] = {}
    for name in ("tools", "versions"):
        value = fields.get(name)
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            return None
        mappings[name] = dict(value)
    strings = {}
    for name in PlatformContext.__dataclass_fields__:
        if name in mappings:
            continue
        value = fields.get(name)
        if not isinstance(value, str):
            return None
        strings[name] = value
    return PlatformContext(
        tools=mappings["tools"],
        versions=mappings["versions"],
        **strings,
    )


def _detect(shell: str, env: Mapping[str, str], run: ProbeRunner) -> PlatformContext:
    uname = os.uname()
    # Probes must answer in English whatever the user's locale.
    probe_env = {**env, "LC_ALL": "C"}
    search_path = env.get("PATH", os.defpath)
    shell_name = os.path.basename(shell)

    def probe(argv: list[str]) -> str:
        try:
            done = run(
                argv,
                env=probe_env,
                timeout=PROBE_TIMEOUT_S,
                max_stdout=PROBE_CAP,
                kill_grace=0.0,
            )
        except (OSError, ValueError):
            return ""
        if done.timed_out:
            return ""
        return (done.stdout + done.stderr).decode("utf-8", "replace")

    return PlatformContext(
        os_name=uname.sysname,
        os_version=uname.release,
        distro=_distro(uname.sysname, probe),
        arch=_stdlib_platform.machine(),
        shell=shell,
        shell_name=shell_name,
        shell_version=_shell_version(shell, shell_name, probe),
        userland=_userland(uname.sysname, search_path, probe),
        tools=_tools(search_path),
        versions=_versions(search_path, probe),
    )


def _distro(os_name: str, probe: _Probe) -> str:
    if os_name == "Darwin":
        info = dict(re.findall(r"^(\w+):\s*(.+?)\s*$", probe(["sw_vers"]), re.MULTILINE))
        return " ".join(v for v in (info.get("ProductName"), info.get("ProductVersion")) if v)
    for candidate in (Path("/etc/os-release"), Path("/usr/lib/os-release")):
        try:
            text = candidate.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        match = re.search(r"^PRETTY_NAME=(.*)$", text, re.MULTILINE)
        if match:
            return match.group(1).strip().strip("\"'")
    return ""


def _shell_version(shell: str, shell_name: str, probe: _Probe) -> str:
    # dash and POSIX sh have no --version; some would even run a script named "--version".
    if shell_name not in _VERSIONED_SHELLS:
        return ""
    lines = probe([shell, "--version"]).strip().splitlines()
    if not lines:
        return ""
    match = re.search(r"\d+(?:\.\d+)+", lines[0])
    return match.group(0) if match else lines[0][:40]


def _userland(os_name: str, search_path: str, probe: _Probe) -> str:
    ls = shutil.which("ls", path=search_path) or "/bin/ls"
    if os.path.basename(os.path.realpath(ls)) == "busybox":
        return "busybox"
    version = probe([ls, "--version"])
    # uutils (the Rust rewrite some distros ship) follows GNU option syntax.
    if "GNU coreutils" in version or "uutils coreutils" in version:
        return "GNU"
    if "busybox" in version.lower() or "busybox" in probe([ls, "--help"]).lower():
        return "busybox"
    if os_name in _BSD_SYSTEMS:
        return "BSD"
    return "unknown"


def _tools(search_path: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for name in KNOWN_TOOLS:
        location = shutil.which(name, path=search_path)
        if location:
            found[name] = location
    return found


def _versions(search_path: str, probe_text: _Probe) -> dict[str, str]:
    """``TOOL --version`` of the tools whose options differ across versions, in parallel."""
    from concurrent.futures import ThreadPoolExecutor

    present = [(n, p) for n in VERSIONED_TOOLS if (p := shutil.which(n, path=search_path))]

    def probe(item: tuple[str, str]) -> tuple[str, str]:
        name, location = item
        if os.path.basename(os.path.realpath(location)) == "busybox":
            # An applet: its --version is often usage text, or "This is not GNU sed 4.0".
            banner = re.search(r"BusyBox v(\d+(?:\.\d+)+)", probe_text([location, "--help"]))
            return name, f"busybox {banner.group(1)}" if banner else "busybox"
        first = probe_text([location, "--version"]).strip().splitlines()[:1]
        if name == "awk" and (not first or "not an option" in first[0]):
            # mawk, Debian's default awk, answers only to -W version.
            first = probe_text([location, "-W", "version"]).strip().splitlines()[:1]
        match = re.search(r"\d+(?:\.\d+)+", first[0]) if first else None
        # Say which implementation it is where that matters more than the number.
        flavour = ""
        if first and name in {"awk", "sed", "grep", "find", "tar", "date", "sort"}:
            low = first[0].lower()
            flavour = next((f for f in ("gnu", "busybox", "mawk", "bsd") if f in low), "")
            flavour = "GNU " if flavour == "gnu" else (f"{flavour} " if flavour else "")
        return name, f"{flavour}{match.group(0)}" if match else ""

    with ThreadPoolExecutor(max_workers=8) as pool:
        return {name: version for name, version in pool.map(probe, present) if version}
