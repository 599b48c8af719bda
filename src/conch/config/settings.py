"""Settings: YAML config files, environment and flags, merged in a fixed precedence.

Precedence, highest first: command-line flags > environment > trusted project overlay
(``.conch.yaml``) > user config file > built-in defaults. Secrets are never part of settings:
the config names the environment variable that holds a key, and the key itself is looked up at
the moment a provider needs it (see ``conch.config.credentials``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from conch.config.agent import AgentSettings
from conch.config.mcpservers import MCP_SERVER_NAME, McpServerSettings
from conch.config.paths import Paths
from conch.config.permissions import PermissionSettings
from conch.config.problems import file_problems, listing, value_problems
from conch.config.shell import ShellSettings
from conch.errors import ConfigError

DEFAULT_META_PROMPT = (
    "You are conch, an expert at the Unix shell. Translate the user's request into exactly one "
    "shell command for the user's platform described below. Reply with the command only, on one "
    "line: no explanation, no markdown, no code fences. Prefer simple, standard, non-destructive "
    "commands; never invent files or options."
)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class AllowedProgram(_Model):
    """One program a prompt config allows (an entry of its ``tools`` list, the name the config
    file format keeps): its name, the instructions given to the model about it, and whether a
    command using it must be explained before it runs. Not an agent tool (``conch.tools``)."""

    name: str = Field(min_length=1)
    config: str = ""
    force_explain: bool | None = None


class PromptConfig(_Model):
    """A meta prompt and the tools it allows (an empty list allows any program)."""

    meta_prompt: str = DEFAULT_META_PROMPT
    tools: list[AllowedProgram] = Field(default_factory=list)
    # With tools listed, safe mode runs one program at a time unless this allows pipes,
    # lists and file redirections (which conch runs itself, each program checked).
    allow_pipelines: bool = False

    @property
    def pipelines(self) -> bool:
        """Whether safe mode may run pipelines, lists and redirections for this config."""
        return not self.tools or self.allow_pipelines

    def to_yaml_dict(self) -> dict[str, Any]:
        """The config as plain data, omitting ``force_explain`` where it is unset."""
        data: dict[str, Any] = {
            "meta_prompt": self.meta_prompt,
            "tools": [t.model_dump(exclude_none=True) for t in self.tools],
        }
        if self.allow_pipelines:
            data["allow_pipelines"] = True
        return data


class LocalSettings(_Model):
    """The embedded llama.cpp engine."""

    model_path: str | None = None
    engine: Literal["auto", "xllamacpp", "llama-cpp-python"] = "auto"
    n_ctx: int = Field(default=4096, ge=256)
    n_threads: int | None = Field(default=None, ge=1)


class AISettings(_Model):
    """Which model answers, and how to reach it."""

    provider: str = "local"
    model: str | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    azure_endpoint: str | None = None
    azure_deployment: str | None = None
    azure_api_version: str = "2024-10-21"
    azure_api_key_env: str = "AZURE_OPENAI_API_KEY"
    timeout: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=3, ge=0)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    # How the agent's model calls tools: ``native`` tool calls, ``json`` steps (one JSON object
    # per reply, constrained by a schema where the server honours one), or ``auto``: native
    # for OpenAI and Azure, JSON steps for the embedded model and other servers (small local
    # models rarely emit native calls; measured in benchmarks/agent).
    tool_calls: Literal["auto", "native", "json"] = "auto"
    # The model's context window in tokens (None: asked of the server once, or the embedded
    # model's ``local.n_ctx``; ``conch.providers.window``).
    context_window: int | None = Field(default=None, ge=256)
    local: LocalSettings = Field(default_factory=LocalSettings)

    @property
    def model_in_use(self) -> str | None:
        """The model that answers: ``model``, or the local model file, if either is set."""
        return self.model or (self.local.model_path if self.provider == "local" else None)

    script: list[str] = Field(default_factory=list)


class ExecutionSettings(_Model):
    """How commands run."""

    timeout_seconds: float = Field(default=3600.0, gt=0)
    shell: str | None = None
    # Variables (names or patterns) a command may see besides the usual ones: added to the
    # allowlist of a contained command and exempt from scrubbing (conch help policy).
    pass_env: list[str] = Field(default_factory=list)
    # False: a command you approved sees your whole environment, secrets included.
    scrub_env: bool = True


class GenerationSettings(_Model):
    """How commands are generated (each knob measured on the accuracy benchmark)."""

    few_shot: int = Field(default=4, ge=0, le=16)
    # Worked examples every request shares (``data/shared-examples.tsv``, the first N), put
    # before the request's own: the same for every request, so the engine's prompt cache
    # keeps them and they cost nothing after the first request.
    shared_examples: int = Field(default=0, ge=0, le=200)
    documentation: int = Field(default=0, ge=0, le=4)
    program_hints: int = Field(default=0, ge=0, le=10)
    dry_run: bool = True
    dry_run_scratch: bool = True
    dry_run_timeout_s: float = Field(default=2.0, gt=0, le=30)
    candidates: int = Field(default=4, ge=1, le=8)
    sample_temperature: float = Field(default=0.8, ge=0.0, le=2.0)
    sample_when: Literal["always", "on_doubt"] = "on_doubt"
    sample_examples: Literal["same", "next"] = "same"
    brevity: float = Field(default=0.0, ge=0.0, le=10.0)
    repair: bool = True
    review: int = Field(default=3, ge=1, le=3)
    # Stop after the first answer when its dry run worked and the model finds the request at
    # least ``review_stop_score`` likely as the command's description: the other answers are
    # made only when there is doubt. Measured on the 258 clean benchmark tasks with the
    # recorded answers: the same 155 passed, 69% of requests stop after one answer
    # (benchmarks/results/accuracy-early-exit.md).
    review_stop: Literal["never", "worked"] = "worked"
    review_stop_score: float | None = Field(default=-40.0, le=0.0)
    # Or stop without that score when the first answer is the greedy command, its dry run
    # worked and the command's own log-probability (free with the generation) is at least this.
    # Measured on the same 258 tasks: the same 155 pass, and 77 requests (30%) need no score
    # (benchmarks/results/accuracy-forward-scores.md).
    review_stop_forward: float | None = Field(default=-1.0, le=0.0)


DEFAULT_SKIP_COMMANDS = ("cd", "pwd", "echo", "true", "false")


class ValidationSettings(_Model):
    """How conch checks a generated command against this machine before running it."""

    enabled: bool = True
    collect_help_text: bool = True
    collect_man_pages: bool = True
    collect_tldr: bool = True
    max_help_text_size: int = Field(default=5000, ge=200)
    validation_timeout_ms: int = Field(default=5000, ge=100)
    auto_fix: bool = False
    # The model's verdict costs a second model call over the collected help text (tens of
    # seconds of prompt evaluation for the embedded model on a small CPU): by default it is
    # asked only when the static checks found something concrete to fix.
    model_check: Literal["always", "on_issues", "never"] = "on_issues"
    show_validation_details: bool = True
    skip_commands: list[str] = Field(default_factory=lambda: list(DEFAULT_SKIP_COMMANDS))
    help_cache_ttl_days: float = Field(default=7.0, ge=0)


class ContextSettings(_Model):
    """Caps on what conch sends to the model."""

    scope_max_bytes: int = Field(default=4096, ge=256)
    peek_max_bytes: int = Field(default=16384, ge=1)
    stdin_max_bytes: int = Field(default=16384, ge=1)


class HistorySettings(_Model):
    """The NDJSON history log."""

    enabled: bool = True
    max_bytes: int = Field(default=1_000_000, ge=1024)


class DaemonSettings(_Model):
    """The warm model service that keeps the local model loaded between requests.

    Loading the embedded model and evaluating the system prompt cost seconds on every call of
    a fresh process; the service pays them once and serves later requests from memory.
    """

    enabled: bool = True
    idle_timeout_s: float = Field(default=600.0, gt=0)
    # A new service listens once the model is loaded: this covers the load.
    start_timeout_s: float = Field(default=60.0, gt=0)


class Settings(_Model):
    """Everything configurable."""

    ai: AISettings = Field(default_factory=AISettings)
    models: dict[str, AISettings] = Field(default_factory=dict)
    default_prompt: PromptConfig = Field(default_factory=PromptConfig)
    execution: ExecutionSettings = Field(default_factory=ExecutionSettings)
    generation: GenerationSettings = Field(default_factory=GenerationSettings)
    context: ContextSettings = Field(default_factory=ContextSettings)
    history: HistorySettings = Field(default_factory=HistorySettings)
    validation: ValidationSettings = Field(default_factory=ValidationSettings)
    daemon: DaemonSettings = Field(default_factory=DaemonSettings)
    shell: ShellSettings = Field(default_factory=ShellSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    permissions: PermissionSettings = Field(default_factory=PermissionSettings)
    mcp_servers: dict[Annotated[str, Field(pattern=MCP_SERVER_NAME)], McpServerSettings] = Field(
        default_factory=dict
    )


@dataclass(slots=True)
class LoadedSettings:
    """Settings plus where they came from (shown in confirmations and ``conch help config``)."""

    settings: Settings
    config_path: Path
    config_exists: bool
    overlay_path: Path | None = None
    overlay_trusted: bool = False
    sources: list[str] = field(default_factory=list)


# Environment variables that override settings, as (variable, dotted key).
ENV_OVERRIDES: tuple[tuple[str, str], ...] = (
    ("CONCH_PROVIDER", "ai.provider"),
    ("CONCH_MODEL", "ai.model"),
    ("CONCH_BASE_URL", "ai.base_url"),
    ("OPENAI_BASE_URL", "ai.base_url"),
    ("CONCH_MODEL_PATH", "ai.local.model_path"),
    ("CONCH_ENGINE", "ai.local.engine"),
    ("CONCH_TIMEOUT", "ai.timeout"),
    ("CONCH_DAEMON", "daemon.enabled"),
    ("AZURE_OPENAI_ENDPOINT", "ai.azure_endpoint"),
    ("AZURE_OPENAI_DEPLOYMENT", "ai.azure_deployment"),
    ("AZURE_OPENAI_API_VERSION", "ai.azure_api_version"),
)


def config_path(environ: Mapping[str, str], paths: Paths) -> Path:
    """The user config file: ``CONCH_CONFIG`` if set, else the platform config dir's file."""
    named = environ.get("CONCH_CONFIG")
    return Path(named).expanduser() if named else paths.config_dir / "config.yaml"


def read_yaml_mapping(path: Path, what: str = "config") -> dict[str, Any]:
    """Parse a YAML file that must hold a mapping; errors name the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{what} file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {what} file {path}: {_reason(exc)}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"{path}{where}: {problem}; fix the YAML syntax") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}:1: the {what} file must be a YAML mapping of sections")
    return data


def validate_file_data(model: type[_Model], data: Mapping[str, Any], path: Path) -> Any:
    """Validate one file's data with ``model``; the error lists every problem, each naming
    the file, the line and the key."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = file_problems(path, exc)
        raise ConfigError(listing(problems, f"{len(problems)} problems in {path}:")) from None


def deep_merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` merged into a copy of ``base``; mappings merge, everything else replaces."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def _set_dotted(data: dict[str, Any], dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    node = data
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = value


def find_overlay(cwd: Path, home: Path) -> Path | None:
    """The nearest ``.conch.yaml`` walking up from ``cwd``, stopping at ``home`` (or ``/``)."""
    current = cwd.resolve()
    home = home.resolve()
    while True:
        candidate = current / ".conch.yaml"
        if candidate.is_file():
            return candidate
        if current == home or current.parent == current:
            return None
        current = current.parent


def file_digest(path: Path) -> str:
    """sha256 of a file's bytes, used to pin trust in a project overlay."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def trusted_overlays(paths: Paths) -> dict[str, str]:
    """The trust store: overlay path -> sha256 the user agreed to."""
    store = paths.state_dir / "trusted.json"
    try:
        data = json.loads(store.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def trust_overlay(paths: Paths, overlay: Path) -> None:
    """Pin trust in ``overlay`` at its current content."""
    from conch.storage.files import atomic_write_text

    store = trusted_overlays(paths)
    store[str(overlay.resolve())] = file_digest(overlay)
    atomic_write_text(paths.state_dir / "trusted.json", json.dumps(store, indent=2) + "\n")


def is_trusted(paths: Paths, overlay: Path) -> bool:
    """True when the user trusted ``overlay`` and it has not changed since."""
    pinned = trusted_overlays(paths).get(str(overlay.resolve()))
    return pinned is not None and pinned == file_digest(overlay)


def load_settings(
    environ: Mapping[str, str],
    paths: Paths,
    cwd: Path,
    flags: Mapping[str, Any] | None = None,
    ask_trust: Callable[[Path], bool] | None = None,
) -> LoadedSettings:
    """Merge defaults, the user file, a trusted overlay, the environment and flags.

    ``flags`` maps dotted keys (``ai.provider``) to values given on the command line.
    ``ask_trust`` is called for an untrusted overlay; it returns True to trust it now.
    """
    path = config_path(environ, paths)
    merged: dict[str, Any] = {}
    sources = ["defaults"]
    exists = path.is_file()
    if environ.get("CONCH_CONFIG") and not exists:
        raise ConfigError(f"CONCH_CONFIG names {path}, which does not exist; create it or unset it")
    if exists:
        data = read_yaml_mapping(path)
        validate_file_data(Settings, data, path)
        merged = deep_merge(merged, data)
        sources.append(str(path))

    home = Path(environ.get("HOME") or Path.home())
    overlay = find_overlay(cwd, home)
    trusted = False
    if overlay is not None and overlay.resolve() != path.resolve():
        trusted = is_trusted(paths, overlay)
        if not trusted and ask_trust is not None and ask_trust(overlay):
            trust_overlay(paths, overlay)
            trusted = True
        if trusted:
            data = read_yaml_mapping(overlay, "project config")
            validate_file_data(Settings, data, overlay)
            merged = deep_merge(merged, data)
            sources.append(str(overlay))

    for var, dotted in ENV_OVERRIDES:
        value = environ.get(var)
        if value:
            _set_dotted(merged, dotted, value)
            sources.append(f"${var}")
    for dotted, value in (flags or {}).items():
        if value is not None:
            _set_dotted(merged, dotted, value)
    try:
        settings = Settings.model_validate(merged)
    except ValidationError as exc:
        problems = value_problems(exc)
        if len(problems) == 1:
            raise ConfigError(
                f"{problems[0]} (from the environment or a flag; see `conch help config`)"
            ) from None
        heading = (
            f"{len(problems)} problems in settings from the environment or flags "
            "(see `conch help config`):"
        )
        raise ConfigError(listing(problems, heading)) from None
    return LoadedSettings(
        settings=settings,
        config_path=path,
        config_exists=exists,
        overlay_path=overlay,
        overlay_trusted=trusted,
        sources=sources,
    )


def load_prompt_config(path: Path) -> PromptConfig:
    """Read a per-call prompt file (same shape as ``default_prompt``)."""
    data = read_yaml_mapping(path, "prompt")
    result: PromptConfig = validate_file_data(PromptConfig, data, path)
    return result


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc)


STARTER_CONFIG = """\
# conch configuration. Precedence: flags > environment > .conch.yaml (trusted) > this file.
# Keys are never stored here: name the environment variable that holds them, or use the
# system keyring (service "conch", user = the variable's name). See `conch help config`.
ai:
  provider: local          # local (embedded model, offline) | openai | azure
  temperature: 0.0
  # local:
  #   model_path: /path/to/other-model.gguf   # any GGUF; default is the packaged model
  #   engine: auto                            # auto | xllamacpp | llama-cpp-python
  # --- any OpenAI-compatible server (OpenAI, llama.cpp server, Ollama, vLLM, LM Studio):
  # provider: openai
  # base_url: http://127.0.0.1:8080/v1
  # model: gpt-4o-mini
  # api_key_env: OPENAI_API_KEY
  # --- Azure OpenAI:
  # provider: azure
  # azure_endpoint: https://YOUR-RESOURCE.openai.azure.com
  # azure_deployment: YOUR-DEPLOYMENT
  # azure_api_version: 2024-10-21
  # azure_api_key_env: AZURE_OPENAI_API_KEY

default_prompt:
  meta_prompt: >-
    {meta}
  # An empty tools list allows any program (every command is shown and confirmed).
  # Listing tools makes a whitelist: add them with `conch --add-prompt FILE`.
  tools: []
"""


def starter_config() -> str:
    """The text ``conch --init`` writes."""
    return STARTER_CONFIG.format(meta=DEFAULT_META_PROMPT)
