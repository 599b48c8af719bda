"""API keys: looked up from the environment or the system keyring, never logged.

Settings only name the environment variable that holds a key; the key itself is fetched here at
the moment a provider needs it. The keyring stores it under service ``conch`` with the variable's
name as the username, so one name identifies a key in both places.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from conch.errors import ConfigError

KEYRING_SERVICE = "conch"


def lookup_secret(env_var: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The secret named ``env_var``: from the environment, else the system keyring, else None.

    Keyring problems (library missing, no backend, locked store) mean "no secret", never an
    exception: a missing key is reported by the caller, which knows what the key is for.
    """
    env = os.environ if environ is None else environ
    value = env.get(env_var)
    if value:
        return value
    try:
        import keyring

        stored = keyring.get_password(KEYRING_SERVICE, env_var)
    except Exception:
        # Deliberately broad: backends raise anything from NoKeyringError to D-Bus errors.
        return None
    return stored if isinstance(stored, str) and stored else None


def store_secret(env_var: str, value: str) -> None:
    """Store ``value`` in the system keyring under the name ``env_var``.

    Raises ``ConfigError`` when there is no usable keyring backend.
    """
    hint = f"set the environment variable {env_var} instead"
    try:
        import keyring
        import keyring.errors
    except ImportError:
        raise ConfigError(f"the keyring library is not installed; {hint}") from None
    try:
        keyring.set_password(KEYRING_SERVICE, env_var, value)
    except keyring.errors.NoKeyringError:
        raise ConfigError(f"no system keyring is available to store {env_var}; {hint}") from None
    except Exception as exc:
        # The backend's message may echo what it was given, so it is redacted before showing.
        reason = redact(str(exc), [value]) or type(exc).__name__
        raise ConfigError(
            f"could not store {env_var} in the system keyring ({reason}); {hint}"
        ) from None


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every occurrence of each non-empty secret replaced by ``***``."""
    # Longest first, so a secret that contains another is hidden whole.
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text
