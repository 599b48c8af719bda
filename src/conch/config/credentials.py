"""API keys: looked up from the environment, the system keyring, or what this process was
given, never logged.

Settings only name the environment variable that holds a key; the key itself is fetched here at
the moment a provider needs it. The keyring stores it under service ``conch`` with the variable's
name as the username, so one name identifies a key in both places. A front end that asked the
user for a key and could not keep it in the keyring hands it to ``remember_secret``: it then
lasts as long as the process, nowhere else.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from conch.errors import ConfigError

KEYRING_SERVICE = "conch"
# Keys given to this process only (``remember_secret``): never written anywhere.
_REMEMBERED: dict[str, str] = {}


def remember_secret(env_var: str, secret: str) -> None:
    """Let ``lookup_secret`` find ``secret`` under ``env_var`` for the rest of this process
    (after the environment and the keyring): a key the user typed that the keyring could not
    keep."""
    _REMEMBERED[env_var] = secret


def forget_secret(env_var: str) -> None:
    """Drop what ``remember_secret`` kept under ``env_var``, if anything."""
    _REMEMBERED.pop(env_var, None)


def lookup_secret(
    env_var: str, environ: Mapping[str, str] | None = None, *, remembered: bool = True
) -> str | None:
    """The secret named ``env_var``: from the environment, else the system keyring, else one
    this process was given (``remember_secret``), else None.

    Keyring problems (library missing, no backend, locked store) mean "no secret", never an
    exception: a missing key is reported by the caller, which knows what the key is for.
    """
    env = os.environ if environ is None else environ
    value = env.get(env_var)
    if value:
        return value
    given = _REMEMBERED.get(env_var) if remembered else None
    try:
        import keyring

        stored = keyring.get_password(KEYRING_SERVICE, env_var)
    except Exception:
        # Deliberately broad: backends raise anything from NoKeyringError to D-Bus errors.
        return given
    return stored if isinstance(stored, str) and stored else given


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every occurrence of each non-empty secret replaced by ``***``."""
    # Longest first, so a secret that contains another is hidden whole.
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def keyring_backend() -> tuple[str, bool]:
    """The system keyring's backend, as ``module.Class`` (or ``unusable: why``), and whether
    it can keep a key: without a backend keyring picks its ``fail`` one, which refuses every
    key, and ``null`` (chosen to turn the keyring off) keeps none."""
    try:
        import keyring
        from keyring.backends import fail, null

        backend = keyring.get_keyring()
        name = f"{type(backend).__module__}.{type(backend).__name__}"
        return name, not isinstance(backend, fail.Keyring | null.Keyring)
    except Exception as exc:  # backends fail in many ways (D-Bus, a locked store)
        lines = str(exc).strip().splitlines()
        return f"unusable: {lines[0] if lines else type(exc).__name__}", False


def keyring_secret(env_var: str) -> str | None:
    """The secret the system keyring holds for ``env_var``, or None (none stored, or no
    usable keyring)."""
    return lookup_secret(env_var, {}, remembered=False)


def store_secret(env_var: str, secret: str) -> None:
    """Keep ``secret`` in the system keyring under ``env_var``; ConfigError (which never
    contains the secret) when there is no keyring or it refuses."""
    try:
        import keyring

        keyring.set_password(KEYRING_SERVICE, env_var, secret)
    except Exception as exc:  # NoKeyringError, a locked store, D-Bus errors...
        raise ConfigError(
            f"cannot save the key in the system keyring: {_why(exc, secret)}"
        ) from None


def delete_secret(env_var: str) -> bool:
    """Remove the keyring's secret for ``env_var``: True when one was removed, False when
    none was stored; ConfigError when the keyring cannot be used."""
    forget_secret(env_var)
    if keyring_secret(env_var) is None:
        return False
    try:
        import keyring

        keyring.delete_password(KEYRING_SERVICE, env_var)
    except Exception as exc:
        raise ConfigError(
            f"cannot remove the key from the system keyring: {_why(exc, None)}"
        ) from None
    return True


def _why(exc: Exception, secret: str | None) -> str:
    text = redact(" ".join(str(exc).split()), [secret]) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text
