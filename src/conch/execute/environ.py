"""The environment a command runs with: no secrets, and for a contained command an allowlist.

conch holds credentials in its own environment (``OPENAI_API_KEY`` for a provider, a cloud
token for another tool) that the commands it runs have no business reading. Two rules:

* ``contained_environment``: what a command that runs without a person's yes sees. Only the
  variables of ``ALLOWED`` (names or ``fnmatch`` patterns) pass, plus those the user lists in
  ``execution.pass_env``; a variable that looks like a secret (``is_secret``) never passes,
  unless the user names it exactly in ``pass_env``.
* ``scrubbed_environment``: what a command a person approved sees: the user's environment
  without the variables that look like secrets, unless the user lists them in ``pass_env``
  or turns scrubbing off (``execution.scrub_env: false``).

Safe mode expands ``$NAME`` from the same environment the command gets, so a secret conch
does not pass is not expanded either.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping

# What a contained command may see of conch's environment: where programs are, who and where
# the user is, the locale and the terminal's shape. Nothing that reaches a socket or a key.
ALLOWED: tuple[str, ...] = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TERM",
    "COLORTERM",
    "COLUMNS",
    "LINES",
    "NO_COLOR",
    "CLICOLOR",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "HOSTNAME",
)

# Names that hold credentials, or reach something that grants them (an agent socket, a
# session bus, a ticket cache). Matched case-insensitively.
SECRET_PATTERNS: tuple[str, ...] = (
    "*_API_KEY",
    "*_APIKEY",
    "*_KEY",
    "*_PAT",
    "*_DSN",
    "*_PWD",
    "DATABASE_URL",
    "*_DATABASE_URL",
    "PGPASSFILE",
    "*API_KEY*",
    "*_TOKEN",
    "*_TOKEN_*",
    "TOKEN",
    "*_SECRET",
    "*_SECRET_*",
    "*SECRET_KEY*",
    "*_PASSWORD",
    "*_PASSWD",
    "*_PASS",
    "*PASSWORD*",
    "*_CREDENTIALS",
    "*_CREDENTIAL",
    "*_AUTH",
    "*_PRIVATE_KEY",
    "AWS_*",
    "AZURE_CLIENT_*",
    "AZURE_TENANT_ID",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GCLOUD_*",
    "CLOUDSDK_*",
    "KUBECONFIG",
    "DOCKER_AUTH_CONFIG",
    "NPM_CONFIG__AUTH*",
    "PIP_INDEX_URL",
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "GNUPGHOME",
    "DBUS_SESSION_BUS_ADDRESS",
    "KRB5CCNAME",
    "XDG_RUNTIME_DIR",
    "GNOME_KEYRING_*",
    "KEYRING_*",
    "VAULT_*",
    "OP_SESSION_*",
    "CONCH_SERVE_TOKEN",
    "CONCH_API_KEY",
)


def _matches(name: str, patterns: Iterable[str]) -> bool:
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern.upper()) for pattern in patterns)


def is_secret(name: str) -> bool:
    """True when the variable ``name`` looks like it holds a credential or reaches one."""
    return _matches(name, SECRET_PATTERNS)


def contained_environment(
    environ: Mapping[str, str], pass_env: Iterable[str] = ()
) -> dict[str, str]:
    """The variables of ``environ`` a contained command sees: those ``ALLOWED`` or listed in
    ``pass_env`` (names or patterns), without secrets unless ``pass_env`` names one exactly."""
    extra = tuple(pass_env)
    exact = set(extra)
    kept: dict[str, str] = {}
    for name, value in environ.items():
        if name in exact or (_matches(name, ALLOWED + extra) and not is_secret(name)):
            kept[name] = value
    return kept


def scrubbed_environment(
    environ: Mapping[str, str], pass_env: Iterable[str] = (), *, scrub: bool = True
) -> dict[str, str]:
    """``environ`` without the variables that look like secrets (``is_secret``), except
    those ``pass_env`` lists (names or patterns); all of it when ``scrub`` is False."""
    if not scrub:
        return dict(environ)
    extra = tuple(pass_env)
    return {
        name: value
        for name, value in environ.items()
        if not is_secret(name) or name in extra or _matches(name, extra)
    }
