"""A keyring backend in a JSON file, for tests: in this process through ``keyring.set_keyring``,
in a child process through ``PYTHON_KEYRING_BACKEND=keyringutil.FileKeyring`` (with this
directory on ``PYTHONPATH``) and ``CONCH_TEST_KEYRING`` naming the file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import keyring.backend
import keyring.errors
from keyring.compat import properties

FILE_VARIABLE = "CONCH_TEST_KEYRING"


class FileKeyring(keyring.backend.KeyringBackend):
    """Passwords in a JSON file: ``{"service/user": password}``. Chosen only by name: it
    is never the backend keyring picks by itself (its priority raises without the file)."""

    @properties.classproperty
    def priority(cls) -> float:
        if FILE_VARIABLE not in os.environ:
            raise RuntimeError(f"{FILE_VARIABLE} names no file")
        return 1

    def __init__(self, path: Path | None = None) -> None:
        super().__init__()
        self.path = path if path is not None else Path(os.environ[FILE_VARIABLE])

    def entries(self) -> dict[str, str]:
        if not self.path.exists():
            return {}
        data: dict[str, str] = json.loads(self.path.read_text(encoding="utf-8"))
        return data

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries().get(f"{service}/{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        entries = self.entries()
        entries[f"{service}/{username}"] = password
        self.path.write_text(json.dumps(entries), encoding="utf-8")

    def delete_password(self, service: str, username: str) -> None:
        entries = self.entries()
        if entries.pop(f"{service}/{username}", None) is None:
            raise keyring.errors.PasswordDeleteError("no such password")
        self.path.write_text(json.dumps(entries), encoding="utf-8")
