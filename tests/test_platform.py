"""Platform detection: real probes on this machine, the cache, and userland flavours."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from conch.host.platform import CACHE_FILE, PROBE_TIMEOUT_S, PlatformContext, detect_platform
from conch.host.process import ProcessResult, run_process
from requires import needs

BUSYBOX_HELP = """\
BusyBox v1.36.1 (2023-07-27 17:12:24 UTC) multi-call binary.

Usage: ls [-1AaCxdLHRFplinshrSXvctu] [-w WIDTH] [FILE]...

List directory contents
"""


class Probes:
    """Runs the probes for real and records their argv."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, argv: Sequence[str], **options: Any) -> ProcessResult:
        self.calls.append(list(argv))
        return run_process(argv, **options)


@pytest.mark.skipif(os.uname().sysname != "Linux", reason="asserts facts about a Linux host")
def test_detection_on_this_machine_finds_linux_gnu_and_common_tools() -> None:
    context = detect_platform()

    assert context.os_name == "Linux"
    assert context.os_version == os.uname().release
    assert context.arch in {"x86_64", "aarch64"}
    assert context.userland == "GNU"
    assert "grep" in context.tools
    assert Path(context.tools["grep"]).is_absolute()
    assert context.shell
    assert context.shell_name == Path(context.shell).name


def test_describe_renders_os_shell_userland_and_tools() -> None:
    context = PlatformContext(
        os_name="Linux",
        os_version="6.1.0",
        distro="Debian GNU/Linux 12",
        arch="x86_64",
        shell="/bin/bash",
        shell_name="bash",
        shell_version="5.2.15",
        userland="GNU",
        tools={"grep": "/usr/bin/grep", "fdfind": "/usr/bin/fdfind"},
    )

    text = context.describe()

    lines = text.splitlines()
    assert lines[0] == "OS: Linux 6.1.0 (Debian GNU/Linux 12), arch x86_64"
    assert lines[1] == "Shell: bash 5.2.15 (/bin/bash)"
    assert lines[2] == "Userland: GNU coreutils (use GNU option syntax)"
    assert lines[3] == "Available tools: fdfind, grep"
    assert lines[4].startswith("Not installed: ")
    assert "rg" in lines[4]
    assert "fd," not in lines[4]  # fdfind stands in for fd


def test_shell_comes_from_environ_and_sh_gets_no_version() -> None:
    context = detect_platform(environ={"PATH": os.environ["PATH"], "SHELL": "/bin/sh"})

    assert context.shell == "/bin/sh"
    assert context.shell_name == "sh"
    assert context.shell_version == ""


def test_second_call_is_served_from_the_cache_without_any_subprocess(tmp_path: Path) -> None:
    environ = {"PATH": os.environ["PATH"], "SHELL": "/bin/sh"}
    first = detect_platform(cache_dir=tmp_path, environ=environ)
    assert (tmp_path / CACHE_FILE).is_file()

    probes = Probes()
    second = detect_platform(cache_dir=tmp_path, environ=environ, run=probes)

    assert probes.calls == []
    assert second == first


def test_a_different_shell_changes_the_fingerprint_and_redetects(tmp_path: Path) -> None:
    path = os.environ["PATH"]
    detect_platform(cache_dir=tmp_path, environ={"PATH": path, "SHELL": "/bin/sh"})

    probes = Probes()
    environ = {"PATH": path, "SHELL": "/bin/dash"}
    context = detect_platform(cache_dir=tmp_path, environ=environ, run=probes)

    assert probes.calls, "expected fresh probes after the fingerprint changed"
    assert context.shell == "/bin/dash"
    cached = json.loads((tmp_path / CACHE_FILE).read_text(encoding="utf-8"))
    assert cached["platform"]["shell"] == "/bin/dash"


@pytest.mark.parametrize(
    "content",
    ["{not json", "[]", '{"fingerprint": 3}', "\udcff", ""],
    ids=["broken-json", "wrong-shape", "wrong-fingerprint", "bad-utf8", "empty"],
)
def test_a_corrupt_cache_is_ignored_and_rewritten(tmp_path: Path, content: str) -> None:
    cache = tmp_path / CACHE_FILE
    cache.write_bytes(content.encode("utf-8", "surrogateescape"))
    environ = {"PATH": os.environ["PATH"], "SHELL": "/bin/sh"}

    context = detect_platform(cache_dir=tmp_path, environ=environ)

    assert context.shell == "/bin/sh"
    rewritten = json.loads(cache.read_text(encoding="utf-8"))
    assert rewritten["platform"]["shell"] == "/bin/sh"


def test_a_cache_entry_with_a_missing_field_is_ignored(tmp_path: Path) -> None:
    environ = {"PATH": os.environ["PATH"], "SHELL": "/bin/sh"}
    detect_platform(cache_dir=tmp_path, environ=environ)
    cache = tmp_path / CACHE_FILE
    data = json.loads(cache.read_text(encoding="utf-8"))
    del data["platform"]["userland"]
    cache.write_text(json.dumps(data), encoding="utf-8")

    context = detect_platform(cache_dir=tmp_path, environ=environ)

    assert context.userland
    assert "userland" in json.loads(cache.read_text(encoding="utf-8"))["platform"]


def test_an_ls_that_prints_busybox_help_means_a_busybox_userland(tmp_path: Path) -> None:
    fake_ls = tmp_path / "ls"
    fake_ls.write_text(f"#!/bin/sh\ncat >&2 <<'EOF'\n{BUSYBOX_HELP}EOF\nexit 1\n", encoding="utf-8")
    fake_ls.chmod(0o755)

    context = detect_platform(environ={"PATH": str(tmp_path), "SHELL": "/bin/sh"})

    assert context.userland == "busybox"
    assert context.tools == {}


def test_an_ls_symlinked_to_busybox_means_busybox_without_running_it(tmp_path: Path) -> None:
    busybox = tmp_path / "busybox"
    busybox.write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
    busybox.chmod(0o755)
    (tmp_path / "ls").symlink_to(busybox)
    probes = Probes()

    context = detect_platform(environ={"PATH": str(tmp_path), "SHELL": "/bin/sh"}, run=probes)

    assert context.userland == "busybox"
    assert not any(call[0].endswith("ls") for call in probes.calls)


@needs("busybox")
def test_busybox_applets_are_versioned_as_busybox_not_by_their_version_text(
    tmp_path: Path,
) -> None:
    busybox = os.path.realpath(shutil.which("busybox") or "")
    for applet in ("ls", "sed", "sort"):  # busybox sed --version says "This is not GNU sed"
        (tmp_path / applet).symlink_to(busybox)

    context = detect_platform(environ={"PATH": str(tmp_path), "SHELL": "/bin/sh"})

    assert context.userland == "busybox"
    assert re.fullmatch(r"busybox \d+(\.\d+)+", context.versions["sed"])
    assert context.versions["sort"] == context.versions["sed"]
    assert "GNU" not in context.describe().split("Versions:")[1]


def test_an_unrecognised_ls_on_linux_gives_an_unknown_userland(tmp_path: Path) -> None:
    fake_ls = tmp_path / "ls"
    fake_ls.write_text("#!/bin/sh\necho 'ls: unrecognized option' >&2\nexit 2\n", encoding="utf-8")
    fake_ls.chmod(0o755)

    context = detect_platform(environ={"PATH": str(tmp_path), "SHELL": "/bin/sh"})

    expected = "BSD" if os.uname().sysname == "Darwin" else "unknown"
    assert context.userland == expected


def test_a_probe_that_times_out_leaves_its_field_empty() -> None:
    def timing_out(argv: Sequence[str], **options: Any) -> ProcessResult:
        assert options["timeout"] == PROBE_TIMEOUT_S
        return ProcessResult(b"GNU bash, version 5.2.15", b"", 143, timed_out=True)

    environ = {"PATH": os.environ["PATH"], "SHELL": "/bin/bash"}
    context = detect_platform(environ=environ, run=timing_out)

    assert context.shell_version == ""
    assert context.userland in {"unknown", "BSD", "busybox"}


def test_versions_of_option_sensitive_tools_are_detected_and_described(tmp_path: Path) -> None:
    context = detect_platform(tmp_path)
    assert context.versions.get("grep", "").startswith("GNU ")
    # Debian's awk is mawk, which only answers to -W version: the probe must still name it.
    assert "awk" in context.versions
    assert "Versions: " in context.describe()
