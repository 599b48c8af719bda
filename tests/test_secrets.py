"""Secrets: environment first, then the system keyring; never an exception on lookup."""

from __future__ import annotations

from collections.abc import Iterator

import keyring
import keyring.backend
import keyring.errors
import pytest
from keyring.backends import fail

from conch.config.credentials import KEYRING_SERVICE, lookup_secret, redact


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A keyring that lives in a dict, so tests never touch the real store."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.passwords: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.passwords[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.passwords.pop((service, username), None)


class BrokenKeyring(MemoryKeyring):
    """A keyring whose store is locked or unreachable."""

    def get_password(self, service: str, username: str) -> str | None:
        raise keyring.errors.KeyringLocked("the store is locked")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise keyring.errors.PasswordSetError(f"could not save {password}")


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)


@pytest.fixture
def broken_keyring() -> Iterator[BrokenKeyring]:
    previous = keyring.get_keyring()
    backend = BrokenKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)


@pytest.fixture
def no_keyring() -> Iterator[None]:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        yield
    finally:
        keyring.set_keyring(previous)


def test_the_environment_wins_over_the_keyring(memory_keyring: MemoryKeyring) -> None:
    memory_keyring.passwords[(KEYRING_SERVICE, "MY_KEY")] = "from-keyring"
    assert lookup_secret("MY_KEY", {"MY_KEY": "from-env"}) == "from-env"


def test_the_keyring_is_consulted_when_the_environment_lacks_the_variable(
    memory_keyring: MemoryKeyring,
) -> None:
    memory_keyring.passwords[(KEYRING_SERVICE, "MY_KEY")] = "from-keyring"
    assert lookup_secret("MY_KEY", {}) == "from-keyring"


def test_an_empty_environment_value_falls_through_to_the_keyring(
    memory_keyring: MemoryKeyring,
) -> None:
    memory_keyring.passwords[(KEYRING_SERVICE, "MY_KEY")] = "from-keyring"
    assert lookup_secret("MY_KEY", {"MY_KEY": ""}) == "from-keyring"


def test_a_secret_found_nowhere_is_none(memory_keyring: MemoryKeyring) -> None:
    assert lookup_secret("MY_KEY", {}) is None


def test_the_process_environment_is_read_when_no_mapping_is_given(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONCH_TEST_SECRET", "process-env")
    assert lookup_secret("CONCH_TEST_SECRET") == "process-env"


def test_a_failing_keyring_means_no_secret_rather_than_an_exception(
    broken_keyring: BrokenKeyring,
) -> None:
    assert lookup_secret("MY_KEY", {}) is None


def test_a_missing_keyring_backend_means_no_secret(no_keyring: None) -> None:
    assert lookup_secret("MY_KEY", {}) is None


def test_redact_hides_every_occurrence_of_each_secret() -> None:
    text = "key sk-abc was rejected; sk-abc again, and tok-9"
    assert redact(text, ["sk-abc", "tok-9"]) == "key *** was rejected; *** again, and ***"


def test_redact_hides_a_longer_secret_whole_when_it_contains_a_shorter_one() -> None:
    assert redact("token abc123", ["abc", "abc123"]) == "token ***"


def test_redact_ignores_missing_and_empty_secrets() -> None:
    assert redact("nothing to hide", [None, ""]) == "nothing to hide"
