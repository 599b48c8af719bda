"""The doctor's checks of the model: the engine and the model file of the embedded model, and
whether the configured provider can answer (``conch.diagnose.doctor`` runs them)."""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from conch.config.settings import Settings
from conch.diagnose.report import TIMEOUT_S, Check, first_line, size_text
from conch.errors import ConfigError

INSTALL_LOCAL = "pip install 'conch[local]'"
_BUFFER = 8 * 1024 * 1024


def check_engine(settings: Settings, needed: bool) -> Check:
    """Whether the llama.cpp engine ``ai.local.engine`` selects can be imported, and its
    version."""
    from conch.providers.local.engines import engine_name

    name = engine_name(settings.ai.local.engine)
    module, distribution = (
        ("llama_cpp", "llama-cpp-python") if name == "llama-cpp-python" else ("xllamacpp", name)
    )
    facts: dict[str, Any] = {"engine": name}
    try:
        importlib.import_module(module)
    except Exception as exc:  # ImportError, or its native library failing to load
        install = INSTALL_LOCAL if name == "xllamacpp" else "pip install llama-cpp-python"
        return Check(
            "engine",
            False,
            f"{name} cannot be imported ({first_line(exc)}){_unused(settings, needed)}",
            needed,
            fix=install,
            facts={**facts, "importable": False},
        )
    try:
        version = metadata.version(distribution)
    except metadata.PackageNotFoundError:
        version = "unknown version"
    facts.update(importable=True, version=version)
    return Check("engine", True, f"{name} {version}", needed, facts=facts)


def check_model_file(settings: Settings, cache_dir: Path, needed: bool) -> Check:
    """The GGUF the local provider loads: ``ai.local.model_path``, or the embedded model,
    checked against its sha256 when assembled and never assembled here."""
    from conch.providers.local import model_files

    unused = _unused(settings, needed)
    if settings.ai.local.model_path:
        path = Path(settings.ai.local.model_path).expanduser()
        facts: dict[str, Any] = {"path": str(path), "source": "ai.local.model_path"}
        if not path.is_file():
            return Check(
                "model file",
                False,
                f"ai.local.model_path names {path}, which does not exist{unused}",
                needed,
                fix="fix the path, or unset it to use the embedded model",
                facts=facts,
            )
        size = path.stat().st_size
        if not _is_gguf(path):
            return Check(
                "model file",
                False,
                f"{path} is not a GGUF file{unused}",
                needed,
                fix="point ai.local.model_path at a GGUF model",
                facts={**facts, "size": size},
            )
        detail = f"{path} ({size_text(size)}, from ai.local.model_path)"
        return Check("model file", True, detail, needed, facts={**facts, "size": size})
    parts = model_files.EMBEDDED
    dest = cache_dir / "models" / parts.filename
    facts = {"path": str(dest), "source": "embedded", "assembled": dest.is_file()}
    if not dest.is_file():
        try:
            model_files.find_parts(parts)
        except ConfigError as exc:
            return Check(
                "model file", False, f"{exc}{unused}", needed, fix=INSTALL_LOCAL, facts=facts
            )
        detail = (
            f"not assembled yet: the first request (or `conch daemon start`) assembles "
            f"{dest} ({size_text(parts.size)}) from the installed parts"
        )
        return Check("model file", True, detail, needed, facts=facts)
    try:
        size, digest = dest.stat().st_size, sha256_of(dest)
    except OSError as exc:
        return Check(
            "model file",
            False,
            f"cannot read {dest}: {first_line(exc)}{unused}",
            needed,
            fix=f"delete {dest}; the next request assembles it again",
            facts=facts,
        )
    facts.update(size=size, sha256=digest, expected_sha256=parts.sha256)
    if digest != parts.sha256:
        return Check(
            "model file",
            False,
            f"{dest} is corrupt: sha256 {digest[:16]}..., expected {parts.sha256[:16]}...",
            needed,
            fix=f"delete {dest}; the next request assembles it again",
            facts=facts,
        )
    detail = f"{dest} ({size_text(size)}), sha256 {digest[:16]}... verified"
    return Check("model file", True, detail, needed, facts=facts)


def sha256_of(path: Path) -> str:
    """The sha256 of a file's bytes, read in large blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as src:
        while block := src.read(_BUFFER):
            digest.update(block)
    return digest.hexdigest()


def check_provider(
    settings: Settings,
    environ: Mapping[str, str],
    engine: Check,
    model: Check,
    timeout: float = TIMEOUT_S,
) -> Check:
    """Whether ``ai.provider`` can answer: the engine and model file for ``local``, a quick
    ``GET /models`` for an OpenAI-compatible server or Azure."""
    from conch.providers.base import is_builtin, provider_names

    ai = settings.ai
    name = ai.provider
    if name not in provider_names():
        known = ", ".join(provider_names())
        return Check(
            "provider",
            False,
            f"unknown provider '{name}' (known: {known})",
            fix="set ai.provider to one of them",
            facts={"provider": name},
        )
    facts: dict[str, Any] = {"provider": name}
    if not is_builtin(name):
        return Check("provider", True, f"{name}: registered by a plugin, not checked", facts=facts)
    if name == "local":
        ok = engine.ok and model.ok
        which = "the embedded model" if model.facts.get("source") == "embedded" else "your model"
        detail = f"local: {which} through {engine.facts.get('engine')}"
        if not ok:
            detail = "local: needs the engine and the model file above"
        return Check("provider", ok, detail, fix="see the engine and model file lines", facts=facts)
    if name == "scripted":
        return Check("provider", True, f"scripted: {len(ai.script)} replies", facts=facts)
    if name == "openai":
        from conch.providers.openai import DEFAULT_BASE_URL

        base = (ai.base_url or DEFAULT_BASE_URL).rstrip("/")
        return _reach(f"{base}/models", ai.api_key_env, environ, timeout, azure=False)
    if not ai.azure_endpoint or not ai.azure_deployment:
        return Check(
            "provider",
            False,
            "azure: needs ai.azure_endpoint and ai.azure_deployment",
            fix="set AZURE_OPENAI_ENDPOINT and AZURE_OPENAI_DEPLOYMENT (or the ai.* keys)",
            facts=facts,
        )
    url = f"{ai.azure_endpoint.rstrip('/')}/openai/models?api-version={ai.azure_api_version}"
    return _reach(url, ai.azure_api_key_env, environ, timeout, azure=True)


def _reach(
    url: str, variable: str, environ: Mapping[str, str], timeout: float, azure: bool
) -> Check:
    """One GET of ``url`` with the provider's key: reachable, refused, or why not."""
    import httpx

    from conch.config.credentials import lookup_secret, redact

    key = lookup_secret(variable, environ)
    headers = {} if not key else {"api-key": key} if azure else {"Authorization": f"Bearer {key}"}
    facts: dict[str, Any] = {"provider": "azure" if azure else "openai", "url": url}
    try:
        response = httpx.get(url, headers=headers, timeout=timeout, follow_redirects=True)
    except (httpx.HTTPError, httpx.InvalidURL, ValueError) as exc:
        reason = redact(first_line(exc), [key])
        where = "AZURE_OPENAI_ENDPOINT" if azure else "ai.base_url or OPENAI_BASE_URL"
        return Check(
            "provider",
            False,
            f"cannot reach {url}: {reason}",
            fix=f"check that the server runs and can be reached, or fix {where}",
            facts={**facts, "reachable": False},
        )
    status = response.status_code
    facts.update(reachable=True, http_status=status)
    if status in (401, 403):
        sent = "refused the key" if key else f"wants a key, and {variable} is not set"
        return Check(
            "provider",
            False,
            f"{url} {sent} (HTTP {status})",
            fix=f"set {variable}, or store it in the keyring (service conch, user {variable})",
            facts=facts,
        )
    models = _model_count(response)
    if models is not None:
        facts["models"] = models
    listed = f", {models} models" if models is not None else ""
    return Check("provider", True, f"{url} answered (HTTP {status}{listed})", facts=facts)


def _model_count(response: Any) -> int | None:
    try:
        data = response.json().get("data")
    except (ValueError, AttributeError):
        return None
    return len(data) if isinstance(data, list) else None


def _unused(settings: Settings, needed: bool) -> str:
    return "" if needed else f"; not used (ai.provider is {settings.ai.provider})"


def _is_gguf(path: Path) -> bool:
    try:
        with path.open("rb") as src:
            return src.read(4) == b"GGUF"
    except OSError:
        return False
