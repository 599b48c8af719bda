"""Names a package exports but imports only on first use (PEP 562 ``__getattr__``)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, names: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A ``__getattr__`` and a ``__dir__`` for ``package``: ``names`` maps each exported name
    to the module that defines it, imported when the name is first asked for and kept in the
    package's namespace from then on."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted([*vars(sys.modules[package]), *names])

    return __getattr__, __dir__
