"""Static checks: installed programs and documented options, with real and fake programs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conch.validate import collect_help, programs, static_check

BSD_USAGE = "usage: fakestat [-FLnq] [-f format] [-t timefmt] [file ...]"


def _check(command: str, cache: Path) -> list[str]:
    return static_check(command, collect_help(programs(command), None, cache))


@pytest.fixture
def fake_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "bin"
    directory.mkdir()
    script = directory / "fakestat"
    script.write_text(
        f'#!/bin/sh\ncase "$1" in --help|-h|--version) echo "{BSD_USAGE}" >&2; exit 1;; esac\n'
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{directory}{os.pathsep}{os.environ['PATH']}")
    return directory


def test_ls_with_a_documented_long_option_passes(tmp_path: Path) -> None:
    assert _check("ls --all", tmp_path) == []


def test_letters_chosen_for_the_unknown_option_test_really_are_absent_from_gnu_ls(
    tmp_path: Path,
) -> None:
    ls = collect_help(["ls"], None, tmp_path)["ls"]
    assert "-j" not in ls.options and "-y" not in ls.options and "-l" in ls.options


def test_an_unknown_long_option_of_ls_is_flagged(tmp_path: Path) -> None:
    assert _check("ls --no-such-flag", tmp_path) == [
        "'ls' does not document the option --no-such-flag"
    ]


def test_unknown_letters_in_a_short_option_cluster_are_flagged_one_by_one(
    tmp_path: Path,
) -> None:
    assert _check("ls -ljy /tmp", tmp_path) == [
        "'ls' does not document the option -j (in -ljy)",
        "'ls' does not document the option -y (in -ljy)",
    ]


def test_a_missing_program_is_flagged_as_not_installed(tmp_path: Path) -> None:
    assert _check("definitely-not-installed-xyz --help", tmp_path) == [
        "program 'definitely-not-installed-xyz' is not installed (not on PATH)"
    ]


def test_common_real_commands_pass_without_false_alarms(tmp_path: Path) -> None:
    commands = [
        "find . -name '*.py' | xargs wc -l",
        "ls -la --color=auto /tmp",
        "grep -rn --include='*.py' foo .",
        "cut -d: -f1 /etc/passwd",
        "head -5 notes.txt",
        "sort -t, -k2 -n data.csv",
        "awk -F: '{print $1}' /etc/passwd",
        "find . -mtime -7 -type f -exec grep -l foo {} +",
        "xargs -0 -I{} echo {}",
        "du -sh /tmp",
        "chmod -x notes.txt",  # a mode, not an option
        "ls --al",  # getopt_long accepts an unambiguous prefix
        "cd /tmp && pwd",
        "f() { ls; }; f",
    ]
    for command in commands:
        assert _check(command, tmp_path) == [], command


def test_find_options_are_single_dash_words(tmp_path: Path) -> None:
    assert _check("find . -nmae '*.py'", tmp_path) == ["'find' does not document the option -nmae"]


def test_options_after_double_dash_are_operands(tmp_path: Path) -> None:
    assert _check("ls -- --no-such-flag", tmp_path) == []


def test_options_for_the_command_a_wrapper_runs_are_checked_against_that_command(
    tmp_path: Path,
) -> None:
    issues = _check("timeout 5 ls --no-such-flag", tmp_path)
    assert issues == ["'ls' does not document the option --no-such-flag"]


def test_a_bsd_tool_accepts_its_documented_short_options(tmp_path: Path, fake_bin: Path) -> None:
    assert _check("fakestat -f %z x", tmp_path) == []
    assert _check("fakestat -Lq -t %s x", tmp_path) == []


def test_a_gnu_long_option_given_to_a_bsd_tool_is_flagged(tmp_path: Path, fake_bin: Path) -> None:
    (issue,) = _check("fakestat --format=%s x", tmp_path)
    assert issue.startswith("'fakestat' does not document the option --format")
    assert "no long options" in issue


def test_a_program_without_usable_help_has_its_options_left_unchecked(
    tmp_path: Path, fake_bin: Path
) -> None:
    quiet = fake_bin / "quiet"
    quiet.write_text("#!/bin/sh\necho 'quiet: unknown option --help' >&2\nexit 2\n")
    quiet.chmod(0o755)
    assert _check("quiet --whatever -xyz", tmp_path) == []


def test_a_syntax_error_is_reported(tmp_path: Path) -> None:
    assert "the command is not valid shell syntax (it does not parse)" in _check(
        "ls | | wc", tmp_path
    )


def test_a_local_script_path_is_checked_for_existence_only(tmp_path: Path) -> None:
    assert _check(f"{tmp_path}/nope.sh --x", tmp_path) == [
        f"program '{tmp_path}/nope.sh' does not exist or is not executable"
    ]


@pytest.mark.parametrize(
    ("program", "flagged"),
    [
        ("""NR > 1 {s += $2; n++} END {print "%.2f\\n", s / n}""", True),
        ("""{print("%d items", NR)}""", True),
        ("""{printf "%.2f\\n", $1}""", False),
        ("""{print "100%"}""", False),
        ("""{print $1 "%", $2}""", False),
        ("""{print "50% done:", $1}""", False),  # percent text, no format
        ("""{print "10% faster", $1}""", False),
    ],
)
def test_awk_print_given_a_format_is_flagged(tmp_path: Path, program: str, flagged: bool) -> None:
    issues = [i for i in _check(f"awk -F, '{program}' scores.csv", tmp_path) if "printf" in i]
    assert bool(issues) is flagged
