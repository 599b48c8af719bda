"""What works on this machine and what is missing: the checks behind ``conch doctor``.

``diagnose(environ, cwd)`` returns a ``Report``, one ``Check`` per thing a request may need:
the engine and the model file of the embedded model, the model service, the sandbox of dry
runs, the config files, the keyring and the provider. Each says whether it works, whether the
current settings need it, and what to do when it does not; the report fails when something the
settings need is broken. Nothing here prints: front ends render the report.

A diagnosis changes nothing. The embedded model is not assembled (an absent one is "not
assembled yet"; an assembled one is hashed, about a second for its 1.1 GB), the model service
is neither started nor stopped, and no request reaches a model: an OpenAI-compatible server is
only asked for its ``/models``. When the settings cannot be loaded, the other checks assume
the defaults. The checks of the model itself are in ``conch.diagnose.model``, the
``Check`` and ``Report`` data in ``conch.diagnose.report``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from conch.config.credentials import keyring_backend
from conch.config.paths import Paths
from conch.config.settings import (
    Settings,
    config_path,
    find_overlay,
    is_trusted,
    load_settings,
    read_yaml_mapping,
    validate_file_data,
)
from conch.diagnose.model import check_engine, check_model_file, check_provider
from conch.diagnose.report import TIMEOUT_S, Check, Report, first_line, one_line
from conch.errors import ConchError, ConfigError

__all__ = ["Check", "Report", "diagnose"]


def diagnose(
    environ: Mapping[str, str],
    cwd: Path,
    paths: Paths | None = None,
    timeout: float = TIMEOUT_S,
) -> Report:
    """Check everything a request in ``cwd`` may need, with the settings ``environ`` gives."""
    paths = paths or Paths.default()
    files, settings = check_settings(environ, cwd, paths)
    local = settings.ai.provider == "local"
    engine = check_engine(settings, needed=local)
    model = check_model_file(settings, paths.cache_dir, needed=local)
    return Report(
        (
            engine,
            model,
            check_service(settings, paths, environ, timeout),
            check_sandbox(settings, environ),
            *files,
            check_keyring(settings, environ),
            check_provider(settings, environ, engine, model, timeout),
        )
    )


# -- config files -----------------------------------------------------------------------------


def check_settings(
    environ: Mapping[str, str], cwd: Path, paths: Paths
) -> tuple[list[Check], Settings]:
    """The user config file and the project overlay, each valid or its error, and the settings
    they make with the environment (the defaults when they cannot be loaded)."""
    checks = [check_config_file(environ, paths)]
    overlay = check_overlay(environ, cwd, paths)
    if overlay is not None:
        checks.append(overlay)
    try:
        return checks, load_settings(environ, paths, cwd).settings
    except (ConchError, OSError) as exc:
        if not any(check.broken for check in checks):  # the files are fine: the environment
            checks.append(
                Check(
                    "environment",
                    False,
                    f"{one_line(str(exc))}; the other checks assume the defaults",
                    fix="fix or unset the variable (`conch help config` lists them)",
                )
            )
        return checks, Settings()


def check_config_file(environ: Mapping[str, str], paths: Paths) -> Check:
    """The user config file: absent (the defaults apply), valid, or its first error."""
    path = config_path(environ, paths)
    facts: dict[str, Any] = {"path": str(path), "exists": path.is_file()}
    if not path.is_file():
        if environ.get("CONCH_CONFIG"):
            return Check(
                "config",
                False,
                f"CONCH_CONFIG names {path}, which does not exist",
                fix="create it, or unset CONCH_CONFIG",
                facts=facts,
            )
        return Check("config", True, f"{path}: none, the defaults apply", facts=facts)
    try:
        validate_file_data(Settings, read_yaml_mapping(path), path)
    except ConfigError as exc:
        return Check(
            "config",
            False,
            f"{one_line(str(exc))}; the other checks assume the defaults",
            fix="fix the file (`conch help config` lists every key)",
            facts={**facts, "valid": False, "error": str(exc)},
        )
    return Check("config", True, f"{path}: valid", facts={**facts, "valid": True})


def check_overlay(environ: Mapping[str, str], cwd: Path, paths: Paths) -> Check | None:
    """The project's ``.conch.yaml``: none, valid, or its error (needed only once trusted:
    an overlay not trusted yet is not used)."""
    home = Path(environ.get("HOME") or Path.home())
    overlay = find_overlay(cwd, home)
    if overlay is None:
        return Check("project config", True, "no .conch.yaml here or above", facts={"path": None})
    if overlay.resolve() == config_path(environ, paths).resolve():
        return None
    facts: dict[str, Any] = {"path": str(overlay), "trusted": False}
    try:
        trusted = is_trusted(paths, overlay)
        facts["trusted"] = trusted
        validate_file_data(Settings, read_yaml_mapping(overlay, "project config"), overlay)
    except (ConfigError, OSError) as exc:
        error = str(exc) if isinstance(exc, ConfigError) else f"cannot read {overlay}: {exc}"
        used = "" if facts["trusted"] else " (not trusted yet, so not used)"
        return Check(
            "project config",
            False,
            f"{one_line(error)}{used}",
            needed=bool(facts["trusted"]),
            fix="fix the file (`conch help config`)",
            facts={**facts, "valid": False, "error": error},
        )
    trust = "trusted" if facts["trusted"] else "not trusted yet, so not used until you agree"
    return Check(
        "project config", True, f"{overlay}: valid, {trust}", facts={**facts, "valid": True}
    )


def check_service(
    settings: Settings, paths: Paths, environ: Mapping[str, str], timeout: float = TIMEOUT_S
) -> Check:
    """The warm model service: running (and what it holds), not running, or not used."""
    if settings.ai.provider != "local":
        detail = f"not used (ai.provider is {settings.ai.provider})"
        return Check("model service", True, detail, needed=False, facts={"running": False})
    if not settings.daemon.enabled:
        detail = "off (daemon.enabled is false): each request loads the model itself"
        return Check("model service", True, detail, needed=False, facts={"running": False})
    from conch.daemon.client import service_status
    from conch.daemon.location import Location

    location = Location.default(paths, environ)
    facts: dict[str, Any] = {"socket": str(location.socket), "running": False}
    try:
        status = service_status(location, timeout=timeout)
    except (ConchError, OSError) as exc:
        return Check(
            "model service",
            False,
            first_line(exc),
            fix="`conch daemon stop`; the next request starts it again",
            facts=facts,
        )
    if status is None:
        detail = f"not running; the next request starts it (socket {location.socket})"
        return Check("model service", True, detail, facts=facts)
    facts.update(running=True, pid=status.get("pid"), loaded=bool(status.get("loaded")))
    state = "model loaded" if status.get("loaded") else "model not loaded yet"
    detail = f"running, pid {status.get('pid')} (conch {status.get('version')}), {state}"
    return Check("model service", True, detail, facts=facts)


# -- the sandbox and the keyring ------------------------------------------------------------


def check_sandbox(settings: Settings, environ: Mapping[str, str]) -> Check:
    """Which bubblewrap dry runs use, and whether it runs ``true`` in a sandbox here."""
    from conch.execute.sandbox import bwrap_version, find_sandbox

    sandbox = find_sandbox(environ)
    needed = settings.generation.dry_run
    facts: dict[str, Any] = {"path": sandbox.path, "source": sandbox.source}
    if sandbox.usable and sandbox.path is not None:
        version = bwrap_version(sandbox.path)
        facts.update(works=True, version=version)
        found = ", ".join(part for part in (f"from {sandbox.source}", version) if part)
        detail = f"{sandbox.path} ({found}) runs `true` in a sandbox"
        return Check("sandbox", True, detail, needed, facts=facts)
    off = "" if needed else "; dry runs are off (generation.dry_run: false)"
    return Check(
        "sandbox",
        False,
        f"{sandbox.error}; commands are not tried before you see them{off}",
        needed,
        fix=f"{sandbox.fix}; or turn dry runs off (generation.dry_run: false)",
        facts={**facts, "works": False, "error": sandbox.error},
    )


def check_keyring(settings: Settings, environ: Mapping[str, str]) -> Check:
    """Whether a keyring backend is available; needed when the provider takes a key that the
    environment does not hold."""
    ai = settings.ai
    variable = ai.azure_api_key_env if ai.provider == "azure" else ai.api_key_env
    official = ai.provider == "openai" and _is_openai(ai.base_url)
    needed = (ai.provider == "azure" or official) and not environ.get(variable)
    name, available = keyring_backend()
    facts = {"backend": name, "available": available}
    if available:
        return Check("keyring", True, f"{name}", needed, facts=facts)
    where = f"and {variable} is not set" if needed else "keys come from the environment only"
    return Check(
        "keyring",
        False,
        f"no backend ({name}), {where}",
        needed,
        fix=f"export {variable}=..., or install a keyring backend",
        facts=facts,
    )


def _is_openai(base_url: str | None) -> bool:
    """Whether ``ai.base_url`` is OpenAI's own API (the default), which needs a key."""
    return (
        urlsplit(base_url or "https://api.openai.com").hostname or ""
    ).lower() == "api.openai.com"
