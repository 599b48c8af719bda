"""benchmarks/ is held to the same size limit as src/: no module over 500 lines, experiments
included, so no runner grows into a notebook."""

from __future__ import annotations

from pathlib import Path

from test_layers import MAX_LINES

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def long_modules(root: Path) -> dict[str, int]:
    """The Python files under ``root`` over MAX_LINES lines, with their lengths."""
    return {
        str(path.relative_to(root.parent)): n
        for path in root.rglob("*.py")
        if ".work" not in path.parts
        and (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }


def test_no_benchmark_module_is_over_500_lines() -> None:
    assert long_modules(BENCHMARKS) == {}


def test_the_size_check_finds_a_long_module(tmp_path: Path) -> None:
    root = tmp_path / "benchmarks"
    (root / "speed").mkdir(parents=True)
    (root / "speed" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1), encoding="utf-8")
    (root / "short.py").write_text("x = 1\n" * MAX_LINES, encoding="utf-8")
    assert long_modules(root) == {"benchmarks/speed/long.py": MAX_LINES + 1}
