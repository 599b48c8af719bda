"""The built-in tool factories are exported by ``conch.tools`` and loaded only when used."""

from __future__ import annotations

import subprocess
import sys

import pytest

import conch.tools


def test_every_exported_name_resolves() -> None:
    for name in conch.tools.__all__:
        assert getattr(conch.tools, name) is not None
    assert "fs_tools" in dir(conch.tools)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = conch.tools.nope


def test_importing_the_package_does_not_load_the_built_in_tools() -> None:
    code = (
        "import sys, conch.tools; "
        "print(sorted(m for m in sys.modules if m.startswith('conch.tools.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out.strip() == "['conch.tools.tool']"
