"""The names ``import conch`` offers: each one resolves, and none loads before it is used."""

from __future__ import annotations

import subprocess
import sys

import pytest

import conch


@pytest.mark.parametrize("name", conch.__all__)
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(conch, name) is not None


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        conch.no_such_name  # noqa: B018


def test_importing_conch_loads_only_its_version_and_the_lazy_loader() -> None:
    code = "import sys, conch; print(sorted(m for m in sys.modules if m.startswith('conch.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['conch._lazy', 'conch.version']"


def test_the_session_loads_without_terminal_libraries_and_without_a_model() -> None:
    code = (
        "import sys, conch\n"
        "session = conch.Session(conch.ScriptedProvider.of('hi'))\n"
        "assert session.chat('hello') == 'hi'\n"
        "heavy = {'click', 'rich', 'prompt_toolkit', 'xllamacpp', 'llama_cpp'}\n"
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
