"""The one helper that decides what happens to a test whose program is missing
(tests/requires.py): it runs, it is skipped saying why, or under ``CI=true`` it fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from requires import Decision, decide, needs

pytest_plugins = ("pytester",)


def _bin(tmp_path: Path, *programs: str) -> str:
    """A PATH directory holding exactly ``programs`` (each one an executable that does nothing)."""
    directory = tmp_path / "bin"
    directory.mkdir(exist_ok=True)
    for name in programs:
        program = directory / name
        program.write_text("#!/bin/sh\n", encoding="utf-8")
        program.chmod(0o755)
    return str(directory)


def test_a_tool_on_path_lets_the_test_run(tmp_path: Path) -> None:
    path = _bin(tmp_path, "busybox", "man", "pstree")
    assert decide(("busybox", "man"), {"PATH": path}) == Decision("run")
    assert decide(("busybox",), {"PATH": path, "CI": "true"}) == Decision("run")


def test_a_missing_tool_skips_saying_what_and_how_to_install_it(tmp_path: Path) -> None:
    decision = decide(("busybox",), {"PATH": _bin(tmp_path)})
    assert decision == Decision("skip", "busybox is not installed (apt-get install busybox)")
    only_man = decide(("man",), {"PATH": _bin(tmp_path, "man")})
    assert only_man.reason == "pstree is not installed (apt-get install man-db psmisc)"


def test_under_ci_a_missing_tool_is_a_failure(tmp_path: Path) -> None:
    decision = decide(("chromium",), {"PATH": _bin(tmp_path), "CI": "true"})
    assert decision.action == "fail"
    assert decision.reason.startswith("chromium is not installed (apt-get install chromium); ")
    assert "CI=true" in decision.reason
    # Only CI=true makes it a failure, as .ci/run exports it.
    assert decide(("chromium",), {"PATH": _bin(tmp_path), "CI": "1"}).action == "skip"


def test_an_unusable_bubblewrap_says_why(tmp_path: Path) -> None:
    environ = {"PATH": _bin(tmp_path), "CONCH_BWRAP": str(tmp_path / "no-such-bwrap")}
    decision = decide(("bubblewrap",), environ)
    assert decision.action == "skip"
    assert decision.reason.startswith("bubblewrap cannot create a sandbox here: CONCH_BWRAP names")


def test_a_tool_it_does_not_know_is_a_mistake_in_the_test() -> None:
    with pytest.raises(ValueError, match="needs\\('busybx'\\): no such tool; known tools: "):
        needs("busybx")


INNER = """
from requires import needs

@needs("busybox")
def test_needs_busybox():
    pass

def test_needs_nothing():
    pass
"""

CONFTEST = """
import pytest
import requires

def pytest_configure(config):
    requires.register(config)

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    requires.enforce(item)
"""


@pytest.mark.parametrize(("ci", "outcome"), [(None, "skipped"), ("true", "errors")])
def test_the_mark_skips_or_under_ci_fails_a_real_run(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    ci: str | None,
    outcome: str,
) -> None:
    monkeypatch.setenv("PATH", _bin(tmp_path))  # no busybox here
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(INNER)
    result = pytester.runpytest("-rsE", "--strict-markers")
    result.assert_outcomes(passed=1, **{outcome: 1})
    result.stdout.fnmatch_lines(["*busybox is not installed (apt-get install busybox)*"])
