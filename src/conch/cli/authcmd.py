"""``conch auth set|show|remove PROVIDER``: a provider's API key in the system keyring.

A key is looked up in the environment first, then in the keyring (service ``conch``, user
the name of the variable the settings give for it, ``OPENAI_API_KEY`` by default). ``set``
reads the key without echo (or from piped stdin) and keeps it in the keyring; ``show`` says
where the key comes from and prints it masked, never whole; ``remove`` deletes it.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from conch.cli.configflag import add_config_flag
from conch.cli.environment import Environment
from conch.cli.parsing import USAGES, Parser
from conch.cli.status import ExitStatus
from conch.errors import ConfigError, UsageError

if TYPE_CHECKING:
    from conch.config.settings import AISettings, Settings

ACTIONS = ("set", "show", "remove")
_KEYLESS = ("local", "scripted")


def build_auth_parser() -> argparse.ArgumentParser:
    """The parser of ``conch auth``."""
    p = Parser(
        prog="conch auth",
        usage=USAGES["auth"],
        description="Keep a provider's API key in the system keyring, show where it comes "
        "from, or remove it.",
    )
    p.add_argument("action", choices=ACTIONS, help="what to do with the key")
    p.add_argument(
        "provider", metavar="PROVIDER", help="openai, azure, or a name in the models section"
    )
    add_config_flag(p)
    p.add_argument("--traceback", action="store_true", help="show tracebacks on errors")
    return p


def run_auth(args: argparse.Namespace, env: Environment) -> int:
    """Dispatch one ``conch auth`` action."""
    from conch.config.paths import Paths
    from conch.config.settings import load_settings

    # No trust question here: an overlay not trusted yet is ignored, as in scripts.
    settings = load_settings(env.environ, Paths.default(), env.cwd).settings
    variable = key_variable(args.provider, settings)
    if args.action == "set":
        return _set(args.provider, variable, env)
    if args.action == "remove":
        return _remove(args.provider, variable, env)
    return _show(args.provider, variable, env)


def key_variable(name: str, settings: Settings) -> str:
    """The name the key of provider (or named model) ``name`` goes by: its environment
    variable, and its user name in the keyring. UsageError for a provider without keys."""
    if name in settings.models:
        ai = settings.models[name]
        if ai.provider in _KEYLESS:
            raise UsageError(f"model {name} uses the {ai.provider} provider, which needs no key")
        return ai.azure_api_key_env if ai.provider == "azure" else ai.api_key_env
    if name == "openai":
        return settings.ai.api_key_env
    if name == "azure":
        return settings.ai.azure_api_key_env
    if name in _KEYLESS:
        raise UsageError(f"the {name} provider needs no API key")
    named = "".join(f", {m}" for m in sorted(settings.models))
    raise UsageError(f"unknown provider '{name}'; use openai, azure{named}")


def mask(secret: str) -> str:
    """Enough of ``secret`` to recognise it, never enough to use it."""
    if len(secret) < 20:
        return f"******** ({len(secret)} characters)"
    return f"{secret[:3]}…{secret[-4:]} ({len(secret)} characters)"


def _show(name: str, variable: str, env: Environment) -> int:
    from conch.config.credentials import keyring_secret

    from_env = env.environ.get(variable) or None
    stored = keyring_secret(variable)
    out = env.stdout
    if from_env is not None:
        out.write(f"{name}: {mask(from_env)}, from the environment variable {variable}\n")
        if stored is not None:
            out.write(f"  (the keyring also holds one, {mask(stored)}; the environment wins)\n")
        return ExitStatus.OK
    if stored is not None:
        out.write(
            f"{name}: {mask(stored)}, from the system keyring (service conch, user {variable})\n"
        )
        return ExitStatus.OK
    out.write(f"{name}: no key; set {variable}, or store one with: conch auth set {name}\n")
    return ExitStatus.ERROR


def _set(name: str, variable: str, env: Environment) -> int:
    from conch.config.credentials import keyring_backend, store_secret

    backend, available = keyring_backend()
    if not available:  # before the key is asked for: it could not be kept
        raise ConfigError(
            f"no system keyring to keep the key in ({backend}); set {variable} in the "
            "environment instead, or install a keyring backend (`conch doctor` shows the keyring)"
        )
    secret = _read_secret(env, f"API key for {name} ({variable}): ")
    if not secret:
        raise UsageError("no key given; nothing was saved")
    store_secret(variable, secret)
    env.stdout.write(
        f"{name}: saved {mask(secret)} in the system keyring (service conch, user {variable})\n"
    )
    if env.environ.get(variable):
        env.stderr.write(
            f"conch: note: {variable} is set in this environment, and it wins over the keyring\n"
        )
    return ExitStatus.OK


def _remove(name: str, variable: str, env: Environment) -> int:
    from conch.config.credentials import delete_secret

    if delete_secret(variable):
        env.stdout.write(f"{name}: removed the key from the system keyring\n")
    else:
        env.stdout.write(f"{name}: no key in the system keyring; nothing to remove\n")
    if env.environ.get(variable):
        env.stderr.write(f"conch: note: {variable} is still set in this environment\n")
    return ExitStatus.OK


def ask_for_missing_key(ai: AISettings, env: Environment) -> None:
    """Before a provider that needs an API key is opened without one: ask for it on the
    terminal (without echo) and keep it in the system keyring, or for this run only when the
    keyring cannot keep it (said on stderr). Without a terminal nothing is asked; the
    provider's own error then says how to give a key."""
    if ai.provider not in ("openai", "azure"):
        return
    from conch.providers.openai import missing_key

    variable = missing_key(ai)
    if variable is None or env.open_terminal() is None:
        return
    from conch.config.credentials import remember_secret, store_secret

    env.stderr.write(
        f"conch: the {ai.provider} provider needs an API key, and {variable} is not set\n"
    )
    secret = _terminal_secret(env, f"API key for {ai.provider} ({variable}, empty to stop): ")
    if not secret:
        return
    try:
        store_secret(variable, secret)
    except ConfigError as exc:
        remember_secret(variable, secret)
        env.stderr.write(f"conch: warning: {exc}; the key is kept for this run only\n")
        return
    env.stderr.write(
        f"conch: saved {mask(secret)} in the system keyring (service conch, user {variable}); "
        f"`conch auth remove {ai.provider}` deletes it\n"
    )


def _terminal_secret(env: Environment, question: str) -> str:
    """A key typed on the terminal, without echo when it is this process's own."""
    if env.stdin is sys.stdin:
        import getpass

        try:
            return getpass.getpass(question, stream=env.stderr).strip()
        except EOFError:
            return ""
    terminal = env.open_terminal()
    if terminal is None:
        return ""
    env.stderr.write(question)
    env.stderr.flush()
    return terminal.readline().strip()


def _read_secret(env: Environment, question: str) -> str:
    """The key: typed on the terminal without echo, or the first line of piped stdin."""
    if not env.stdin_isatty:
        return env.stdin.readline().strip()
    if env.stdin is not sys.stdin and env.open_terminal() is None:
        raise UsageError("no terminal to type the key on; pipe it in: conch auth set NAME < file")
    return _terminal_secret(env, question)
