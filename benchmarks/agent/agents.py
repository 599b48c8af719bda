"""The agents under test: how each one's driver is started inside the sandbox.

Each agent is a driver script (``drivers/``) run by a Python that has the agent installed:
conch's own interpreter for conch (and the harness's stand-ins), a venv per peer made by
``setup_peers.sh`` for the others. The driver reads its job from ``BENCH_SPEC`` and prints
one JSON result line (``drivers/protocol.py``).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DRIVERS = HERE / "drivers"
DEFAULT_AGENTS = ("conch", "smolagents-toolcalling", "smolagents-code", "llm")
# conch as it is by default (``auto``: JSON steps on a llama.cpp server), and with each way
# of calling tools forced (``ai.tool_calls``), to measure which wins on this model.
CONCH_VARIANTS = {
    "conch": ("auto",),
    "conch-native": ("native",),
    "conch-json": ("json",),
    "conch-core": ("auto", "core"),  # fewer tools (conch_driver.CORE_LEFT_OUT, no plan/datetime)
    "conch-steps": ("auto", "steps"),  # one action of the instruction per turn
    # evaluate left out, as when no sandbox could start inside the harness's own
    "conch-noeval": ("auto", "noeval"),
    # ``do`` offered first: steps said in plain language, acted on by the one-shot pipeline
    "conch-act": ("auto", "act"),
    "conch-act-only": ("auto", "act-only"),  # do, without bash and evaluate
    "conch-act-first": ("auto", "act-first"),  # each instruction goes to do first
}
STAND_INS = ("oracle", "noop")  # no model: the harness's own checks
ALL_AGENTS = (
    *DEFAULT_AGENTS,
    "conch-native",
    "conch-json",
    "conch-core",
    "conch-steps",
    "conch-noeval",
    "conch-act",
    "conch-act-only",
    "conch-act-first",
    *STAND_INS,
)
_COMMON = (DRIVERS / "protocol.py",)
_PEER_TOOLS = DRIVERS / "peer_tools.py"


class AgentUnavailable(RuntimeError):
    """The agent cannot run here (its venv or its API is missing)."""


@dataclass(frozen=True, slots=True)
class Agent:
    """How to start one agent's driver, and what its results depend on.

    ``sources`` are hashed into the cache key, so a change to the driver (or, for conch, to
    conch itself) runs the agent afresh. ``skip`` names the home directory's top-level entries
    the agent uses for its own config and caches, left out of the recorded tree.
    """

    name: str
    command: tuple[str, ...]
    sources: tuple[Path, ...]
    env: dict[str, str] = field(default_factory=dict)
    ro_binds: tuple[str, ...] = ()
    skip: tuple[str, ...] = (".config", ".cache", ".local", ".llm-bench")
    uses_model: bool = True


def peers_dir() -> Path:
    """Where ``setup_peers.sh`` puts the peers' venvs."""
    named = os.environ.get("CONCH_AGENT_PEERS")
    if named:
        return Path(named)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "conch-bench" / "agent-peers"


def _venv_python(venv: Path) -> str:
    python = venv / "bin" / "python"
    if not python.exists():
        raise AgentUnavailable(f"{python} not found: run benchmarks/agent/setup_peers.sh")
    return str(python)


def _binds(*paths: Path | str) -> tuple[str, ...]:
    """Paths the driver's process reads (bound back in when they lie under /tmp or /home)."""
    out = {str(Path(p)) for p in paths}
    out.add(os.path.realpath(sys.base_prefix))
    return tuple(sorted(out))


def make_agent(name: str, peers: Path | None = None) -> Agent:
    """The agent called ``name``, or AgentUnavailable saying why it cannot run."""
    peers = peers or peers_dir()
    if name in CONCH_VARIANTS:
        if importlib.util.find_spec("conch") is None:
            raise AgentUnavailable("conch is not installed in this Python")
        import conch

        try:
            conch.Session  # type: ignore[attr-defined]  # noqa: B018
        except (AttributeError, ImportError) as exc:
            raise AgentUnavailable(f"conch.Session is not available yet ({exc})") from None
        driver = DRIVERS / "conch_driver.py"
        return Agent(
            name,
            (sys.executable, str(driver), *CONCH_VARIANTS[name]),
            sources=(driver, *_COMMON, ROOT / "src" / "conch"),
            env={"CONCH_DAEMON": "0"},
            ro_binds=_binds(sys.prefix, ROOT, DRIVERS),
        )
    if name in ("smolagents-toolcalling", "smolagents-code"):
        venv = peers / "smolagents"
        driver = DRIVERS / "smolagents_driver.py"
        style = "code" if name.endswith("code") else "toolcalling"
        return Agent(
            name,
            (_venv_python(venv), str(driver), style),
            sources=(driver, _PEER_TOOLS, *_COMMON),
            ro_binds=_binds(venv, DRIVERS),
        )
    if name == "llm":
        venv = peers / "llm"
        driver = DRIVERS / "llm_driver.py"
        return Agent(
            name,
            (_venv_python(venv), str(driver)),
            sources=(driver, _PEER_TOOLS, *_COMMON),
            env={"LLM_USER_PATH": "/home/bench/.llm-bench"},
            ro_binds=_binds(venv, DRIVERS),
        )
    if name in STAND_INS:
        driver = DRIVERS / "oracle_driver.py"
        flags = ("--noop",) if name == "noop" else ()
        return Agent(
            name,
            (sys.executable, str(driver), *flags),
            sources=(driver, *_COMMON, HERE / "tasks.py"),
            ro_binds=_binds(sys.prefix, ROOT, DRIVERS),
            uses_model=False,
        )
    raise AgentUnavailable(f"unknown agent {name!r}; choose from {', '.join(ALL_AGENTS)}")
