"""The accuracy harness's answers on disk: a tool's candidate per task, kept until the code
its answers depend on changes, so an interrupted run resumes where it stopped."""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchmarks.accuracy.candidate import Candidate, Task
from benchmarks.accuracy.conch_tool import ConchCandidate
from benchmarks.accuracy.generators import PROVIDER_ERROR

ROOT = Path(__file__).resolve().parents[2]


def candidate_from(data: dict[str, Any]) -> Candidate:
    """A candidate as a cache entry or a report row records it (conch's with its trials)."""
    fields = {k: data[k] for k in ("command", "raw", "seconds", "error", "refused")}
    if data.get("agent") is not None:
        from benchmarks.accuracy.agent_tool import AgentCandidate

        return AgentCandidate(**fields, agent=data["agent"])
    if data.get("trials") is not None:
        return ConchCandidate(**fields, trials=data["trials"])
    return Candidate(**fields)


# What each tool's answers depend on besides the model: a change to any of these files starts
# that tool's cache afresh, and leaves the other tools' cached answers alone.
_TOOL_SOURCES = {
    "conch": (
        "src/conch",
        "benchmarks/accuracy/conch_tool.py",
        "benchmarks/accuracy/generators.py",
        "benchmarks/accuracy/sandbox.py",
    ),
    "conch-agent": (
        "src/conch",
        "benchmarks/accuracy/agent_tool.py",
        "benchmarks/accuracy/generators.py",
        "benchmarks/accuracy/fixtures.py",
    ),
    "bare": ("benchmarks/accuracy/generators.py",),
    "bare+md": ("benchmarks/accuracy/generators.py",),
}
_PEER_SOURCES = ("benchmarks/accuracy/peers.py",)


def _sources_under(directory: Path) -> list[Path]:
    """The Python files and shipped data (prompts, worked examples) under ``directory``."""
    return [p for p in directory.rglob("*") if p.is_file() and p.suffix in (".py", ".tsv", ".yaml")]


@functools.cache
def code_fingerprint(tool: str) -> str:
    """A hash of the sources ``tool``'s answers depend on, so a code change starts afresh."""
    digest = hashlib.sha256()
    files: list[Path] = [ROOT / "benchmarks" / "accuracy" / "candidate.py"]
    if tool.startswith("conch-") and tool not in _TOOL_SOURCES:  # an ablation variant
        sources: tuple[str, ...] = (
            *_TOOL_SOURCES["conch"],
            "benchmarks/accuracy/ablation.py",
            "benchmarks/experiments/retrieval/hybrid_retrieval.py",
        )
    else:
        sources = _TOOL_SOURCES.get(tool, _PEER_SOURCES)
    for source in sources:
        path = ROOT / source
        files += sorted(_sources_under(path)) if path.is_dir() else [path]
    for path in files:
        if not path.exists():
            continue
        digest.update(path.relative_to(ROOT).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


class CandidateCache:
    """Candidates per tool and task on disk, so an interrupted run resumes where it stopped."""

    def __init__(self, directory: Path, enabled: bool) -> None:
        self.directory = directory
        self.enabled = enabled

    def _path(self, tool: str, task: Task) -> Path:
        safe = tool.replace("/", "_")
        return self.directory / f"{safe}-{code_fingerprint(tool)}" / f"{task.index}.json"

    def get(self, tool: str, task: Task) -> Candidate | None:
        path = self._path(tool, task)
        if not self.enabled or not path.exists():
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("nl") != task.nl:
            return None
        return candidate_from(data)

    def put(self, tool: str, task: Task, candidate: Candidate) -> None:
        if candidate.error and candidate.error.startswith(PROVIDER_ERROR):
            return  # the server failed: ask again when the run resumes
        path = self._path(tool, task)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {"nl": task.nl, **asdict(candidate)}
        path.write_text(json.dumps(data, ensure_ascii=False) + "\n", encoding="utf-8")
